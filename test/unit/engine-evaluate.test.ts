// Evaluation end to end on the real parts: the shipped base policy (embedded, tfjs-wasm), the real
// sandboxed runtime and the kbqa domain's h0 harness.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ResultStore } from '../../src/archive/resultStore.js';
import { getDomain } from '../../src/domains/index.js';
import { evaluate, type EvaluateOptions } from '../../src/engine/evaluate.js';
import { HarnessRuntime, type PreparedHarness } from '../../src/harness/runtime.js';
import { createBackend } from '../../src/policy/index.js';
import type { PolicyBackend } from '../../src/policy/types.js';
import { defaultRuntime, h0EvalOptions } from '../support/evalRig.js';

const store = mkdtempSync(join(tmpdir(), 'whale-eval-'));
const domain = getDomain('kbqa');
let backend: PolicyBackend;
let runtime: HarnessRuntime;

before(async () => {
  backend = await createBackend({ kind: 'embedded', model: 'base', maxBatch: 64 }, { storeDir: store });
  runtime = defaultRuntime(domain, backend, join(store, 'cache'), 8);
});
after(async () => {
  await runtime.close();
  await backend.close();
  rmSync(store, { recursive: true, force: true });
});

function opts(over: Partial<EvaluateOptions<PreparedHarness>> = {}): EvaluateOptions<PreparedHarness> {
  return h0EvalOptions(store, runtime, domain, backend, { k: 2, seed: 7, concurrency: 8, limit: 6, ...over });
}

test('mean@k with its standard error, per-task results and trajectories with token ids', async () => {
  const r = await evaluate(opts());
  assert.equal(r.cacheHit, false);
  assert.equal(r.newRollouts, 12);
  assert.equal(r.summary.rollouts, 12);
  assert.equal(r.tasks.length, 6);
  const passes = r.tasks.reduce((a, t) => a + t.passes, 0);
  assert.equal(r.summary.meanAtK, r.tasks.reduce((a, t) => a + t.mean, 0) / 6);
  assert.ok(passes >= 0 && passes <= 12);
  assert.ok(Number.isFinite(r.summary.standardError));
  const lines = readFileSync(r.trajectoriesFile, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.equal(lines.length, 12);
  for (const t of lines) {
    assert.equal(t.policyVersion, backend.currentVersion());
    assert.equal(t.harnessHash, r.summary.key.harnessHash);
    assert.ok(t.modelCalls.length >= 1);
    assert.ok(t.modelCalls[0].completionTokenIds.length > 0, 'token ids recorded');
    assert.equal(t.modelCalls[0].logprobs.length, t.modelCalls[0].completionTokenIds.length);
    assert.ok(typeof t.verdict.reason === 'string' && t.verdict.reason.length > 0);
    assert.ok(t.termination);
  }
});

test('a repeated evaluation is a cache hit costing no rollouts', async () => {
  const first = await evaluate(opts());
  const again = await evaluate(opts());
  assert.equal(again.cacheHit, true);
  assert.equal(again.newRollouts, 0);
  assert.deepEqual(again.summary, first.summary);
});

test('another seed or another policy version is a different key (a miss)', async () => {
  const a = await evaluate(opts());
  const b = await evaluate(opts({ seed: 8, limit: 2 }));
  assert.notEqual(a.summary.keyHash, b.summary.keyHash);
  assert.equal(b.cacheHit, false);
  const c = await evaluate(opts({ policyVersion: 'some-other-version', limit: 2, seed: 8 }));
  assert.notEqual(c.summary.keyHash, b.summary.keyHash);
});

test('an interrupted evaluation resumes: finished rollouts are kept, a torn line is dropped, none is repeated', async () => {
  const o = opts({ seed: 11, limit: 4 });
  const full = await evaluate(o);
  const dir = new ResultStore(store).dirFor(full.summary.keyHash);
  // Simulate a kill after 3 rollouts, in the middle of writing the 4th line.
  const kept = readFileSync(full.trajectoriesFile, 'utf8').trim().split('\n').slice(0, 3);
  writeFileSync(full.trajectoriesFile, kept.join('\n') + '\n');
  appendFileSync(full.trajectoriesFile, kept[0].slice(0, 40));
  rmSync(join(dir, 'summary.json'));
  rmSync(join(dir, 'tasks.json'));
  const resumed = await evaluate(o);
  assert.equal(resumed.cacheHit, false);
  assert.equal(resumed.newRollouts, 8 - 3);
  assert.equal(resumed.summary.rollouts, 8);
  const lines = readFileSync(resumed.trajectoriesFile, 'utf8').trim().split('\n');
  assert.equal(lines.length, 8);
  const ids = lines.map((l) => JSON.parse(l)).map((t: { taskId: string; sampleIndex: number }) => `${t.taskId}#${t.sampleIndex}`);
  assert.equal(new Set(ids).size, 8, 'no rollout repeated');
  assert.ok(existsSync(join(dir, 'summary.json')));
});

test('two engines sharing a store evaluate the same key once: the second waits and gets a cache hit', async () => {
  const o = opts({ seed: 21, limit: 3 });
  const [a, b] = await Promise.all([evaluate(o), evaluate(o)]);
  assert.equal(a.newRollouts + b.newRollouts, 6, 'each rollout run exactly once');
  assert.ok(a.cacheHit !== b.cacheHit);
  assert.equal(readFileSync(a.trajectoriesFile, 'utf8').trim().split('\n').length, 6);
});
