import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { loadTf, tf } from '../../src/policy/embedded/tf.js';
import { createModel, type TransformerModel } from '../../src/policy/embedded/model.js';
import {
  computeGradients,
  minibatchPlan,
  rsftSequences,
  Trainer,
  trainRsft,
  transcriptToSequence,
  pretrainSequences,
} from '../../src/policy/embedded/trainer.js';
import type { TrainExample } from '../../src/policy/types.js';
import { tinyConfig, tinyTokenizer } from './policy-fixtures.js';

before(async () => {
  await loadTf();
});

const tok = tinyTokenizer();
const cfg = tinyConfig(tok.size);
const id = (w: string) => tok.encode(w)[0];

function examples(): TrainExample[] {
  const prompt = tok.encodeChat([{ role: 'user', content: 'count' }], { addGenerationPrompt: true });
  return [
    { promptTokenIds: prompt, completionTokenIds: [id('a'), id(' b'), id(' c'), tok.endId], lossMask: [1, 1, 1, 1] },
    // a tool-output token in the middle of a completion: kept in context, not trained
    { promptTokenIds: prompt, completionTokenIds: [id('hello'), id(' world'), id(' the'), tok.endId], lossMask: [1, 0, 1, 1] },
    { promptTokenIds: [tok.bosId, id('the')], completionTokenIds: [id(' answer'), id(' is')], lossMask: [1, 1] },
  ];
}

/** Per-example mean log-likelihood of trained tokens, from a plain full forward pass. */
function meanLogLik(m: TransformerModel, exs: TrainExample[]): number[] {
  return exs.map((e) => {
    const ids = [...e.promptTokenIds, ...e.completionTokenIds];
    const z = m.logits(Int32Array.from(ids), 1, ids.length);
    const V = m.config.vocabSize;
    let s = 0;
    let n = 0;
    e.lossMask.forEach((mk, j) => {
      if (!mk) return;
      const pos = e.promptTokenIds.length + j - 1;
      const row = z.subarray(pos * V, (pos + 1) * V);
      const mx = Math.max(...row);
      const lse = mx + Math.log(row.reduce((a, x) => a + Math.exp(x - mx), 0));
      s += row[e.completionTokenIds[j]] - lse;
      n++;
    });
    return s / n;
  });
}

function gradArrays(m: TransformerModel, exs: TrainExample[]) {
  const r = computeGradients(m, rsftSequences(exs, m.config.vocabSize));
  const out = new Map<string, Float32Array>();
  for (const [k, g] of r.grads) {
    out.set(k, g.dataSync() as Float32Array);
    g.dispose();
  }
  return { loss: r.loss, tokens: r.tokens, grads: out };
}

test('the RSFT loss: token-mean is −Σ logp / trained tokens; sequence-mean the mean over trajectories of their token means', () => {
  const m = createModel(cfg, 11);
  const exs = examples();
  const ll = meanLogLik(m, exs);
  const n = exs.map((e) => e.lossMask.filter((x) => x).length); // 4, 3, 2
  const tokenMean = -ll.reduce((a, l, i) => a + l * n[i], 0) / (n[0] + n[1] + n[2]);
  const r = gradArrays(m, exs);
  assert.ok(Math.abs(r.loss - tokenMean) < 1e-5, `token-mean ${r.loss} vs ${tokenMean}`);
  assert.equal(r.tokens, 4 + 3 + 2);
  const seqMean = -ll.reduce((a, b) => a + b, 0) / ll.length;
  const s = computeGradients(m, rsftSequences(exs, cfg.vocabSize, 'sequence-mean'));
  for (const g of s.grads.values()) g.dispose();
  assert.ok(Math.abs(s.loss - seqMean) < 1e-5, `sequence-mean ${s.loss} vs ${seqMean}`);
  // Examples 0 and 1 from one trajectory: in sequence-mean it counts once, with its 7 tokens pooled.
  const grouped = exs.map((e, i) => ({ ...e, group: i < 2 ? 't' : 'u' }));
  const pooled = -((ll[0] * n[0] + ll[1] * n[1]) / (n[0] + n[1]) + ll[2]) / 2;
  const g = computeGradients(m, rsftSequences(grouped, cfg.vocabSize, 'sequence-mean'));
  for (const x of g.grads.values()) x.dispose();
  assert.ok(Math.abs(g.loss - pooled) < 1e-5, `grouped sequence-mean ${g.loss} vs ${pooled}`);
  m.dispose();
});

test('minibatches are cut by trajectory: the examples of one trajectory share a minibatch; without groups the plan is per example as before', () => {
  const groups = ['a', 'b', 'a', 'c', 'd', 'b', 'e', undefined, undefined];
  for (const seed of [1, 2, 3, 4]) {
    const plan = minibatchPlan(groups.length, { minibatchSize: 2, seed }, groups);
    assert.deepEqual(plan.flat().sort(), [...groups.keys()], 'every example once');
    for (const g of ['a', 'b'])
      assert.equal(new Set(plan.map((mb, k) => (mb.some((i) => groups[i] === g) ? k : -1)).filter((k) => k >= 0)).size, 1, `trajectory ${g} in one minibatch`);
    assert.ok(
      plan.every((mb) => new Set(mb.map((i) => groups[i] ?? `#${i}`)).size <= 2),
      'minibatchSize counts trajectories',
    );
  }
  assert.deepEqual(minibatchPlan(5, { minibatchSize: 2, seed: 7 }, []), minibatchPlan(5, { minibatchSize: 2, seed: 7 }));
});

