import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { InputError } from '../../src/core/errors.js';
import { Rng } from '../../src/core/rng.js';
import type { ChatMessage } from '../../src/core/trajectory.js';
import {
  KBCHAIN_EXPERT,
  type KbchainExpertParams,
  expertAct,
  expertKbchain,
  kbchainEpisode,
  pretrainingTranscripts,
  KBCHAIN_CORPUS_MIX,
  randomKbchainKnobs,
  requiredWords,
} from '../../src/domains/corpus.js';
import { getDomain, listDomains } from '../../src/domains/index.js';
import { KBCHAIN_VALUES, type KbchainPrivate, kbchainDiagnostics, parseKbchainQuestion } from '../../src/domains/kbchain.js';
import { SPLITS, type RolloutRecord, type Task } from '../../src/domains/types.js';
import { templateConfig } from '../../src/cli/initCommand.js';
import { createBackend } from '../../src/policy/index.js';
import { folderVersionId } from '../../src/policy/embedded/index.js';
import { REPO, knobValues, loadHarness, runHarness } from './domain-helpers.js';

const kbchain = getDomain('kbchain');
const H0 = path.join(REPO, 'resources', 'harnesses', 'kbchain-h0');
const priv = (t: Task) => t.private as unknown as KbchainPrivate;
/** The harness fix the knob search can reach: more facts per search, a second search, lenient parsing, feedback turns. */
const FIX = { topk: 3, maxSearches: 2, parse: 'lenient', formatRetries: 2 };

test('kbchain: registered; fixed, disjoint splits that depend on the project secret; few values; answerable chains', () => {
  assert.ok(listDomains().some((d) => d.id === 'kbchain' && d.regime === 'mixed'));
  assert.deepEqual(kbchain.limits, { maxTurns: 4, maxTokensPerCall: 24 });
  assert.equal(kbchain.h0Dir, H0);
  const again = getDomain('kbchain');
  const other = getDomain('kbchain', {}, { secret: 'another project' });
  const ids = new Set<string>();
  for (const s of SPLITS) {
    const a = kbchain.tasks(s);
    assert.equal(a.length, kbchain.splitSizes[s]);
    assert.deepEqual(again.tasks(s), a);
    const b = other.tasks(s);
    assert.ok(
      a.every((t, i) => t.id !== b[i].id && t.id.startsWith('kbchain-')),
      `${s}: task ids depend on the secret`,
    );
    assert.notDeepEqual(
      a.slice(0, 20).map((t) => t.public.question),
      b.slice(0, 20).map((t) => t.public.question),
    );
    for (const t of a) {
      assert.ok(!ids.has(t.id));
      ids.add(t.id);
    }
  }
  let twoHop = 0;
  const vals = kbchain.tasks('val');
  for (const t of vals) {
    const p = priv(t);
    const q = parseKbchainQuestion(t.public.question)!;
    assert.ok(q, t.public.question);
    assert.equal(q.attribute, p.attribute);
    assert.ok(KBCHAIN_VALUES[p.attribute as keyof typeof KBCHAIN_VALUES].includes(p.answer), 'the answer is one of the few values');
    assert.deepEqual(
      p.facts.filter((f) => f[0] === p.target && f[1] === p.attribute),
      [[p.target, p.attribute, p.answer]],
    );
    if (p.hops === 2) {
      twoHop++;
      assert.deepEqual(
        p.facts.filter((f) => f[0] === q.subject && f[1] === q.relation),
        [[q.subject, q.relation!, p.target]],
      );
    } else assert.equal(p.target, q.subject);
    for (const f of p.facts) if (f[1] in KBCHAIN_VALUES) assert.ok(KBCHAIN_VALUES[f[1] as keyof typeof KBCHAIN_VALUES].includes(f[2]));
  }
  assert.ok(twoHop > vals.length * 0.35 && twoHop < vals.length * 0.65, `2-hop share ${twoHop}/${vals.length}`);
  assert.throws(
    () => getDomain('kbchain', { tasksFile: 'x.jsonl' }),
    (e: unknown) => e instanceof InputError && /tasksFile/.test(e.message),
  );
});

