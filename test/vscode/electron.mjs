#!/usr/bin/env node
// Runs the same suites as run.mjs in a desktop VS Code through @vscode/test-electron, for
// developers who have a display and internet access (it downloads VS Code into .vscode-test/ the
// first time, or uses VSCODE_EXECUTABLE). It cannot run on the offline CI machine: there,
// run.mjs (code-server + headless Chromium) is the rig.
// runTests always passes --disable-workspace-trust, so the *.untrusted suites are skipped here.
// Usage: node test/vscode/electron.mjs [--suite NAME]... [--workspace DIR] [--version 1.90.0|stable]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { runTests } from '@vscode/test-electron';
import { builtSuites, defaultFixture, prepareWorkspace, repo, seededSettings, suitesOut, untrustedSuite } from './workspace.mjs';

const { values: args } = parseArgs({ options: { suite: { type: 'string', multiple: true }, workspace: { type: 'string' }, version: { type: 'string' } } });
const built = builtSuites();
if (built.length === 0) {
  console.error(`electron.mjs: no suites in ${suitesOut}: run 'node scripts/build-vscode-tests.mjs' first`);
  process.exit(2);
}
const unknown = (args.suite ?? []).filter((s) => !built.includes(s));
if (unknown.length) {
  console.error(`electron.mjs: no built suite ${unknown.join(', ')} (built: ${built.join(', ')})`);
  process.exit(2);
}
const wanted = (args.suite ?? built).filter((s) => !untrustedSuite(s));
const skipped = (args.suite ?? built).filter(untrustedSuite);
if (skipped.length) console.log(`electron.mjs: skipping ${skipped.join(', ')} (test-electron always disables Workspace Trust; run.mjs runs them)`);

const tmp = mkdtempSync(join(tmpdir(), 'whale-vscode-electron-'));
let code = 1;
try {
  const workspace = prepareWorkspace(resolve(args.workspace ?? defaultFixture), join(tmp, 'workspace'));
  const userData = join(tmp, 'user-data');
  seededSettings(userData, { trusted: true });
  code = await runTests({
    ...(process.env.VSCODE_EXECUTABLE ? { vscodeExecutablePath: process.env.VSCODE_EXECUTABLE } : { version: args.version ?? 'stable' }),
    extensionDevelopmentPath: repo,
    extensionTestsPath: join(suitesOut, 'index.cjs'),
    extensionTestsEnv: { WHALE_IT_SUITES: wanted.join(','), WHALE_IT_TRUSTED: 'true' },
    // First argument: the folder to open. Our own profile folders, so the seeded settings apply and
    // the developer's own extensions stay out (getProfileArguments adds none when these are given).
    launchArgs: [workspace, '--user-data-dir', userData, '--extensions-dir', join(tmp, 'extensions'), '--disable-extensions'],
  });
} catch (e) {
  console.error(`electron.mjs: ${e.message}`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
process.exit(code);
