import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { WhaleConfigSchema, loadConfig, type WhaleConfig } from '../core/config.js';
import { InputError, type InputLocation } from '../core/errors.js';
import { listDomains } from '../domains/index.js';

export interface Project {
  /** The config file, or undefined when the project was described by flags alone. */
  configFile?: string;
  root: string;
  config: WhaleConfig;
  storeDir: string;
}

/**
 * The project a command works on: `--config FILE`, else ./whale.config.json when present, else
 * one built from flags (which must then name at least the domain).
 */
export function resolveProject(values: Record<string, string | boolean | undefined>, defaults: { domain?: string; harness?: (domain: string) => string } = {}): Project {
  const explicit = typeof values.config === 'string' ? resolve(values.config) : undefined;
  const implicit = resolve('whale.config.json');
  const configFile = explicit ?? (existsSync(implicit) ? implicit : undefined);
  const flagHarness = typeof values.harness === 'string' ? resolve(values.harness) : undefined;
  if (flagHarness) checkFolder(flagHarness, { file: '(command line)', field: '--harness' });
  if (configFile) {
    const config = loadConfig(configFile);
    const root = dirname(configFile);
    // What the schema cannot know, checked before anything touches the store.
    checkDomain(config.domain.id, { file: configFile, field: 'domain.id' });
    // Only commands that run a harness (they pass a harness default) need its folder.
    if (!flagHarness && defaults.harness) checkFolder(resolve(root, config.harness), { file: configFile, field: 'harness' });
    return { configFile, root, config: { ...config, harness: resolve(root, config.harness) }, storeDir: resolve(root, config.store) };
  }
  const domain = typeof values.domain === 'string' ? values.domain : defaults.domain;
  if (!domain) throw new InputError({ file: '(command line)', field: '--domain' }, 'no whale.config.json here: name a domain with --domain (see `whale domains`)');
  checkDomain(domain, { file: '(command line)', field: '--domain' });
  const harness = flagHarness ?? defaults.harness?.(domain);
  const config = WhaleConfigSchema.parse({ name: 'cli', domain: { id: domain }, harness: harness ?? '.' });
  return { root: process.cwd(), config, storeDir: resolve(typeof values.store === 'string' ? values.store : '.whale') };
}

function checkDomain(id: string, at: InputLocation): void {
  const known = listDomains().map((d) => d.id);
  if (!known.includes(id)) throw new InputError(at, `unknown domain '${id}' (known domains: ${known.join(', ')})`);
}

function checkFolder(dir: string, at: InputLocation): void {
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    throw new InputError(at, `the harness folder ${dir} does not exist`);
  }
  if (!isDir) throw new InputError(at, `${dir} is not a folder (a harness is a folder with harness.json)`);
}

export function intFlag(values: Record<string, string | boolean | undefined>, name: string): number | undefined {
  const v = values[name];
  if (v === undefined || typeof v === 'boolean') return undefined;
  const n = Number(v);
  if (!Number.isInteger(n)) throw new InputError({ file: '(command line)', field: `--${name}` }, `must be an integer, got '${v}'`);
  return n;
}

export function numberFlag(values: Record<string, string | boolean | undefined>, name: string): number | undefined {
  const v = values[name];
  if (v === undefined || typeof v === 'boolean') return undefined;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new InputError({ file: '(command line)', field: `--${name}` }, `must be a number, got '${v}'`);
  return n;
}
