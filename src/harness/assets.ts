/**
 * Files the runtime ships to harness processes: the SDK source (aliased as `whale-harness` in every
 * candidate bundle) and the worker bootstrap (built once per cache folder into one .mjs file that a
 * sandboxed `node` runs). Both are located relative to this module. A packaged build (dist/cli.mjs)
 * must put `whale-harness-sdk.ts` (a copy of sdk.ts) and `whale-bootstrap.mjs` (esbuild of
 * worker/bootstrap.ts: bundle, esm, node20) beside itself, unless the checkout's src/ is present.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFileAtomic } from '../core/atomic.js';

/** esbuild settings for code that runs inside a harness process (the bootstrap and candidates). */
export const HARNESS_PROCESS_BUILD = { bundle: true, write: false, platform: 'node', format: 'esm', target: 'node20', logLevel: 'silent' } as const;

/** This module's folder, whether it runs as ES module source (tsx, dist/cli.mjs) or inside a CommonJS bundle. */
const HERE = typeof __filename !== 'undefined' ? dirname(__filename) : dirname(fileURLToPath(import.meta.url));

/** Where to look, in order: beside this module (source), the names a dist build copies, a checkout's src/. */
const SDK_CANDIDATES = [join(HERE, 'sdk.ts'), join(HERE, 'whale-harness-sdk.ts'), join(HERE, '..', 'src', 'harness', 'sdk.ts')];
/**
 * The bootstrap this module goes with, in order: its source beside it (run from source), the one a
 * dist build put beside it, a checkout's src/ (a dist build without one). A dist build inside a
 * checkout must not take the checkout's src/ first: that source may be newer or older than the
 * engine that speaks to it, and the two must speak the same protocol.
 */
const BOOTSTRAP_SOURCE = join(HERE, 'worker', 'bootstrap.ts');
const BOOTSTRAP_PREBUILT = join(HERE, 'whale-bootstrap.mjs');
const BOOTSTRAP_CHECKOUT = join(HERE, '..', 'src', 'harness', 'worker', 'bootstrap.ts');

export function resolveSdkFile(): string {
  const f = SDK_CANDIDATES.find((c) => existsSync(c));
  if (!f) throw new Error(`whale-harness SDK not found (looked for ${SDK_CANDIDATES.join(', ')})`);
  return f;
}

let bootstrapBuild: Promise<string> | undefined;
let bootstrapBuildDir: string | undefined;

/**
 * The worker bootstrap as one self-contained ES module file under `cacheDir` (content-addressed,
 * so concurrent runtimes and stale caches are harmless). Built from source on first use.
 */
export function ensureBootstrap(cacheDir: string): Promise<string> {
  if (!bootstrapBuild || bootstrapBuildDir !== cacheDir) {
    bootstrapBuildDir = cacheDir;
    bootstrapBuild = buildBootstrap(cacheDir);
    bootstrapBuild.catch(() => (bootstrapBuild = undefined));
  }
  return bootstrapBuild;
}

async function buildBootstrap(cacheDir: string): Promise<string> {
  if (!existsSync(BOOTSTRAP_SOURCE) && existsSync(BOOTSTRAP_PREBUILT)) return BOOTSTRAP_PREBUILT;
  const source = [BOOTSTRAP_SOURCE, BOOTSTRAP_CHECKOUT].find((c) => existsSync(c));
  if (!source) throw new Error(`worker bootstrap not found (looked for ${[BOOTSTRAP_SOURCE, BOOTSTRAP_PREBUILT, BOOTSTRAP_CHECKOUT].join(', ')})`);
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: [source],
    ...HARNESS_PROCESS_BUILD,
    minify: true, // start-up time of every harness process: less to parse
  });
  const code = result.outputFiles[0].contents;
  const file = join(cacheDir, `whale-bootstrap-${createHash('sha256').update(code).digest('hex').slice(0, 16)}.mjs`);
  if (!existsSync(file)) writeFileAtomic(file, code, { fsync: false });
  return file;
}
