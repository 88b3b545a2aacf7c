// RSFT examples from trajectories: the loss mask (model tokens 1; prompt, tool and harness tokens 0),
// merging of consecutive calls, and the objective — on hand-built token ids and on real multi-turn
// kbqa rollouts of the shipped embedded model through the real harness runtime.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxLimitsSchema, SamplingSchema } from '../../src/core/config.js';
import type { ModelCall, Trajectory } from '../../src/core/trajectory.js';
import { harnessDir } from '../../src/domains/common.js';
import { getDomain } from '../../src/domains/index.js';
import { MissingTokenIdsError, chatTemplateFallback, rsftObjective, trajectoriesToExamples } from '../../src/engine/rsftExamples.js';
import { HarnessRuntime } from '../../src/harness/runtime.js';
import { EmbeddedBackend, computeGradients, rsftSequences } from '../../src/policy/embedded/index.js';

function call(
  index: number,
  prompt: number[] | undefined,
  completion: number[] | undefined,
  finishReason: ModelCall['finishReason'] = 'stop',
  logprobs?: number[],
): ModelCall {
  return {
    index,
    policyVersion: 'v',
    messages: [{ role: 'user', content: `call ${index}` }],
    params: {},
    completion: `c${index}`,
    finishReason,
    ...(prompt ? { promptTokenIds: prompt } : {}),
    ...(completion ? { completionTokenIds: completion } : {}),
    ...(logprobs ? { logprobs } : {}),
    usage: { promptTokens: prompt?.length ?? 0, completionTokens: completion?.length ?? 0 },
    latencyMs: 1,
  };
}

function traj(id: string, calls: ModelCall[], pass = true): Trajectory {
  return {
    id,
    domain: 'd',
    harnessHash: 'h',
    policyVersion: 'v',
    taskId: 't',
    split: 'weight',
    sampleIndex: 0,
    seed: 1,
    modelCalls: calls,
    events: [],
    finalAnswer: 'x',
    termination: 'answered',
    verdict: { pass, score: pass ? 1 : 0, extracted: 'x', reason: 'correct' },
    timings: { startedAt: new Date(0).toISOString(), wallMs: 1, modelMs: 1, toolMs: 0 },
  };
}

// Token ids for the hand-built cases: 1 <bos>, 3 <|user|>, 4 <|assistant|>, 5 <|tool|>, 6 <|end|>, words ≥ 10.
const P1 = [1, 3, 10, 11, 6, 4]; // <bos><|user|> q q <|end|><|assistant|>
const C1 = [20, 21, 6]; // model: search X <|end|>
const TOOL = [5, 30, 31, 32, 6, 4]; // <|tool|> fact fact fact <|end|><|assistant|>
const C2 = [22, 23, 6]; // model: answer Y <|end|>

test('consecutive calls whose prompts extend prompt + completion merge into one example; tool tokens masked', () => {
  const t = traj('t1', [call(0, P1, C1), call(1, [...P1, ...C1, ...TOOL], C2)]);
  const r = trajectoriesToExamples([t]);
  assert.equal(r.examples.length, 1);
  const [e] = r.examples;
  assert.deepEqual(e.promptTokenIds, P1);
  assert.deepEqual(e.completionTokenIds, [...C1, ...TOOL, ...C2]);
  assert.deepEqual(e.lossMask, [1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1]);
  assert.deepEqual(r.sources, [{ trajectoryId: 't1', callIndices: [0, 1] }]);
  assert.equal(r.trainedTokens, 6);
  assert.equal(r.contextTokens, 6);
  assert.equal(r.calls, 2);
});

test('three turns with feedback: every completion trained once, everything between masked', () => {
  const FEEDBACK = [3, 40, 41, 6, 4];
  const C3 = [24, 25];
  const p2 = [...P1, ...C1, ...FEEDBACK];
  const p3 = [...p2, ...C2, ...TOOL];
  const r = trajectoriesToExamples([traj('t', [call(0, P1, C1), call(1, p2, C2), call(2, p3, C3, 'length')])]);
  assert.equal(r.examples.length, 1);
  const e = r.examples[0];
  assert.deepEqual(e.completionTokenIds, [...C1, ...FEEDBACK, ...C2, ...TOOL, ...C3]);
  assert.deepEqual(e.lossMask, [...C1.map(() => 1), ...FEEDBACK.map(() => 0), ...C2.map(() => 1), ...TOOL.map(() => 0), ...C3.map(() => 1)]);
});

test('a reply cut at max_tokens (no <|end|>) still merges: the harness-closed <|end|> is masked', () => {
  const cut = [20, 21]; // no <|end|>: finish 'length'
  const p2 = [...P1, ...cut, 6, 3, 40, 6, 4]; // the template closes the reply, then a user turn
  const r = trajectoriesToExamples([traj('t', [call(0, P1, cut, 'length'), call(1, p2, C2)])]);
  assert.equal(r.examples.length, 1);
  assert.deepEqual(r.examples[0].lossMask, [1, 1, 0, 0, 0, 0, 0, 1, 1, 1]);
  assert.equal(r.examples[0].completionTokenIds[2], 6);
});

