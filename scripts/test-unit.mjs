#!/usr/bin/env node
// Runs the unit tests (the files given) under node's test runner with a temporary folder of their own,
// removed when they end: the tests and the engines, servers and harnesses they start all write under
// os.tmpdir(), and a test that fails or is killed mid-way cannot clean up after itself. Left in /tmp,
// a few hundred runs filled this machine's disk once (ENOSPC in the next CI run).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: node scripts/test-unit.mjs FILE...');
  process.exit(2);
}
const dir = mkdtempSync(join(tmpdir(), 'whale-unit-'));
const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=1', ...files], {
  stdio: 'inherit',
  env: { ...process.env, TMPDIR: dir },
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code) => {
  rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  process.exit(code ?? 1); // no code: killed by a signal
});
