/**
 * The project's domain, whichever way whale.config.json names it: a built-in (`id`), a code domain
 * (`module`, run in a worker thread, trusted workspaces only) or a data-only domain (`data`).
 */
import { dirname, join, resolve } from 'node:path';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { DataDomainSchema, type DataDomainConfig, type DomainRef } from '../core/config.js';
import { InputError, WhaleError } from '../core/errors.js';
import { readJsonWithSchema } from '../core/jsonFile.js';
import { dataDomainDefinition } from './data/dataDomain.js';
import { materialise } from './definition.js';
import { loadDomain } from './index.js';
import { loadModuleDomain } from './module/moduleDomain.js';
import { SPLITS, type Domain } from './types.js';

export interface ProjectDomainContext {
  /** The folder whale.config.json is in. */
  baseDir: string;
  configFile?: string;
  /** May the domain's own code run (a module, a command verifier)? The CLI is trusted; an untrusted VS Code workspace is not. */
  trusted?: boolean;
  secret?: string;
  /** Where a module's bundle and the domain worker are cached (default <baseDir>/.whale/cache). */
  cacheDir?: string;
}

/** A loaded domain; close() ends a code domain's worker thread (a no-op otherwise). */
export type ProjectDomain = Domain & {
  close(): Promise<void>;
  /** How it was loaded, for the run's record: the module's file and code hash. */
  source: { kind: 'builtin' | 'module' | 'data'; module?: string; codeHash?: string };
  summary?: string;
};

/** A short name of the reference for messages: the id, the module path or the data file. */
export function domainRefLabel(ref: DomainRef): string {
  if (ref.module) return ref.module;
  if (typeof ref.data === 'string') return ref.data;
  if (ref.data) return `data:${typeof ref.data.tasks === 'string' ? ref.data.tasks : Object.values(ref.data.tasks).join(',')}`;
  return ref.id ?? '?';
}

/** A data domain's own file; a missing file or a bad field is an InputError naming it. */
export function readDataDomainFile(file: string): DataDomainConfig {
  if (!existsSync(file)) throw new InputError({ file }, 'no such data domain file');
  return readJsonWithSchema(file, DataDomainSchema);
}

/**
 * A user domain's fingerprint: its code or config, the files its command verifier names, and every
 * task's private data — so an edited verifier or answer key is never answered from the cache.
 */
export function userDomainFingerprint(domain: Domain, identity: string, command?: { command: string[]; cwd: string }): string {
  const h = createHash('sha256').update(identity);
  for (const arg of command?.command ?? []) {
    h.update('\0').update(arg);
    const f = resolve(command!.cwd, arg);
    if (existsSync(f) && statSync(f).isFile()) h.update(readFileSync(f));
  }
  for (const s of SPLITS) for (const t of domain.tasks(s)) h.update('\0').update(t.id).update('\0').update(JSON.stringify(t.private));
  return h.digest('hex');
}

export async function loadProjectDomain(ref: DomainRef, ctx: ProjectDomainContext): Promise<ProjectDomain> {
  const configFile = ctx.configFile ?? join(ctx.baseDir, 'whale.config.json');
  if (ref.module) {
    const d = await loadModuleDomain({
      module: ref.module,
      options: ref.options,
      baseDir: ctx.baseDir,
      configFile,
      cacheDir: ctx.cacheDir ?? join(ctx.baseDir, '.whale', 'cache'),
      ...(ctx.trusted ? { trusted: true } : {}),
      ...(ctx.secret ? { secret: ctx.secret } : {}),
      ...(ref.loadTimeoutMs ? { loadTimeoutMs: ref.loadTimeoutMs } : {}),
    });
    const moduleFile = resolve(ctx.baseDir, ref.module);
    d.fingerprint = userDomainFingerprint(d, d.codeHash, d.verifyCommand ? { command: d.verifyCommand.command, cwd: dirname(moduleFile) } : undefined);
    return Object.assign(d, { source: { kind: 'module' as const, module: moduleFile, codeHash: d.codeHash } });
  }
  if (ref.data) {
    // A data domain in its own file (domains/NAME/domain.json): its paths resolve against that file's folder.
    const file = typeof ref.data === 'string' ? resolve(ctx.baseDir, ref.data) : configFile;
    const data = typeof ref.data === 'string' ? readDataDomainFile(file) : ref.data;
    if (data.verifier.kind === 'command' && !ctx.trusted)
      throw new WhaleError(`${file}: the verifier is a command and runs only in a trusted workspace`, 'untrusted');
    const def = dataDomainDefinition(data, file);
    const d = await materialise(def, ref.options, {
      origin: file,
      moduleDir: dirname(file),
      baseDir: dirname(file),
      configFile,
      ...(ctx.secret ? { secret: ctx.secret } : {}),
    });
    d.fingerprint = userDomainFingerprint(
      d,
      JSON.stringify(data),
      data.verifier.kind === 'command' ? { command: data.verifier.command, cwd: dirname(file) } : undefined,
    );
    return Object.assign(d, { close: async () => {}, source: { kind: 'data' as const } });
  }
  const d = await loadDomain(ref.id!, ref.options, {
    baseDir: ctx.baseDir,
    ...(ctx.secret ? { secret: ctx.secret } : {}),
    ...(ctx.trusted !== undefined ? { trusted: ctx.trusted } : {}),
  });
  return Object.assign(d, { close: async () => {}, source: { kind: 'builtin' as const } });
}
