// One online RSFT step on the real parts: the shipped embedded model, the sandboxed harness runtime,
// ramble-h0, B 4 × G 4. The verifier is relaxed (any reply that ended on its own passes) so that the
// tiny slice is sure to have accepted trajectories; the ramble verifier itself is tested elsewhere.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ResultStore } from '../../src/archive/resultStore.js';
import { SandboxLimitsSchema, SamplingSchema } from '../../src/core/config.js';
import { getDomain } from '../../src/domains/index.js';
import type { Domain } from '../../src/domains/types.js';
import { trajectoriesToExamples } from '../../src/engine/rsftExamples.js';
import {
  EMBEDDED_RSFT_DEFAULTS,
  PAPER_RSFT_DEFAULTS,
  batchForStep,
  runWeightStep,
  samplerSeed,
  stepExamples,
  stepSeed,
  truncated,
  type WeightStepContext,
} from '../../src/engine/weightPhase.js';
import { HarnessRuntime, type PreparedHarness } from '../../src/harness/runtime.js';
import { EmbeddedBackend } from '../../src/policy/embedded/index.js';

const dir = mkdtempSync(join(tmpdir(), 'whale-weight-step-'));
const ramble = getDomain('ramble');
const relaxed: Domain = {
  ...ramble,
  id: 'ramble-relaxed',
  verify: (_task, r) => {
    const stopped = r.modelCalls.length > 0 && r.modelCalls.every((c) => c.finishReason === 'stop');
    return { pass: stopped, score: stopped ? 1 : 0, extracted: r.finalAnswer, reason: stopped ? 'replied within budget' : 'cut off' };
  },
  checkRules: () => null,
};
const never: Domain = { ...ramble, id: 'ramble-never', verify: () => ({ pass: false, score: 0, extracted: null, reason: 'never' }) };
let backend: EmbeddedBackend;
let runtime: HarnessRuntime;
let neverRuntime: HarnessRuntime;
const store = new ResultStore(join(dir, 'store'));
const sampling = SamplingSchema.parse({});
const limits = SandboxLimitsSchema.parse({});

before(async () => {
  backend = await EmbeddedBackend.open({ versionsDir: join(dir, 'versions'), sampler: { maxBatch: 16 } });
  runtime = new HarnessRuntime({ domain: relaxed, backend, limits, sampling, concurrency: 8, cacheDir: join(dir, 'cache') });
  neverRuntime = new HarnessRuntime({ domain: never, backend, limits, sampling, concurrency: 8, cacheDir: join(dir, 'cache') });
});
after(async () => {
  await runtime?.close();
  await neverRuntime?.close();
  await backend?.close();
  rmSync(dir, { recursive: true, force: true });
});

function ctx(over: Partial<WeightStepContext<PreparedHarness>> = {}): WeightStepContext<PreparedHarness> {
  return {
    backend,
    runner: runtime,
    store,
    domain: relaxed,
    harnessDir: ramble.h0Dir,
    globalStep: 0,
    runSeed: 1,
    hyper: { batchSize: 4, groupSize: 4, learningRate: 1e-3, minibatchSize: 8 },
    sampling,
    limits,
    concurrency: 8,
    ...over,
  };
}

let base = '';
let step0: Awaited<ReturnType<typeof runWeightStep>>;

test('a step samples B×G rollouts under the current version, trains on the accepted ones and publishes the new version', async () => {
  base = backend.currentVersion();
  const trainSteps: number[] = [];
  let progress = 0;
  step0 = await runWeightStep(ctx({ onTrainStep: (s) => trainSteps.push(s), onRollouts: (d) => (progress = d) }));
  const m = step0;
  assert.equal(m.globalStep, 0);
  assert.equal(m.tasks, 4);
  assert.equal(m.rollouts, 16);
  assert.equal(m.newRollouts, 16);
  assert.equal(progress, 16);
  assert.ok(m.accepted > 0, 'the relaxed verifier passes some of 16 rollouts');
  assert.equal(m.acceptedFraction, m.accepted / 16);
  assert.equal(m.meanReward, m.accepted / 16);
  assert.equal(m.trained, true);
  assert.equal(m.fromRecord, false);
  assert.equal(m.versionBefore, base);
  assert.notEqual(m.versionAfter, base);
  assert.equal(backend.currentVersion(), m.versionAfter, 'published before the next step');
  assert.equal(backend.store.readMeta(m.versionAfter).parent, base);
  assert.ok(m.examples >= 1 && m.examples <= m.accepted);
  assert.equal(m.optimizerSteps, Math.ceil(m.examples / 8));
  assert.deepEqual(
    trainSteps,
    Array.from({ length: m.optimizerSteps }, (_, i) => i + 1),
  );
  assert.ok(m.trainedTokens > 0);
  assert.ok(Number.isFinite(m.meanLoss) && m.meanLoss > 0);
  assert.equal(m.seed, stepSeed(1, 0));
  assert.ok(m.wallMs >= m.rolloutMs && m.trainMs > 0);

  // The rollouts are an evaluation over the batch (k = G), stored and complete, all under θ_old.
  const summary = store.summary(m.evalKeyHash);
  assert.ok(summary, 'the rollouts are stored as an evaluation');
  assert.equal(summary.k, 4);
  assert.equal(summary.key.split, 'weight');
  assert.equal(summary.key.policyVersion, base);
  const ts = store.loadTrajectories(m.evalKeyHash);
  const batch = batchForStep(ramble.tasks('weight'), 4, 0, samplerSeed(1));
  assert.deepEqual([...new Set(ts.map((t) => t.taskId))].sort(), batch.map((t) => t.id).sort());
  assert.ok(ts.every((t) => t.policyVersion === base));
  assert.equal(m.truncationRate, ts.filter(truncated).length / 16);
  assert.ok(m.truncationRate > 0, 'the base model rambles past 24 tokens sometimes');
});