test('a prompt that does not extend the previous one starts its own example (edited reply, dropped context)', () => {
  const edited = [...P1, 20, 99, 6, ...TOOL]; // the harness rewrote the reply before sending it back
  const fresh = [1, 3, 12, 6, 4]; // a new conversation
  const r = trajectoriesToExamples([traj('t', [call(0, P1, C1), call(1, edited, C2), call(2, fresh, [26, 6])])]);
  assert.equal(r.examples.length, 3);
  assert.deepEqual(r.examples[1].promptTokenIds, edited);
  assert.deepEqual(r.examples[1].lossMask, [1, 1, 1]);
  assert.deepEqual(r.examples[2].lossMask, [1, 1]);
  assert.deepEqual(
    r.sources.map((s) => s.callIndices),
    [[0], [1], [2]],
  );
  // merge: false gives one example per call even when prompts line up
  const t = traj('t', [call(0, P1, C1), call(1, [...P1, ...C1, ...TOOL], C2)]);
  assert.equal(trajectoriesToExamples([t], { merge: false }).examples.length, 2);
});

test('calls that failed (finishReason error) are skipped; examples keep trajectory order; no-token examples dropped', () => {
  const a = traj('a', [call(0, P1, C1), call(1, [...P1, ...C1], [], 'error'), call(2, [...P1, ...C1, ...TOOL], C2)]);
  const b = traj('b', [call(0, [1, 3, 13, 6, 4], [])]); // an empty completion: nothing to train
  const r = trajectoriesToExamples([a, b]);
  assert.equal(r.skippedErrorCalls, 1);
  assert.equal(r.examples.length, 1, 'the error call neither trains nor breaks the merge');
  assert.deepEqual(r.sources[0].callIndices, [0, 2]);
});

test('calls without token ids are an error naming the trajectory, unless a tokenizer fallback is given', () => {
  const t = traj('traj-42', [call(0, undefined, undefined)]);
  assert.throws(
    () => trajectoriesToExamples([t]),
    (e: unknown) => e instanceof MissingTokenIdsError && /traj-42/.test(e.message) && /call 0/.test(e.message),
  );
  const tok = { encodeChat: () => [1, 3, 10, 6, 4], encode: (s: string) => [...s].map((c) => c.charCodeAt(0)), endId: 6 };
  const r = trajectoriesToExamples([t], { fallback: chatTemplateFallback(tok) });
  assert.equal(r.fallbackCalls, 1);
  assert.deepEqual(r.examples[0].completionTokenIds, [99, 48, 6]); // 'c0' + <|end|>
});

test('the objective: token-mean = −Σ logp / trained tokens (default, the public code); sequence-mean = mean over trajectories, a split trajectory counted once', () => {
  const ex = [
    { promptTokenIds: [1], completionTokenIds: [5, 6, 7], lossMask: [1, 0, 1], group: 'a' },
    { promptTokenIds: [1], completionTokenIds: [8], lossMask: [1], group: 'a' }, // trajectory a again: its calls did not merge
    { promptTokenIds: [1], completionTokenIds: [2, 3], lossMask: [1, 1], group: 'b' },
    { promptTokenIds: [1], completionTokenIds: [9], lossMask: [0], group: 'c' }, // no trained token: not counted
  ];
  const lp = [[-1, -100, -3], [-0.5], [-2, -4], [-100]];
  // By hand: token-mean (1 + 3 + 0.5 + 2 + 4) / 5 = 2.1; sequence-mean ((1 + 3 + 0.5)/3 + (2 + 4)/2) / 2 = 2.25
  // (the per-example mean of means would give (2 + 0.5 + 3) / 3 = 1.83: trajectory a counted twice).
  assert.equal(
    rsftObjective(ex, (i, j) => lp[i][j]),
    2.1,
  );
  assert.equal(
    rsftObjective(ex, (i, j) => lp[i][j], 'token-mean'),
    2.1,
  );
  assert.equal(
    rsftObjective(ex, (i, j) => lp[i][j], 'sequence-mean'),
    2.25,
  );
  // The trainer's per-token weights implement them: 1/5 on every trained token; 1/(3·2) on a's, 1/(2·2) on b's.
  const tm = rsftSequences(ex, 16);
  assert.deepEqual(
    tm.map((s) => Array.from(s.weights, (w) => Math.round(w * 1e6) / 1e6)),
    [
      [0, 0.2, 0, 0.2],
      [0, 0.2],
      [0, 0.2, 0.2],
    ],
  );
  const sm = rsftSequences(ex, 16, 'sequence-mean');
  assert.deepEqual(
    sm.map((s) => Array.from(s.weights, (w) => Math.round(w * 1e6) / 1e6)),
    [
      [0, 0.166667, 0, 0.166667],
      [0, 0.166667],
      [0, 0.25, 0.25],
    ],
  );
  // And Σ w·(−logp) is the objective.
  const dot = (seqs: typeof tm) => seqs.reduce((a, s, i) => a + Array.from(s.weights).reduce((b, w, t) => b + (w ? -w * lp[i][t - 1] : 0), 0), 0);
  assert.ok(Math.abs(dot(tm) - 2.1) < 1e-6 && Math.abs(dot(sm) - 2.25) < 1e-6);
});

