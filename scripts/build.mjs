// Bundles the extension (CommonJS, `vscode` external — VS Code loads it with require) and the CLI
// engine (ESM). The CLI bundles its pure-JS dependencies, so an installed .vsix has a working engine
// without node_modules; what must exist on disk at run time stays external and is shipped as files
// (.vscodeignore): esbuild's native binary, resvg's native addon, the DejaVu fonts, and tfjs's
// .wasm binaries, which the bundled wasm backend loads from the bundle's own folder (__dirname).
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { build } from 'esbuild';

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

const common = { bundle: true, platform: 'node', target: 'node20', sourcemap: true, logLevel: 'warning' };

await Promise.all([
  // mainFields: jsonc-parser's UMD build requires its own files dynamically, which a bundle cannot
  // follow; its ESM build bundles cleanly.
  build({ ...common, entryPoints: ['src/extension/extension.ts'], outfile: 'dist/extension.cjs', format: 'cjs', external: ['vscode'], mainFields: ['module', 'main'] }),
  build({
    ...common,
    entryPoints: { cli: 'src/cli/main.ts' },
    outdir: 'dist',
    outExtension: { '.js': '.mjs' },
    format: 'esm',
    external: ENGINE_EXTERNALS,
    // jsonc-parser's "main" is a UMD build whose dynamic require()s esbuild cannot follow.
    alias: { 'jsonc-parser': 'jsonc-parser/lib/esm/main.js' },
    define: { __dirname: '__whaleDirname', __filename: '__whaleFilename' },
    banner: { js: ESM_CJS_SHIMS },
  }),
  // The harness runtime looks beside the CLI bundle for the SDK (aliased as 'whale-harness' when a
  // candidate is bundled) and for the worker bootstrap (src/harness/assets.ts).
  build({ ...common, sourcemap: false, entryPoints: ['src/harness/worker/bootstrap.ts'], outfile: 'dist/whale-bootstrap.mjs', format: 'esm', minify: true }),
  // The worker thread that runs a user's domain module (src/domains/module/assets.ts looks beside the CLI bundle).
  build({
    ...common,
    sourcemap: false,
    entryPoints: ['src/domains/module/worker.ts'],
    outfile: 'dist/whale-domain-worker.mjs',
    format: 'esm',
    alias: { 'jsonc-parser': 'jsonc-parser/lib/esm/main.js' },
    banner: { js: "import { createRequire as __whaleCreateRequire } from 'node:module'; const require = __whaleCreateRequire(import.meta.url);" },
  }),
  // The dashboard webview: its script with uPlot and zod, its stylesheet with uPlot's, nothing
  // loaded from anywhere else (the panel's CSP allows only these two files).
  build({ bundle: true, platform: 'browser', target: 'es2022', format: 'iife', minify: true, logLevel: 'warning', entryPoints: { dashboard: 'src/extension/dashboard/webview/main.ts' }, outdir: 'media/dist' }),
]);
mkdirSync('dist', { recursive: true });
copyFileSync('src/harness/sdk.ts', 'dist/whale-harness-sdk.ts');
// `whale/domain` for users' domain modules (aliased when the engine bundles one; types for their editor).
copyFileSync('src/domains/sdk.ts', 'dist/whale-domain-sdk.ts');
const wasmDir = dirname(createRequire(import.meta.url).resolve('@tensorflow/tfjs-backend-wasm'));
const wasm = readdirSync(wasmDir).filter((f) => f.endsWith('.wasm'));
for (const f of wasm) copyFileSync(join(wasmDir, f), join('dist', f));
console.log(`built dist/extension.cjs, dist/cli.mjs, dist/whale-bootstrap.mjs, dist/whale-domain-worker.mjs, dist/whale-harness-sdk.ts, dist/whale-domain-sdk.ts, ${wasm.length} tfjs .wasm files, media/dist/dashboard.{js,css}`);
