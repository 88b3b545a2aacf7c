import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { loadTf, tf } from '../../src/policy/embedded/tf.js';
import { createModel, type TransformerModel } from '../../src/policy/embedded/model.js';
import { BatchSampler, ContextLengthError } from '../../src/policy/embedded/sampler.js';
import { Trainer, transcriptToSequence } from '../../src/policy/embedded/trainer.js';
import { tinyConfig, tinyTokenizer } from './policy-fixtures.js';

const tok = tinyTokenizer();
const cfg = tinyConfig(tok.size);
const PATTERN = 'a b c d e f g h';
let trained: TransformerModel;
let random: TransformerModel;
let sTrained: BatchSampler;
let sRandom: BatchSampler;

before(async () => {
  await loadTf();
  // A model that has learnt one reply, so greedy output is known.
  trained = createModel(cfg, 21);
  const trainer = new Trainer(trained, { learningRate: 1e-2 });
  const s = transcriptToSequence(tok, [
    { role: 'user', content: 'count' },
    { role: 'assistant', content: PATTERN },
  ]);
  for (let i = 0; i < 120; i++) trainer.pretrainStep([s.tokens], [s.weights]);
  trainer.dispose();
  random = createModel(cfg, 22);
  sTrained = new BatchSampler(trained, tok);
  sRandom = new BatchSampler(random, tok);
});

after(() => {
  sTrained.close();
  sRandom.close();
  trained.dispose();
  random.dispose();
});

const countPrompt = () => tok.encodeChat([{ role: 'user', content: 'count' }], { addGenerationPrompt: true });

/** log-softmax at each completion position from one full forward pass over prompt + completion. */
function fullLogprobs(m: TransformerModel, prompt: number[], completion: number[]): { lp: number[]; argmax: number[] } {
  const ids = [...prompt, ...completion];
  const V = m.config.vocabSize;
  const z = m.logits(Int32Array.from(ids), 1, ids.length);
  const lp: number[] = [];
  const am: number[] = [];
  completion.forEach((c, j) => {
    const row = z.subarray((prompt.length + j - 1) * V, (prompt.length + j) * V);
    const mx = Math.max(...row);
    const lse = mx + Math.log(row.reduce((a, x) => a + Math.exp(x - mx), 0));
    lp.push(row[c] - lse);
    am.push(row.indexOf(mx));
  });
  return { lp, argmax: am };
}

test('greedy decoding is deterministic and stops at <|end|> (kept in ids, not in text)', async () => {
  const r1 = await sTrained.generate({ promptIds: countPrompt(), temperature: 0 });
  const r2 = await sTrained.generate({ promptIds: countPrompt(), temperature: 0 });
  assert.equal(r1.text, PATTERN);
  assert.equal(r1.finishReason, 'stop');
  assert.equal(r1.completionTokenIds.at(-1), tok.endId);
  assert.deepEqual(r2.completionTokenIds, r1.completionTokenIds);
  assert.equal(r1.logprobs.length, r1.completionTokenIds.length);
  assert.deepEqual(r1.promptTokenIds, countPrompt());
  assert.deepEqual(r1.usage, { promptTokens: countPrompt().length, completionTokens: r1.completionTokenIds.length });
});

test('stop strings cut the text before the earliest match; max_tokens ends with length', async () => {
  const a = await sTrained.generate({ promptIds: countPrompt(), temperature: 0, stop: [' d'] });
  assert.equal(a.text, 'a b c');
  assert.equal(a.finishReason, 'stop');
  assert.equal(tok.decode(a.completionTokenIds), 'a b c d', 'the ids that produced the stop string are kept');
  const b = await sTrained.generate({ promptIds: countPrompt(), temperature: 0, stop: ['c d', 'b'] });
  assert.equal(b.text, 'a ');
  const c = await sTrained.generate({ promptIds: countPrompt(), temperature: 0, maxTokens: 3 });
  assert.equal(c.text, 'a b c');
  assert.equal(c.finishReason, 'length');
  assert.equal(c.completionTokenIds.length, 3);
  const d = await sTrained.generate({ promptIds: countPrompt(), temperature: 0.7, topP: 1e-9, seed: 5 });
  assert.equal(d.text, PATTERN, 'a vanishing nucleus is greedy');
});

test('seeded sampling is reproducible', async () => {
  const p = tok.encodeChat([{ role: 'user', content: 'hello' }], { addGenerationPrompt: true });
  const [a, b, c] = await Promise.all([
    sRandom.generate({ promptIds: p, temperature: 1, seed: 42, maxTokens: 20 }),
    sRandom.generate({ promptIds: p, temperature: 1, seed: 42, maxTokens: 20 }),
    sRandom.generate({ promptIds: p, temperature: 1, seed: 43, maxTokens: 20 }),
  ]);
  assert.deepEqual(a.completionTokenIds, b.completionTokenIds);
  assert.notDeepEqual(a.completionTokenIds, c.completionTokenIds);
  const again = await sRandom.generate({ promptIds: p, temperature: 1, seed: 42, maxTokens: 20 });
  assert.deepEqual(again.completionTokenIds, a.completionTokenIds, 'alone or in a batch, same result');
});

