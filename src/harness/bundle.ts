/**
 * Bundles a Node candidate's entry (TS or JS) into ONE self-contained ES module with
 * `whale-harness` aliased to the SDK, so the sandboxed process needs to read nothing but its own
 * folder and that file. Bundles are cached by (tree hash, SDK, esbuild version) outside the
 * candidate folder: the folder's identity must not change because we ran it.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative, isAbsolute, resolve as resolvePath } from 'node:path';
import vm from 'node:vm';
import type { Plugin, Message } from 'esbuild';
import { InputError } from '../core/errors.js';
import { IGNORED } from '../core/treeHash.js';
import { writeFileAtomic } from '../core/atomic.js';
import { HARNESS_PROCESS_BUILD, resolveSdkFile } from './assets.js';

export interface BundleRequest {
  /** Absolute candidate folder. */
  dir: string;
  /** The folder `dir` was copied from: error messages name files there. */
  sourceDir?: string;
  /** Entry path relative to the folder (from harness.json). */
  entry: string;
  treeHash: string;
  cacheDir: string;
}

/** Folder names the tree hash skips (treeHash.ts): never part of what runs. */
const UNHASHED = IGNORED;

const BUILTINS = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));

/**
 * Chess move generators and engines. The chess domain's rule is that a harness may not compute,
 * generate or replace moves, so these get a refusal that says why rather than the generic one.
 */
const MOVE_GENERATORS =
  /^(?:chess(?:\.js|\.mjs|\.ts|ops|-ai|-console|-engine)?|js-chess-engine|stockfish[\w.-]*|@[\w.-]+\/(?:chess[\w.-]*|stockfish[\w.-]*))(?:\/.*)?$/;
const MOVE_GENERATOR_RULE =
  'a harness may not compute, generate or replace moves: every move must come from the model (it may ask the domain with is_legal_action)';
/** chess.js's own source, copied into a candidate folder (its 0x88 board tables). */
const CHESS_JS_SOURCE = /\bOx88\b[\s\S]*\bPAWN_OFFSETS\b|\bPAWN_OFFSETS\b[\s\S]*\bOx88\b/;

/** Why a bare import is refused. */
export function importRefusal(specifier: string): string {
  if (MOVE_GENERATORS.test(specifier)) return `cannot import '${specifier}': it is a chess move generator, and ${MOVE_GENERATOR_RULE}`;
  return `cannot import '${specifier}': a candidate may import only 'whale-harness', Node built-ins and its own files`;
}

