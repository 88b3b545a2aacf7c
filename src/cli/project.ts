import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { WhaleConfigSchema, loadConfig, type WhaleConfig } from '../core/config.js';
import { InputError, type InputLocation } from '../core/errors.js';
import { listDomains } from '../domains/index.js';
import { hideSecretsFromEnviron } from '../core/environSecrets.js';

export interface Project {
  /** The config file, or undefined when the project was described by flags alone. */
  configFile?: string;
  root: string;
  config: WhaleConfig;
  storeDir: string;
}

const CONFIG_NAME = 'whale.config.json';
const cli = (field: string, message: string) => new InputError({ file: '(command line)', field }, message);

/**
 * The config file a command works on, as git and dvc find theirs: `--config FILE`, else
 * $WHALE_CONFIG, else the nearest whale.config.json in the working folder or one above it.
 */
export function findConfig(values: Record<string, string | boolean | undefined>, cwd = process.cwd()): string | undefined {
  const named =
    typeof values.config === 'string'
      ? { file: resolve(cwd, values.config), where: '--config' }
      : process.env.WHALE_CONFIG
        ? { file: resolve(cwd, process.env.WHALE_CONFIG), where: 'WHALE_CONFIG' }
        : undefined;
  if (named) {
    if (!existsSync(named.file)) throw cli(named.where, `no such config file: ${named.file}`);
    return named.file;
  }
  for (let dir = resolve(cwd); ;) {
    const file = join(dir, CONFIG_NAME);
    if (existsSync(file)) return file;
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

const NO_PROJECT = `not in a WHALE project: no ${CONFIG_NAME} here or in any folder above (create one with \`whale init\`, or pass --config FILE`;

/**
 * The project a command works on: the config `findConfig` finds, else one built from flags (which
 * must then name at least the domain).
 */
export function resolveProject(
  values: Record<string, string | boolean | undefined>,
  defaults: { domain?: string; harness?: (domain: string) => string } = {},
): Project {
  const configFile = findConfig(values);
  const flagHarness = typeof values.harness === 'string' ? resolve(values.harness) : undefined;
  if (flagHarness) checkFolder(flagHarness, { file: '(command line)', field: '--harness' });
  if (configFile) {
    const config = loadConfig(configFile);
    const root = dirname(configFile);
    if (typeof values.domain === 'string' && values.domain !== config.domain.id)
      throw cli(
        '--domain',
        `'${values.domain}' conflicts with ${configFile} (domain '${config.domain.id ?? 'its own'}'): drop --domain, or run outside the project`,
      );
    // What the schema cannot know, checked before anything touches the store (a user's module or
    // data domain is checked when it loads).
    if (config.domain.id !== undefined) checkDomain(config.domain.id, { file: configFile, field: 'domain.id' });
    // Only commands that run a harness (they pass a harness default) need its folder.
    if (!flagHarness && defaults.harness) checkFolder(resolve(root, config.harness), { file: configFile, field: 'harness' });
    return {
      configFile,
      root,
      config: { ...config, harness: resolve(root, config.harness) },
      storeDir: resolve(root, typeof values.store === 'string' && values.store ? values.store : config.store),
    };
  }
  const domain = typeof values.domain === 'string' ? values.domain : defaults.domain;
  if (!domain) throw cli('--domain', `${NO_PROJECT}, or name a domain with --domain: see \`whale domains\`)`);
  checkDomain(domain, { file: '(command line)', field: '--domain' });
  const harness = flagHarness ?? defaults.harness?.(domain);
  const config = WhaleConfigSchema.parse({ name: 'cli', domain: { id: domain }, harness: harness ?? '.' });
  return { root: process.cwd(), config, storeDir: resolve(typeof values.store === 'string' ? values.store : '.whale') };
}

/** The run store of a command that reads or steers runs: `--store DIR`, else the found project's store. */
export function resolveStoreDir(values: Record<string, string | boolean | undefined>): string {
  if (typeof values.store === 'string' && values.store) return resolve(values.store);
  const configFile = findConfig(values);
  if (!configFile) throw cli('--config', `${NO_PROJECT}, or name a run store with --store DIR)`);
  return resolve(dirname(configFile), loadConfig(configFile).store);
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

/**
 * For commands that start harnesses: the API keys this config uses (and any *_API_KEY, *_TOKEN, …)
 * leave the engine's /proc/<pid>/environ, where an unconfined harness could read them; the engine
 * itself still reads them from process.env (core/environSecrets.ts).
 */
export function hideApiKeys(config: WhaleConfig): void {
  const named = [(config.backend as { apiKeyEnv?: string }).apiKeyEnv, config.search.llm?.apiKeyEnv];
  hideSecretsFromEnviron(named.filter((n): n is string => !!n));
}