test('a request samples bit for bit the same alone and in any batch: its logprobs do not depend on the other prompts in its prefill pass or cache', async () => {
  const prompt = (words: number) =>
    tok.encodeChat([{ role: 'user', content: Array.from({ length: words }, (_, i) => 'abcdefgh'[i % 8]).join(' ') }], { addGenerationPrompt: true });
  let compared = 0;
  for (const words of [1, 3, 6, 10]) {
    const target = () => sRandom.generate({ promptIds: prompt(words), temperature: 1, seed: 7 + words, maxTokens: 24 });
    const alone = await target();
    for (const other of [2, 5, 9, 14, 23]) {
      // The companions come first, so the target shares their prefill pass (longer or shorter prompts, another padded length).
      const [, , r] = await Promise.all([
        sRandom.generate({ promptIds: prompt(other), temperature: 1, seed: other, maxTokens: 40 }),
        sRandom.generate({ promptIds: prompt(other + 1), temperature: 1, seed: other, maxTokens: 4 }),
        target(),
      ]);
      assert.deepEqual(r.completionTokenIds, alone.completionTokenIds, `${words} words beside ${other}`);
      assert.deepEqual(r.logprobs, alone.logprobs, `${words} words beside ${other}: logprobs bit for bit`);
      compared += r.logprobs.length;
    }
  }
  assert.ok(compared > 100, `${compared} logprobs compared`);
});

test('KV-cache decoding matches a full forward pass (logprobs and greedy choices), across a mixed concurrent batch', async () => {
  const prompts = [
    [tok.bosId],
    countPrompt(),
    tok.encodeChat(
      [
        { role: 'system', content: 'the answer is' },
        { role: 'user', content: 'hello world, search the answer' },
      ],
      { addGenerationPrompt: true },
    ),
    tok.encodeChat([{ role: 'user', content: 'é!' }], { addGenerationPrompt: true }),
  ];
  const jobs = prompts.flatMap((p, i) => [
    sRandom.generate({ promptIds: p, temperature: 1, seed: i, maxTokens: 5 + 9 * i }),
    sRandom.generate({ promptIds: p, temperature: 0, maxTokens: 40 }),
  ]);
  const results = await Promise.all(jobs);
  results.forEach((r, k) => {
    const { lp, argmax } = fullLogprobs(random, r.promptTokenIds, r.completionTokenIds);
    r.logprobs.forEach((x, j) => assert.ok(Math.abs(x - lp[j]) < 1e-4, `request ${k} token ${j}: ${x} vs ${lp[j]}`));
    if (k % 2 === 1) assert.deepEqual(r.completionTokenIds, argmax, `greedy request ${k}`);
  });
  assert.ok(
    results.some((r) => r.promptTokenIds.length + r.completionTokenIds.length > 32),
    'crossed a cache growth boundary',
  );
});

test('concurrent requests are decoded together, and late arrivals join a running batch', async () => {
  const s = new BatchSampler(random, tok);
  const p = countPrompt();
  const first = Array.from({ length: 8 }, (_, i) => s.generate({ promptIds: p, temperature: 1, seed: i, maxTokens: 30 }));
  // Wait for the first decoding step rather than a fixed time: a loaded machine may not have begun.
  while (s.stats.steps === 0) await new Promise((r) => setImmediate(r));
  const stepsBefore = s.stats.steps;
  const late = Array.from({ length: 4 }, (_, i) => s.generate({ promptIds: p, temperature: 1, seed: 100 + i, maxTokens: 30 }));
  await Promise.all([...first, ...late]);
  assert.ok(s.stats.maxPrefillBatch >= 8, `prefill batch ${s.stats.maxPrefillBatch}`);
  assert.ok(s.stats.maxBatch > 8, `max batch ${s.stats.maxBatch}: the late requests joined`);
  assert.ok(stepsBefore > 0 && stepsBefore < 30, 'the first batch was running when the late ones came');
  assert.ok(s.stats.batchSum / s.stats.steps > 4, 'mean batch size');
  assert.equal(s.busy, false);
  s.close();
});

test('context limits: a full prompt is refused, a long one stops at the context with length', async () => {
  await assert.rejects(sRandom.generate({ promptIds: Array(64).fill(tok.bosId) }), ContextLengthError);
  const p = [tok.bosId, ...Array(59).fill(tok.encode('a')[0])];
  const r = await sRandom.generate({ promptIds: p, temperature: 0 });
  if (r.finishReason === 'length') assert.equal(r.promptTokenIds.length + r.completionTokenIds.length, 64);
  await assert.rejects(sRandom.generate({ promptIds: [tok.bosId], temperature: -1 }), RangeError);
  await assert.rejects(sRandom.generate({ promptIds: [99999] }), /outside the vocabulary/);
});

test('abort and close reject, and nothing leaks', async () => {
  const t = tf();
  const s = new BatchSampler(random, tok);
  await s.generate({ promptIds: countPrompt(), maxTokens: 4 });
  const n = t.memory().numTensors;
  const ac = new AbortController();
  const job = s.generate({ promptIds: countPrompt(), maxTokens: 50, signal: ac.signal, temperature: 1, seed: 1 });
  setTimeout(() => ac.abort(), 2);
  await assert.rejects(job, /abort/i);
  for (let i = 0; i < 5; i++) await Promise.all(Array.from({ length: 6 }, (_, k) => s.generate({ promptIds: countPrompt(), maxTokens: 10 + k, seed: k })));
  assert.equal(t.memory().numTensors, n, 'cache freed when idle, no per-step leaks');
  const pending = s.generate({ promptIds: countPrompt(), maxTokens: 50 });
  s.close();
  await assert.rejects(pending, /closed/);
  await assert.rejects(s.generate({ promptIds: countPrompt() }), /closed/);
});
