/**
 * Files a code domain needs at run time, located relative to this module whether it runs as source
 * (tsx), from the CLI bundle (dist/cli.mjs, which ships `whale-domain-sdk.ts` and
 * `whale-domain-worker.mjs` beside itself) or from a checkout's src/.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFileAtomic } from '../../core/atomic.js';

const HERE = typeof __filename !== 'undefined' ? dirname(__filename) : dirname(fileURLToPath(import.meta.url));

const SDK_CANDIDATES = [join(HERE, '..', 'sdk.ts'), join(HERE, 'whale-domain-sdk.ts'), join(HERE, '..', 'src', 'domains', 'sdk.ts')];
const WORKER_SOURCES = [join(HERE, 'worker.ts'), join(HERE, '..', 'src', 'domains', 'module', 'worker.ts')];
const WORKER_PREBUILT = join(HERE, 'whale-domain-worker.mjs');

/** esbuild settings for code that runs in the engine's domain worker (the worker itself and users' modules). */
export const DOMAIN_BUILD = {
  bundle: true,
  write: false,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  logLevel: 'silent',
  // Bundled CommonJS dependencies may call require(); give the ES module one.
  banner: { js: "import { createRequire as __whaleCreateRequire } from 'node:module'; const require = __whaleCreateRequire(import.meta.url);" },
} as const;

/** The SDK source a user's `import … from 'whale/domain'` resolves to. */
export function resolveDomainSdkFile(): string {
  const f = SDK_CANDIDATES.find((c) => existsSync(c));
  if (!f) throw new Error(`the domain SDK was not found (looked for ${SDK_CANDIDATES.join(', ')})`);
  return f;
}

const built = new Map<string, Promise<string>>();

/** The worker as one ES module file: prebuilt beside the CLI bundle, or built from source into cacheDir (content-addressed). */
export function ensureDomainWorker(cacheDir: string): Promise<string> {
  let p = built.get(cacheDir);
  if (!p) {
    p = buildWorker(cacheDir);
    p.catch(() => built.delete(cacheDir));
    built.set(cacheDir, p);
  }
  return p;
}

async function buildWorker(cacheDir: string): Promise<string> {
  const source = WORKER_SOURCES.find((c) => existsSync(c));
  if (!source) {
    if (existsSync(WORKER_PREBUILT)) return WORKER_PREBUILT;
    throw new Error(`the domain worker was not found (looked for ${[...WORKER_SOURCES, WORKER_PREBUILT].join(', ')})`);
  }
  const esbuild = await import('esbuild');
  // jsonc-parser's "main" is a UMD build whose dynamic require()s esbuild cannot follow (as in scripts/build.mjs).
  const result = await esbuild.build({
    entryPoints: [source],
    absWorkingDir: dirname(source),
    ...DOMAIN_BUILD,
    alias: { 'jsonc-parser': 'jsonc-parser/lib/esm/main.js' },
  });
  const code = result.outputFiles[0].contents;
  const file = join(cacheDir, `whale-domain-worker-${createHash('sha256').update(code).digest('hex').slice(0, 16)}.mjs`);
  if (!existsSync(file)) writeFileAtomic(file, code, { fsync: false });
  return file;
}