// --- real rollouts ---------------------------------------------------------------------------

const dir = mkdtempSync(join(tmpdir(), 'whale-rsft-ex-'));
let backend: EmbeddedBackend;
let runtime: HarnessRuntime;
const kbqa = getDomain('kbqa');

before(async () => {
  backend = await EmbeddedBackend.open({ versionsDir: join(dir, 'versions'), sampler: { maxBatch: 32 } });
  runtime = new HarnessRuntime({
    domain: kbqa,
    backend,
    limits: SandboxLimitsSchema.parse({}),
    sampling: SamplingSchema.parse({}),
    concurrency: 8,
    cacheDir: join(dir, 'cache'),
  });
});
after(async () => {
  await runtime?.close();
  await backend?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('real kbqa rollouts of the embedded model: multi-turn calls merge, mask = model tokens, objective = −mean logprob', async () => {
  const h = await runtime.prepare(harnessDir('kbqa-good'));
  const tasks = kbqa.tasks('weight').slice(0, 8);
  const ts = await runtime.rolloutMany(
    h,
    tasks.flatMap((task, i) => [0, 1].map((s) => ({ task, sampleIndex: s, seed: 100 + 2 * i + s }))),
  );
  const multi = ts.filter((t) => t.modelCalls.filter((c) => c.finishReason !== 'error').length >= 2);
  assert.ok(multi.length >= 3, `expected multi-turn rollouts under kbqa-good, got ${multi.length} of ${ts.length}`);

  // Pass or not, every trajectory's calls are model tokens in context: use them all here.
  const r = trajectoriesToExamples(ts);
  const tok = backend.tokenizerFor();
  for (const t of ts) {
    const calls = t.modelCalls.filter((c) => c.finishReason !== 'error' && (c.completionTokenIds?.length ?? 0) > 0);
    const mine = r.examples.filter((_, i) => r.sources[i].trajectoryId === t.id);
    // The kbqa harness puts the reply back verbatim, so each trajectory is ONE example.
    assert.equal(mine.length, 1, `trajectory ${t.id} with ${calls.length} calls gave ${mine.length} examples`);
    const e = mine[0];
    const trained = e.completionTokenIds.filter((_, j) => e.lossMask[j] === 1);
    assert.deepEqual(
      trained,
      calls.flatMap((c) => c.completionTokenIds!),
      'exactly the model-generated tokens are trained',
    );
    // The full sequence is the last call's prompt + its completion (the context the model saw).
    const last = calls[calls.length - 1];
    assert.deepEqual([...e.promptTokenIds, ...e.completionTokenIds], [...last.promptTokenIds!, ...last.completionTokenIds!]);
    // Masked tokens include the tool messages: decode them and find the facts shown.
    const masked = tok.decode(e.completionTokenIds.filter((_, j) => e.lossMask[j] === 0));
    for (const ev of t.events.filter((x) => x.type === 'tool')) {
      const firstFact = (ev.observation ?? '').split('\n')[0].trim();
      if (firstFact && firstFact !== 'no facts')
        assert.ok(masked.includes(firstFact.split(' ')[0]), `tool output "${firstFact}" should be in the masked context`);
    }
  }

  // The objective the trainer computes on these examples equals −Σ logprob / tokens (token-mean) and
  // the mean of per-trajectory means (sequence-mean), using the temperature-1 logprobs the sampler
  // recorded for each generated token.
  const lps = r.examples.map((_, i) => {
    const t = ts.find((x) => x.id === r.sources[i].trajectoryId)!;
    return t.modelCalls.filter((c) => r.sources[i].callIndices.includes(c.index)).flatMap((c) => c.logprobs!);
  });
  const { model } = backend.store.load(backend.currentVersion());
  for (const mode of ['token-mean', 'sequence-mean'] as const) {
    const expected = rsftObjective(r.examples, (i, j) => lps[i][r.examples[i].lossMask.slice(0, j).filter((m) => m === 1).length], mode);
    const { loss, grads } = computeGradients(model, rsftSequences(r.examples, model.config.vocabSize, mode));
    for (const g of grads.values()) g.dispose();
    assert.ok(Math.abs(loss - expected) < 1e-4 * Math.max(1, expected), `${mode}: trainer objective ${loss} vs −mean logprob ${expected}`);
  }
  model.dispose();
});