test('the same step again (resumed at the same version) costs no rollouts and no training: same version', async () => {
  await backend.publish(base);
  const again = await runWeightStep(ctx());
  assert.equal(again.newRollouts, 0);
  assert.equal(again.fromRecord, true);
  assert.equal(again.trainMs, 0);
  assert.equal(again.versionAfter, step0.versionAfter);
  assert.equal(again.accepted, step0.accepted);
  assert.equal(backend.currentVersion(), step0.versionAfter);
});

test('training is bit-exact from the same start (weights, fresh optimizer state, rollouts in any order, seed)', async () => {
  // Rollouts finish (and are stored) in an order that depends on concurrency: the examples do not.
  const ts = store.loadTrajectories(step0.evalKeyHash).reverse();
  const batch = batchForStep(ramble.tasks('weight'), 4, 0, samplerSeed(1));
  const examples = stepExamples(ts, batch);
  assert.deepEqual(stepExamples(ts.reverse(), batch), examples);
  assert.equal(examples.length, trajectoriesToExamples(ts.filter((t) => t.verdict.pass)).examples.length);
  const other = await EmbeddedBackend.open({ versionsDir: join(dir, 'versions-2') });
  try {
    assert.equal(other.currentVersion(), base);
    const r = await other.train(examples, { learningRate: 1e-3, minibatchSize: 8, epochs: 1, seed: step0.seed });
    assert.equal(r.version, step0.versionAfter);
  } finally {
    await other.close();
  }
});

test('the next step samples under the published version and moves the sampler on', async () => {
  const m = await runWeightStep(ctx({ globalStep: 1 }));
  assert.equal(m.versionBefore, step0.versionAfter);
  assert.ok(store.loadTrajectories(m.evalKeyHash).every((t) => t.policyVersion === step0.versionAfter));
  const b0 = batchForStep(ramble.tasks('weight'), 4, 0, samplerSeed(1)).map((t) => t.id);
  const b1 = batchForStep(ramble.tasks('weight'), 4, 1, samplerSeed(1)).map((t) => t.id);
  assert.equal(b0.filter((id) => b1.includes(id)).length, 0);
  if (m.trained) assert.equal(backend.currentVersion(), m.versionAfter);
});

test('when nothing passes there is no training and the version stays', async () => {
  const v = backend.currentVersion();
  const m = await runWeightStep(ctx({ runner: neverRuntime, domain: never, globalStep: 2 }));
  assert.equal(m.accepted, 0);
  assert.equal(m.trained, false);
  assert.equal(m.examples, 0);
  assert.equal(m.optimizerSteps, 0);
  assert.ok(Number.isNaN(m.meanLoss));
  assert.equal(m.versionAfter, v);
  assert.equal(backend.currentVersion(), v);
  const again = await runWeightStep(ctx({ runner: neverRuntime, domain: never, globalStep: 2 }));
  assert.equal(again.fromRecord, true);
  assert.ok(Number.isNaN(again.meanLoss));
});

test("defaults: the paper's for real backends, a CPU-sized one for the embedded model", async () => {
  assert.deepEqual({ ...PAPER_RSFT_DEFAULTS }, { batchSize: 256, groupSize: 8, learningRate: 1e-7, minibatchSize: 64 });
  assert.ok(EMBEDDED_RSFT_DEFAULTS.batchSize * EMBEDDED_RSFT_DEFAULTS.groupSize <= 512);
  assert.equal(EMBEDDED_RSFT_DEFAULTS.groupSize, 8);
  await assert.rejects(runWeightStep(ctx({ hyper: { batchSize: 0, groupSize: 4, learningRate: 1e-3, minibatchSize: 8 } })), /batchSize/);
});
