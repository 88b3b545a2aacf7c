// Bundles the extension (CommonJS, `vscode` external — VS Code loads it with require) and the CLI
// engine (ESM). The CLI bundles its pure-JS dependencies, so an installed .vsix has a working engine
// without node_modules; what must exist on disk at run time stays external and is shipped as files
// (.vscodeignore): esbuild's native binary, resvg's native addon, the DejaVu fonts, and tfjs's
// .wasm binaries, which the bundled wasm backend loads from the bundle's own folder (__dirname).
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { build, context } from 'esbuild';

const ENGINE_EXTERNALS = ['esbuild', '@resvg/resvg-js', 'dejavu-fonts-ttf'];
// Bundled CommonJS code still says require/__dirname/__filename; in an ESM bundle they are defined here.
const ESM_CJS_SHIMS = [
  "import { createRequire as __whaleCreateRequire } from 'node:module';",
  "import { fileURLToPath as __whaleFileURLToPath } from 'node:url';",
  "import { dirname as __whalePathDirname } from 'node:path';",
  'const require = __whaleCreateRequire(import.meta.url);',
  'const __whaleFilename = __whaleFileURLToPath(import.meta.url);',
  'const __whaleDirname = __whalePathDirname(__whaleFilename);',
].join(' ');

// The engine bundle gets tfjs-core instead of the umbrella package (scripts/tfjs-core-only.mjs), in
// its ES build: tfjs-core's "main" is a CommonJS bundle without the gradients, and the wasm backend's
// CommonJS build is ES5, which cannot extend tfjs-core's ES classes. ES builds of both keep one copy
// of tfjs-core, which the gradients register into.
const tfjsCoreOnly = {
  name: 'tfjs-core-only',
  setup(b) {
    const req = createRequire(import.meta.url);
    b.onResolve({ filter: /^@tensorflow\/tfjs$/ }, () => ({ path: join(process.cwd(), 'scripts', 'tfjs-core-only.mjs') }));
    b.onResolve({ filter: /^@tensorflow\/tfjs-(core|backend-wasm)$/ }, (a) => ({ path: req.resolve(`${a.path}/dist/index.js`) }));
  },
};

const common = { bundle: true, platform: 'node', target: 'node20', sourcemap: true, logLevel: 'warning' };
const { version } = JSON.parse(readFileSync('package.json', 'utf8'));
// Chunks of the split CLI bundle from an earlier build would pile up (their names carry a hash).
for (const f of (existsSync('dist') ? readdirSync('dist', { withFileTypes: true }) : []).filter((e) => e.isFile() && /^chunk-/.test(e.name)))
  rmSync(join('dist', f.name));

const configs = [
  // mainFields: jsonc-parser's UMD build requires its own files dynamically, which a bundle cannot
  // follow; its ESM build bundles cleanly.
  {
    ...common,
    entryPoints: ['src/extension/extension.ts'],
    outfile: 'dist/extension.cjs',
    format: 'cjs',
    external: ['vscode'],
    mainFields: ['module', 'main'],
    minify: true,
  },
  {
    ...common,
    entryPoints: { cli: 'src/cli/main.ts' },
    outdir: 'dist',
    outExtension: { '.js': '.mjs' },
    format: 'esm',
    // Code splitting: the lazy imports (a command's code, tfjs, the domains) become chunks loaded
    // when used, so `whale --help` parses the small entry only. Chunks sit beside cli.mjs, where
    // the wasm backend and the harness runtime look for their files.
    splitting: true,
    chunkNames: 'chunk-[hash]',
    external: ENGINE_EXTERNALS,
    plugins: [tfjsCoreOnly],
    // jsonc-parser's "main" is a UMD build whose dynamic require()s esbuild cannot follow.
    alias: { 'jsonc-parser': 'jsonc-parser/lib/esm/main.js' },
    define: { __dirname: '__whaleDirname', __filename: '__whaleFilename', __WHALE_VERSION__: JSON.stringify(version) },
    banner: { js: ESM_CJS_SHIMS },
  },
  // The harness runtime looks beside the CLI bundle for the SDK (aliased as 'whale-harness' when a
  // candidate is bundled) and for the worker bootstrap (src/harness/assets.ts).
  { ...common, sourcemap: false, entryPoints: ['src/harness/worker/bootstrap.ts'], outfile: 'dist/whale-bootstrap.mjs', format: 'esm', minify: true },
  // The worker thread that runs a user's domain module (src/domains/module/assets.ts looks beside the CLI bundle).
  {
    ...common,
    sourcemap: false,
    entryPoints: ['src/domains/module/worker.ts'],
    outfile: 'dist/whale-domain-worker.mjs',
    format: 'esm',
    alias: { 'jsonc-parser': 'jsonc-parser/lib/esm/main.js' },
    banner: { js: "import { createRequire as __whaleCreateRequire } from 'node:module'; const require = __whaleCreateRequire(import.meta.url);" },
  },
  // The dashboard webview: its script with uPlot and zod, its stylesheet with uPlot's, nothing
  // loaded from anywhere else (the panel's CSP allows only these two files).
  {
    bundle: true,
    platform: 'browser',
    target: 'es2022',
    format: 'iife',
    minify: true,
    logLevel: 'warning',
    entryPoints: { dashboard: 'src/extension/dashboard/webview/main.ts' },
    outdir: 'media/dist',
  },
];
mkdirSync('dist', { recursive: true });
copyFileSync('src/harness/sdk.ts', 'dist/whale-harness-sdk.ts');
// `whale/domain` for users' domain modules (aliased when the engine bundles one; types for their editor).
copyFileSync('src/domains/sdk.ts', 'dist/whale-domain-sdk.ts');
const wasmDir = dirname(createRequire(import.meta.url).resolve('@tensorflow/tfjs-backend-wasm'));
const wasm = readdirSync(wasmDir).filter((f) => f.endsWith('.wasm'));
for (const f of wasm) copyFileSync(join(wasmDir, f), join('dist', f));
// `npm run watch` (--watch): rebuild on change; the lines below are what .vscode/tasks.json's
// background problem matcher waits for.
const watchLog = {
  name: 'watch-log',
  setup(b) {
    b.onStart(() => console.log('[watch] build started'));
    b.onEnd((r) => console.log(`[watch] build finished (${r.errors.length} errors)`));
  },
};
if (process.argv.includes('--watch')) {
  const contexts = await Promise.all(configs.map((c) => context({ ...c, plugins: [...(c.plugins ?? []), watchLog] })));
  await Promise.all(contexts.map((c) => c.watch()));
} else {
  await Promise.all(configs.map((c) => build(c)));
}
console.log(
  `built dist/extension.cjs, dist/cli.mjs, dist/whale-bootstrap.mjs, dist/whale-domain-worker.mjs, dist/whale-harness-sdk.ts, dist/whale-domain-sdk.ts, ${wasm.length} tfjs .wasm files, media/dist/dashboard.{js,css}`,
);