/** True when `file` is `dir` itself or inside it. */
export function isInside(dir: string, file: string): boolean {
  const rel = relative(dir, file);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * Keeps a candidate self-contained: only files inside its folder, the SDK and Node built-ins may be
 * bundled. Without this, `import x from '../../answers.json'` would copy a file from outside the
 * folder into the bundle and walk straight past the sandbox's file-system limits.
 */
function confinePlugin(dir: string, sdkFile: string): Plugin {
  return {
    name: 'whale-confine',
    setup(build) {
      build.onResolve({ filter: /^whale-harness$/ }, () => ({ path: sdkFile }));
      // Relative imports: refused here with the reason, before esbuild's bare "could not resolve".
      build.onResolve({ filter: /^\.\.?(\/|$)/ }, (args) => {
        if (args.importer === sdkFile || !args.resolveDir) return undefined;
        const target = resolvePath(args.resolveDir, args.path);
        if (!isInside(dir, target)) return { errors: [{ text: `cannot import '${args.path}': it is outside the candidate folder` }] };
        const skipped = relative(dir, target)
          .split(/[\\/]/)
          .find((part) => UNHASHED.has(part));
        if (skipped)
          return {
            errors: [
              {
                text: `cannot import '${args.path}': ${skipped}/ is not part of the candidate (its identity skips it, so it is not there when the candidate runs); copy the code into the candidate`,
              },
            ],
          };
        return undefined;
      });
      build.onResolve({ filter: /^[^./]/ }, (args) => {
        if (BUILTINS.has(args.path)) return { path: args.path, external: true };
        if (isAbsolute(args.path)) return undefined; // checked in onLoad like any file
        return { errors: [{ text: importRefusal(args.path) }] };
      });
      build.onLoad({ filter: /.*/ }, (args) => {
        if (args.path === sdkFile) return undefined;
        if (!isInside(dir, args.path)) return { errors: [{ text: `cannot import ${args.path}: it is outside the candidate folder` }] };
        if (/\.[cm]?[jt]sx?$/.test(args.path) && CHESS_JS_SOURCE.test(readFileSync(args.path, 'utf8')))
          return {
            errors: [{ text: `cannot bundle ${relative(dir, args.path)}: it holds a copy of chess.js, a chess move generator, and ${MOVE_GENERATOR_RULE}` }],
          };
        return undefined;
      });
    },
  };
}

export function bundleCacheFile(req: BundleRequest, esbuildVersion: string): string {
  const sdk = readFileSync(resolveSdkFile());
  const key = createHash('sha256')
    .update(req.treeHash)
    .update('\0')
    .update(req.entry)
    .update('\0')
    .update(sdk)
    .update('\0')
    .update(esbuildVersion)
    .update('\0from-materialised-copy')
    .digest('hex'); // bundles built in place (before copies) are not reused
  return join(req.cacheDir, 'bundles', `${req.treeHash.slice(0, 12)}-${key.slice(0, 16)}.mjs`);
}

/** Returns the bundle file, building it when not cached. Throws InputError naming file and line on a build failure. */
export async function bundleCandidate(req: BundleRequest): Promise<string> {
  const esbuild = await import('esbuild');
  const out = bundleCacheFile(req, esbuild.version);
  if (existsSync(out)) return out;
  const entryAbs = resolvePath(req.dir, req.entry);
  if (!isInside(req.dir, entryAbs))
    throw new InputError({ file: join(req.dir, 'harness.json'), field: 'entry' }, `entry '${req.entry}' is outside the candidate folder`);
  if (!existsSync(entryAbs)) throw new InputError({ file: join(req.dir, 'harness.json'), field: 'entry' }, `entry file '${req.entry}' does not exist`);
  const sdkFile = resolveSdkFile();
  let result;
  try {
    result = await esbuild.build({
      entryPoints: [entryAbs],
      absWorkingDir: req.dir,
      ...HARNESS_PROCESS_BUILD,
      sourcemap: 'inline',
      // Bundled CommonJS code may call require(); give the ES module one.
      banner: { js: "import { createRequire as __whaleCreateRequire } from 'node:module'; const require = __whaleCreateRequire(import.meta.url);" },
      plugins: [confinePlugin(req.dir, sdkFile)],
    });
  } catch (e) {
    throw bundleError(req, e);
  }
  const file = result.outputFiles[0];
  if (!file) throw new InputError({ file: entryAbs }, 'esbuild produced no output');
  writeFileAtomic(out, file.contents, { fsync: false });
  return out;
}

function bundleError(req: BundleRequest, e: unknown): InputError {
  if (req.sourceDir) req = { ...req, dir: req.sourceDir };
  const errors = (e as { errors?: Message[] }).errors;
  if (!Array.isArray(errors) || errors.length === 0) return new InputError({ file: resolvePath(req.dir, req.entry) }, `cannot bundle: ${String(e)}`);
  return InputError.combine(
    errors.map((m) => {
      const file = m.location?.file ? resolvePath(req.dir, m.location.file) : resolvePath(req.dir, req.entry);
      return new InputError({ file, line: m.location?.line, column: m.location ? m.location.column + 1 : undefined }, `cannot bundle: ${m.text}`);
    }),
  );
}

/** What a candidate's rollouts run in, when it can run in a `vm` context: the script, or why it cannot. */
export type ContextScript = { file: string } | { refusal: string };

/** Globals a context offers besides the language's own: those the prelude builds (contextPrelude.ts). */
const CONTEXT_GLOBALS = new Set(['console', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'setImmediate', 'clearImmediate', 'queueMicrotask']);
const MARK = '__whale_needs_node__';

/**
 * Node's own globals (process, Buffer, URL, fetch, TextEncoder, require, …), FinalizationRegistry,
 * WebAssembly and Atomics:
 * what a worker thread has and a rollout's context has not. A candidate that names any of them runs
 * in a worker thread, so it sees exactly what it would in a process of its own.
 */
let nodeOnly: string[] | undefined;
function nodeOnlyGlobals(): string[] {
  if (nodeOnly) return nodeOnly;
  const inContext = new Set(vm.runInNewContext('Object.getOwnPropertyNames(globalThis)', Object.create(null) as object) as string[]);
  const names = new Set([...Object.getOwnPropertyNames(globalThis), 'require', 'module', 'exports', '__dirname', '__filename', 'global']);
  const node = [...names].filter((n) => /^[A-Za-z_$][\w$]*$/.test(n) && !inContext.has(n) && !CONTEXT_GLOBALS.has(n));
  // The language's, but not all of them are in a context (contextPrelude.ts says why).
  return (nodeOnly = [...node, 'FinalizationRegistry', 'WebAssembly', 'Atomics'].sort());
}

/**
 * The candidate as a script for a context host (worker/contextHost.ts): one function expression,
 * `(function (module, exports) { …CommonJS bundle… })`, compiled once per process and run in each
 * rollout's context. Refused, with the reason, when the candidate needs anything of Node's: a
 * built-in module, a Node global (esbuild's `define` marks every free use of one), `import.meta`,
 * a dynamic `import()`, or top-level await; such a candidate keeps a worker thread per rollout.
 * Any doubt sends a candidate to the thread, never the other way.
 */
export async function contextScriptFor(req: BundleRequest): Promise<ContextScript> {
  const esbuild = await import('esbuild');
  // The names that send a candidate to a thread are part of the decision, and so of its cache key.
  const rule = createHash('sha256').update(nodeOnlyGlobals().join(',')).digest('hex').slice(0, 8);
  const base = `${bundleCacheFile(req, esbuild.version).replace(/\.mjs$/, '')}-${rule}`;
  const file = `${base}.context.cjs`;
  const refused = `${base}.context-refused.txt`;
  if (existsSync(file)) return { file };
  if (existsSync(refused)) return { refusal: readFileSync(refused, 'utf8') };
  const refusal = (why: string): ContextScript => {
    writeFileAtomic(refused, why, { fsync: false });
    return { refusal: why };
  };
  const define: Record<string, string> = { 'import.meta': `${MARK}import_meta` };
  for (const name of nodeOnlyGlobals()) define[name] = `${MARK}${name}`;
  let result;
  try {
    result = await esbuild.build({
      entryPoints: [resolvePath(req.dir, req.entry)],
      absWorkingDir: req.dir,
      ...HARNESS_PROCESS_BUILD,
      format: 'cjs',
      define,
      metafile: true,
      plugins: [confinePlugin(req.dir, resolveSdkFile())],
    });
  } catch (e) {
    return refusal(`it does not build as a script (${((e as { errors?: Message[] }).errors?.[0]?.text ?? String(e)).slice(0, 200)})`);
  }
  const builtins = Object.values(result.metafile.outputs).flatMap((out) => out.imports.filter((i) => i.external).map((i) => i.path));
  if (builtins.length) return refusal(`it imports Node's ${[...new Set(builtins)].join(', ')}`);
  const code = result.outputFiles[0].text;
  const used = [...new Set([...code.matchAll(new RegExp(`${MARK}(\\w+)`, 'g'))].map((m) => m[1].replace('import_meta', 'import.meta')))];
  if (used.length) return refusal(`it uses ${used.slice(0, 5).join(', ')}${used.length > 5 ? ', …' : ''} (a context offers none of them)`);
  if (/\bimport\s*\(/.test(code)) return refusal('it may call import()');
  writeFileAtomic(file, `(function (module, exports) {\n${code}\n})`, { fsync: false });
  return { file };
}