test('masked tokens contribute nothing; a fully masked example gives zero gradient and does not dilute the mean', () => {
  const m = createModel(cfg, 12);
  const exs = examples();
  const base = gradArrays(m, exs);
  // Change the target of a masked final token: nothing may change.
  const changed = exs.map((e) => ({ ...e, completionTokenIds: [...e.completionTokenIds], lossMask: [...e.lossMask] }));
  changed[2] = { ...changed[2], completionTokenIds: [id(' answer'), id(' is'), id(' world')], lossMask: [1, 1, 0] };
  const same = gradArrays(m, changed);
  assert.equal(same.loss, base.loss);
  for (const [k, g] of base.grads) assert.deepEqual(same.grads.get(k), g, k);

  const fullyMasked: TrainExample = { promptTokenIds: [tok.bosId], completionTokenIds: [id('a'), id(' b')], lossMask: [0, 0] };
  const alone = gradArrays(m, [fullyMasked]);
  assert.equal(alone.loss, 0);
  assert.equal(alone.tokens, 0);
  assert.equal(alone.grads.size, 0, 'no gradient at all');
  const withIt = gradArrays(m, [...exs, fullyMasked]);
  assert.equal(withIt.loss, base.loss);
  for (const [k, g] of base.grads) assert.deepEqual(withIt.grads.get(k), g, k);

  // An optimizer step on only masked tokens leaves the weights (and so the version) unchanged.
  const v0 = m.versionId();
  const trainer = new Trainer(m, { learningRate: 0.1 });
  assert.equal(trainer.rsftStep([fullyMasked]).tokens, 0);
  assert.equal(m.versionId(), v0);
  trainer.dispose();
  m.dispose();
});

test('microbatching does not change the gradient', () => {
  const m = createModel(cfg, 13);
  const seqs = rsftSequences(examples(), cfg.vocabSize);
  const whole = computeGradients(m, seqs, 1 << 20);
  const split = computeGradients(m, seqs, 12); // one sequence per pass
  assert.ok(Math.abs(whole.loss - split.loss) < 1e-6);
  for (const [k, g] of whole.grads) {
    const a = g.dataSync();
    const b = split.grads.get(k)!.dataSync();
    for (let i = 0; i < a.length; i++) assert.ok(Math.abs(a[i] - b[i]) < 1e-6, k);
  }
  for (const g of [...whole.grads.values(), ...split.grads.values()]) g.dispose();
  m.dispose();
});

test('RSFT steps raise the mean log-likelihood of the trained completions', async () => {
  const m = createModel(cfg, 14);
  const exs = examples();
  const before = meanLogLik(m, exs);
  const trainer = new Trainer(m, { learningRate: 3e-3, adam: { weightDecay: 0.01 } });
  const steps: number[] = [];
  const r = await trainRsft(trainer, exs, { learningRate: 3e-3, minibatchSize: 2, epochs: 5, seed: 1 }, { onStep: (_step, l) => steps.push(l) });
  assert.equal(r.optimizerSteps, 10);
  assert.equal(steps.length, 10);
  const after = meanLogLik(m, exs);
  after.forEach((a, i) => assert.ok(a > before[i] + 0.5, `example ${i}: ${before[i]} → ${a}`));
  assert.ok(r.losses.at(-1)! < r.losses[0]);
  trainer.dispose();
  m.dispose();
});

test('fractional epochs and abort', async () => {
  const m = createModel(cfg, 15);
  const trainer = new Trainer(m, { learningRate: 1e-3 });
  const exs = [...examples(), ...examples(), ...examples(), ...examples()]; // 12 examples → 6 minibatches of 2
  const r = await trainRsft(trainer, exs, { learningRate: 1e-3, minibatchSize: 2, epochs: 0.5 });
  assert.equal(r.optimizerSteps, 3);
  const ac = new AbortController();
  ac.abort(new Error('stop now'));
  await assert.rejects(trainRsft(trainer, exs, { learningRate: 1e-3, minibatchSize: 2 }, { signal: ac.signal }), /stop now/);
  assert.throws(() => rsftSequences([{ promptTokenIds: [1], completionTokenIds: [2], lossMask: [] }], cfg.vocabSize), /training example 0: lossMask/);
  trainer.dispose();
  m.dispose();
});

test('pretraining: transcripts become weighted sequences; steps lower the loss; the context cut keeps <bos>', () => {
  const t = tf();
  const m = createModel(cfg, 16);
  const msgs = [
    { role: 'user' as const, content: 'count' },
    { role: 'assistant' as const, content: 'a b c d e f g h' },
  ];
  const s = transcriptToSequence(tok, msgs, { user: 0 });
  assert.deepEqual(s.tokens, tok.encodeChat(msgs));
  assert.equal(s.weights[0], 0);
  assert.equal(s.weights[1], 0, 'user turn weighted 0');
  assert.equal(s.weights.at(-1), 1);
  const norm = pretrainSequences([s.tokens], [s.weights]);
  assert.ok(Math.abs(Array.from(norm[0].weights).reduce((a, b) => a + b, 0) - 1) < 1e-6);
  const trainer = new Trainer(m, { learningRate: 1e-2 });
  const first = trainer.pretrainStep([s.tokens], [s.weights]).loss;
  let last = first;
  for (let i = 0; i < 30; i++) last = trainer.pretrainStep([s.tokens], [s.weights]).loss;
  assert.ok(last < first / 2, `${first} → ${last}`);
  // Longer than the context (64): trained on <bos> + the last 63 tokens, without error.
  const long = [tok.bosId, ...Array.from({ length: 100 }, (_, i) => 10 + (i % 20))];
  const r = trainer.pretrainStep([long]);
  assert.equal(r.tokens, 63);
  assert.ok(Number.isFinite(r.loss));
  const n = t.memory().numTensors;
  trainer.pretrainStep([long]);
  assert.equal(t.memory().numTensors, n);
  trainer.dispose();
  m.dispose();
});
