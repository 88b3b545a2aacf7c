// Bundles the extension (CommonJS, `vscode` external — VS Code loads it with require) and the CLI
// engine (ESM). Dependencies stay external for the CLI: they are installed beside it, and tfjs's
// wasm binaries and esbuild's native binary must be found on disk at run time anyway.
import { build } from 'esbuild';

const common = { bundle: true, platform: 'node', target: 'node20', sourcemap: true, logLevel: 'warning' };

await Promise.all([
  build({ ...common, entryPoints: ['src/extension/extension.ts'], outfile: 'dist/extension.cjs', format: 'cjs', external: ['vscode'] }),
  build({
    ...common,
    entryPoints: { cli: 'src/cli/main.ts' },
    outdir: 'dist',
    outExtension: { '.js': '.mjs' },
    format: 'esm',
    packages: 'external',
    banner: { js: "import { createRequire as __whaleCreateRequire } from 'node:module'; const require = __whaleCreateRequire(import.meta.url);" },
  }),
]);
console.log('built dist/extension.cjs and dist/cli.mjs');
