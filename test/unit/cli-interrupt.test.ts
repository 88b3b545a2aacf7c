// Ctrl-C in the middle of a unit of work (a weight step's rollouts or its training call) is a stop,
// not a crash: no stack trace, exit 130, and the run resumes to completion.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeTestSecret } from '../support/smallProject.js';

const bin = join(fileURLToPath(new URL('../..', import.meta.url)), 'bin/whale.js');

test('Ctrl-C during a weight step exits 130 with no stack trace, and --run ID resumes the run to the end', { timeout: 300_000 }, async () => {
  const project = join(mkdtempSync(join(tmpdir(), 'whale-interrupt-')), 'p');
  assert.equal(spawnSync(process.execPath, [bin, 'init', project, '--domain', 'ramble', '--template', 'tiny'], { encoding: 'utf8' }).status, 0);
  writeTestSecret(project);
  const child = spawn(process.execPath, [bin, 'run', '--method', 'weight-only'], { cwd: project });
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      // The first weight step's rollouts are under way: interrupt it there.
      if (/phase 0 step 1\/\d+: [1-9]\d*\/\d+ rollouts/.test(stderr)) resolve();
    });
    void exited.then(() => reject(new Error(`the run ended before its first weight step was under way:\n${stderr}`)));
  });
  child.kill('SIGINT');
  const code = await exited;
  assert.equal(code, 130, stderr);
  assert.match(stderr, /whale: interrupted \(.*\); what finished is kept: resume with `whale run --run \S+`/);
  assert.doesNotMatch(stderr, /internal error|\n\s+at /, 'no stack trace');
  const runId = /--run (\S+)`/.exec(stderr)![1];
  const resumed = spawnSync(process.execPath, [bin, 'run', '--run', runId], { cwd: project, encoding: 'utf8', timeout: 240_000 });
  assert.equal(resumed.status, 0, resumed.stderr);
  assert.match(resumed.stdout, new RegExp(`run ${runId}: schedule complete`));
});
