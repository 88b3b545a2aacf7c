#!/usr/bin/env node
// `npm run screenshots`: the pictures in docs/screenshots/ are the ones the UI-only walkthrough
// (test/vscode/walkthrough.mjs) takes while it drives the real workbench like a person, with the
// extension INSTALLED from a .vsix. This packages one (unless --vsix is given) and runs the
// walkthrough into docs/screenshots/. To add a picture, add a step to the walkthrough.
//   node scripts/ui-screenshots.mjs [--vsix FILE] [--out DIR] [--keep] [--verbose]
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { repo } from '../test/vscode/workspace.mjs';

const { values: args } = parseArgs({ options: { vsix: { type: 'string' }, out: { type: 'string' }, keep: { type: 'boolean' }, verbose: { type: 'boolean' } } });
let vsix = args.vsix && resolve(args.vsix);
if (!vsix) {
  vsix = join(repo, 'out/whale-ui.vsix');
  const r = spawnSync(process.execPath, [join(repo, 'scripts/package-vsix.mjs'), '--out', vsix], { cwd: repo, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error('ui-screenshots: packaging the .vsix failed');
    process.exit(1);
  }
}
const walk = [
  join(repo, 'test/vscode/walkthrough.mjs'),
  '--vsix',
  vsix,
  '--out',
  resolve(args.out ?? join(repo, 'docs/screenshots')),
  ...(args.keep ? ['--keep'] : []),
  ...(args.verbose ? ['--verbose'] : []),
];
const r = spawnSync(process.execPath, ['--import', 'tsx', ...walk], { cwd: repo, stdio: 'inherit' });
process.exit(r.status ?? 1);
