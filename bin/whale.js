#!/usr/bin/env node
// The `whale` CLI. Runs the bundled engine; `npm install` builds it (the `prepare` script).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const bundle = fileURLToPath(new URL('../dist/cli.mjs', import.meta.url));
if (!existsSync(bundle)) {
  console.error(`whale: ${bundle} is missing; run \`npm run build\` in ${fileURLToPath(new URL('..', import.meta.url))}`);
  process.exit(2);
}
const { main } = await import(bundle);
process.exitCode = await main(process.argv.slice(2));
