// Issue 12 §12: resume and cache hits do not read a trajectory file whole. A file past 512 MB
// (Node's longest string) cannot be read as one string at all, so this test resumes from one: three
// real rollouts and ~530 MB of blank lines (written fast, deleted after).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ResultStore } from '../../src/archive/resultStore.js';
import { getDomain } from '../../src/domains/index.js';
import { evaluate } from '../../src/engine/evaluate.js';
import type { HarnessRuntime } from '../../src/harness/runtime.js';
import { createBackend } from '../../src/policy/index.js';
import type { PolicyBackend } from '../../src/policy/types.js';
import { defaultRuntime, h0EvalOptions } from '../support/evalRig.js';

const root = mkdtempSync(join(tmpdir(), 'whale-large-'));
const domain = getDomain('kbqa');
let backend: PolicyBackend;
let runtime: HarnessRuntime;
before(async () => {
  backend = await createBackend({ kind: 'embedded', model: 'base', maxBatch: 64 }, { storeDir: root });
  runtime = defaultRuntime(domain, backend, join(root, 'cache'), 4);
});
after(async () => {
  await runtime.close();
  await backend.close();
  rmSync(root, { recursive: true, force: true });
});

const opts = (store: string) => h0EvalOptions(store, runtime, domain, backend, { k: 2, seed: 9, concurrency: 4, limit: 2, runId: 'run-big' });

test('an evaluation resumes, and is then a cache hit, from a trajectory file larger than 512 MB', { timeout: 300_000 }, async () => {
  const store = join(root, 'store');
  const first = await evaluate(opts(store));
  const file = first.trajectoriesFile;
  const lines = readFileSync(file, 'utf8').trim().split('\n');
  assert.equal(lines.length, 4);
  // Keep three rollouts (the fourth "was lost in a crash") and pad with blank lines to > 512 MB.
  rmSync(join(new ResultStore(store).dirFor(first.summary.keyHash), 'summary.json'));
  writeFileSync(file, lines.slice(0, 3).join('\n') + '\n');
  const fd = openSync(file, 'a');
  const blank = Buffer.from(' '.repeat(1024 * 1024 - 1) + '\n');
  for (let i = 0; i < 530; i++) writeSync(fd, blank);
  closeSync(fd);
  assert.ok(statSync(file).size > 512 * 1024 * 1024);

  const resumed = await evaluate(opts(store));
  assert.equal(resumed.newRollouts, 1, 'only the lost rollout is run again');
  assert.equal(resumed.summary.rollouts, 4);
  assert.equal(resumed.summary.meanAtK, first.summary.meanAtK);
  const hit = await evaluate(opts(store));
  assert.equal(hit.cacheHit, true);
  assert.equal(hit.runRollouts, 4, 'counted from the summary');
  rmSync(file);
});