test('kbchain harness code renders exactly the corpus transcripts under random knob settings; corpus words are the frozen vocabulary', async () => {
  const { def, manifest } = await loadHarness(H0);
  assert.deepEqual(manifest.settings, { topk: 1, maxSearches: 1, parse: 'strict', formatRetries: 0 });
  // The harness fix is inside the space the knob proposer explores (knob domains of h0's harness.json).
  for (const [k, v] of Object.entries(FIX)) {
    const spec = manifest.knobs[k];
    if (spec.type === 'int') assert.ok(typeof v === 'number' && v >= spec.min && v <= spec.max, k);
    else if (spec.type === 'enum') assert.ok(spec.values.includes(v), k);
    else assert.fail(`${k}: unexpected knob type ${spec.type}`);
  }
  assert.ok(!Object.keys(manifest.knobs).some((k) => /temperature|top_p|token/i.test(k)), 'no sampler or token-limit knob');
  const words = new Set(requiredWords());
  const pick = new Rng(5);
  const tasks = kbchain.tasks('harness');
  const systems = manifest.promptVariants!.system;
  for (let i = 0; i < 200; i++) {
    const shape = randomKbchainKnobs(pick);
    assert.ok(systems.includes(shape.system));
    const { system, ...knobs } = shape;
    const rngA = new Rng(300 + i);
    const ran = await runHarness(def, kbchain, tasks[i], { ...knobValues(manifest), ...knobs }, { ...manifest.prompts, system }, (m) =>
      expertAct('kbchain', m, rngA),
    );
    const sim = kbchainEpisode(tasks[i], shape, new Rng(300 + i));
    assert.deepEqual(ran.messages, sim.messages, JSON.stringify(shape));
    assert.equal(ran.finalAnswer, sim.answer);
    assert.equal(await kbchain.checkRules!(tasks[i], ran), null);
    for (const m of ran.messages) for (const w of m.content.split(' ')) assert.ok(words.has(w), `'${w}' is not in the frozen vocabulary`);
  }
  // The continued-pretraining stream mixes all three domains; kbchain transcripts are half of it.
  const stream = pretrainingTranscripts(3, KBCHAIN_CORPUS_MIX);
  let chain = 0;
  for (let i = 0; i < 400; i++) if (/^find the/.test(stream.next().value!.find((m: ChatMessage) => m.role === 'user')!.content)) chain++;
  assert.ok(chain > 160 && chain < 240, `kbchain share ${chain}/400`);
});

test('kbchain rules: a harness may not chain for the model; the answer must be the model’s own', async () => {
  const t = kbchain.tasks('val').find((x) => priv(x).hops === 2)!;
  const p = priv(t);
  const q = parseKbchainQuestion(t.public.question)!;
  const call = (completion: string): RolloutRecord['modelCalls'][number] => ({
    index: 0,
    policyVersion: 'v',
    messages: [{ role: 'user', content: t.public.question }],
    params: {},
    completion,
    finishReason: 'stop',
    usage: { promptTokens: 0, completionTokens: 0 },
    latencyMs: 0,
  });
  const search = (query: string) => ({
    t: 0,
    type: 'tool' as const,
    name: 'search',
    args: { query },
    observation: kbchain.tools[0].call({ query }, t) as string,
  });
  const own: RolloutRecord = {
    finalAnswer: p.answer,
    modelCalls: [call(`search ${q.subject}`), call(`search ${p.target}`), call(`answer ${p.answer}`)],
    events: [search(q.subject), search(`${p.target} ${p.attribute}`)],
  };
  assert.equal(await kbchain.checkRules!(t, own), null, 'query rewriting of an entity the model wrote is allowed');
  assert.ok((await kbchain.verify(t, own)).pass);
  const chainedByHarness: RolloutRecord = { ...own, modelCalls: [call(`search ${q.subject}`), call(`answer ${p.answer}`)] };
  assert.match((await kbchain.checkRules!(t, chainedByHarness))!, new RegExp(`search for '${p.target}'.*may not chain`));
  const notWritten: RolloutRecord = { finalAnswer: p.answer, modelCalls: [call(`search ${q.subject}`)], events: [search(q.subject)] };
  assert.match((await kbchain.checkRules!(t, notWritten))!, /does not appear/);
});

