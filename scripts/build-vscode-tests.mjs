// Bundles the real-VS-Code suites (test/vscode/suite/*.test.ts) and their index into
// out/test/vscode/*.cjs, the CommonJS files the extension host require()s. `vscode` and `mocha`
// stay external: the index and every suite must share the one mocha instance that runs them.
import { readdirSync, rmSync } from 'node:fs';
import { build } from 'esbuild';

const outdir = 'out/test/vscode';
rmSync(outdir, { recursive: true, force: true }); // a deleted suite must not keep running from a stale bundle
const suites = readdirSync('test/vscode/suite').filter((f) => f.endsWith('.test.ts'));
await build({
  entryPoints: [{ in: 'test/vscode/index.ts', out: 'index' }, ...suites.map((f) => ({ in: `test/vscode/suite/${f}`, out: f.slice(0, -'.ts'.length) }))],
  outdir,
  outExtension: { '.js': '.cjs' },
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: 'inline',
  logLevel: 'warning',
  external: ['vscode', 'mocha'],
});
console.log(`built ${outdir}/index.cjs and ${suites.length} suite(s): ${suites.map((f) => f.replace(/\.test\.ts$/, '')).join(', ')}`);
