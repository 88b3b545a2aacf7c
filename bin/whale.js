#!/usr/bin/env node
// The `whale` CLI. Runs the bundled engine; `npm install` builds it (the `prepare` script).
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// The Node floor is package.json's engines.node (">=MAJOR.MINOR"); older Nodes lack APIs the engine
// uses (zlib.crc32, 20.15) and would fail later with an obscure error.
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const floor = /(\d+)\.(\d+)/.exec(pkg.engines?.node ?? '')?.slice(1).map(Number);
const [major, minor] = process.versions.node.split('.').map(Number);
if (floor && (major < floor[0] || (major === floor[0] && minor < floor[1]))) {
  console.error(`whale: Node ${process.versions.node} (${process.execPath}) is too old: whale needs Node ${floor.join('.')} or later. Put a newer node first on the PATH (in VS Code: the whale.nodePath setting).`);
  process.exit(1);
}

const bundle = fileURLToPath(new URL('../dist/cli.mjs', import.meta.url));
if (!existsSync(bundle)) {
  console.error(`whale: ${bundle} is missing; run \`npm run build\` in ${fileURLToPath(new URL('..', import.meta.url))}`);
  process.exit(2);
}
const { main } = await import(bundle);
process.exitCode = await main(process.argv.slice(2));
