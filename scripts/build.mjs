// Bundles the extension (CommonJS, `vscode` external — VS Code loads it with require) and the CLI
// engine (ESM). Dependencies stay external for the CLI: they are installed beside it, and tfjs's
// wasm binaries and esbuild's native binary must be found on disk at run time anyway.
import { copyFileSync, mkdirSync } from 'node:fs';
import { build } from 'esbuild';

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
    packages: 'external',
    banner: { js: "import { createRequire as __whaleCreateRequire } from 'node:module'; const require = __whaleCreateRequire(import.meta.url);" },
  }),
  // The harness runtime looks beside the CLI bundle for the SDK (aliased as 'whale-harness' when a
  // candidate is bundled) and for the worker bootstrap (src/harness/assets.ts).
  build({ ...common, sourcemap: false, entryPoints: ['src/harness/worker/bootstrap.ts'], outfile: 'dist/whale-bootstrap.mjs', format: 'esm', minify: true }),
  // The dashboard webview: its script with uPlot and zod, its stylesheet with uPlot's, nothing
  // loaded from anywhere else (the panel's CSP allows only these two files).
  build({ bundle: true, platform: 'browser', target: 'es2022', format: 'iife', minify: true, logLevel: 'warning', entryPoints: { dashboard: 'src/extension/dashboard/webview/main.ts' }, outdir: 'media/dist' }),
]);
mkdirSync('dist', { recursive: true });
copyFileSync('src/harness/sdk.ts', 'dist/whale-harness-sdk.ts');
console.log('built dist/extension.cjs, dist/cli.mjs, dist/whale-bootstrap.mjs, dist/whale-harness-sdk.ts, media/dist/dashboard.{js,css}');