/** Rollouts of a harness on the val split with an expert as the model, replies cut at the domain's per-call limit as the gateway does. */
async function expertRun(settings: Record<string, string | number>, habits: Partial<KbchainExpertParams>, n = 256) {
  const { def, manifest } = await loadHarness(H0);
  const X = { ...KBCHAIN_EXPERT, ...habits };
  const limit = kbchain.limits.maxTokensPerCall!;
  const out: { pass: boolean; d: ReturnType<typeof kbchainDiagnostics> }[] = [];
  for (const [i, task] of kbchain.tasks('val').slice(0, n).entries()) {
    const rng = new Rng(i);
    const cut: boolean[] = [];
    const r = await runHarness(def, kbchain, task, { ...knobValues(manifest), ...settings }, manifest.prompts, (m: ChatMessage[]) => {
      const words = expertKbchain(m, rng, X).split(' ');
      cut.push(words.length > limit);
      return words.slice(0, limit).join(' ');
    });
    r.modelCalls.forEach((c, j) => (c.finishReason = cut[j] ? 'length' : 'stop'));
    const pass = (await kbchain.checkRules!(task, r)) === null && (await kbchain.verify(task, r)).pass;
    out.push({ pass, d: kbchainDiagnostics(priv(task), { ...r, termination: r.finalAnswer === null ? 'no_answer' : 'answered' }) });
  }
  const rate = (f: (x: (typeof out)[number]) => boolean, of = out) => of.filter(f).length / Math.max(1, of.length);
  const two = out.filter((x) => x.d.hops === 2);
  return {
    pass: rate((x) => x.pass),
    pass2: rate((x) => x.pass, two),
    truncated: rate((x) => x.d.truncated === true),
    chainRan: rate((x) => x.d.chainRan === true, two),
    retrievalHit: rate((x) => x.d.retrievalHit === true),
    searches: out.reduce((s, x) => s + Number(x.d.searches), 0) / out.length,
  };
}

test('kbchain binds: the harness fix and the weight fix each change what they should, and only together succeed', async () => {
  const base = await expertRun({}, {});
  const harnessOnly = await expertRun(FIX, {});
  // What RSFT can reach under h0: no rambling, and (a second search being refused) guessing after the first hop.
  const weightsUnderH0 = await expertRun({}, { ramble: 0, chain: 0, directAnswer: 0, searchAgain: 0 });
  const chainingUnderH0 = await expertRun({}, { ramble: 0, chain: 1, directAnswer: 0, searchAgain: 0 });
  // What RSFT can reach once the harness allows a second search: chaining.
  const both = await expertRun(FIX, { ramble: 0, chain: 1, directAnswer: 0 });
  const weightsThenFix = await expertRun(FIX, { ramble: 0, chain: 0, directAnswer: 0, searchAgain: 0 });
  const report = JSON.stringify({ base, harnessOnly, weightsUnderH0, chainingUnderH0, both, weightsThenFix });

  // The harness fix changes retrieval (more facts, a second search) but not the rambling.
  assert.ok(harnessOnly.retrievalHit > base.retrievalHit + 0.15, report);
  assert.ok(Math.abs(harnessOnly.truncated - base.truncated) < 0.25 && harnessOnly.truncated > 0.4, report);
  assert.ok(base.chainRan === 0 && weightsUnderH0.chainRan === 0 && chainingUnderH0.chainRan === 0, 'h0 never runs a second search');
  // The weight fix removes the truncation, under any harness. Under h0 chaining does worse than guessing (the second
  // search is refused), so RSFT there learns to guess, right about a third of the time.
  assert.equal(weightsUnderH0.truncated, 0);
  assert.ok(chainingUnderH0.pass2 < weightsUnderH0.pass2 && weightsUnderH0.pass2 > 0.2 && weightsUnderH0.pass2 < 0.45, report);
  // Together: chaining pays once the harness allows it, far beyond either side alone and beyond guessing after the fix.
  assert.ok(both.chainRan > 0.8 && both.pass2 > weightsThenFix.pass2 + 0.3, report);
  assert.ok(both.pass > Math.max(harnessOnly.pass, weightsUnderH0.pass, weightsThenFix.pass) + 0.15, report);
  assert.ok(both.pass > 0.8 && harnessOnly.pass < 0.5 && weightsUnderH0.pass < 0.5 && base.pass < 0.2, report);
});

test('kbchain runs on its shipped checkpoint: backend.model "kbchain" names it from any folder, and whale init picks it', async () => {
  const ckpt = path.join(REPO, 'resources', 'model', 'kbchain');
  assert.notEqual(folderVersionId(ckpt), folderVersionId(path.join(REPO, 'resources', 'model', 'base')));
  const store = mkdtempSync(path.join(tmpdir(), 'whale-kbchain-model-'));
  const cwd = process.cwd();
  process.chdir(store); // a name, not a path: it must not depend on the working folder
  try {
    const backend = await createBackend({ kind: 'embedded', model: 'kbchain', maxBatch: 8 }, { storeDir: store });
    assert.equal(backend.currentVersion(), folderVersionId(ckpt));
    await backend.close();
  } finally {
    process.chdir(cwd);
  }
  assert.deepEqual((templateConfig('p', 'kbchain') as { backend: unknown }).backend, { kind: 'embedded', model: 'kbchain' });
  assert.deepEqual((templateConfig('p', 'kbqa') as { backend: unknown }).backend, { kind: 'embedded', model: 'base' });
});
