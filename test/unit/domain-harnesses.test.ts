import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Rng } from '../../src/core/rng.js';
import { type KbqaShapeKnobs, expertAct, kbqaEpisode, randomKbqaKnobs, rambleEpisode, requiredWords } from '../../src/domains/corpus.js';
import { getDomain } from '../../src/domains/index.js';
import { KBQA_FEEDBACK, KBQA_INSTRUCTIONS, RAMBLE_INSTRUCTIONS } from '../../src/domains/text.js';
import { REPO, knobValues, loadHarness, runHarness } from './domain-helpers.js';

const HARNESSES = path.join(REPO, 'resources', 'harnesses');
const kbqa = getDomain('kbqa');
const ramble = getDomain('ramble');

test('shipped harnesses: harness.json validates, entry exists, code imports only the SDK and node builtins', async () => {
  for (const name of ['kbqa-h0', 'kbqa-good', 'ramble-h0']) {
    const dir = path.join(HARNESSES, name);
    const { def, manifest } = await loadHarness(dir);
    assert.equal(manifest.name, name);
    assert.equal(manifest.runtime, 'node');
    assert.equal(typeof def.run, 'function');
    assert.deepEqual(Object.keys(manifest.settings).sort(), Object.keys(manifest.knobs).sort(), 'every knob has a setting');
    assert.ok(!('temperature' in manifest.knobs) && !('top_p' in manifest.knobs), `${name}: sampling is the run config's, not a harness knob`);
    assert.ok(!/temperature|top_p/.test(readFileSync(path.join(dir, manifest.entry!), 'utf8')), `${name} passes no sampling option to ctx.chat`);
    assert.deepEqual(manifest.prompts, { system: '', user: '{question}' });
    const src = readFileSync(path.join(dir, manifest.entry!), 'utf8');
    for (const m of src.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g))
      assert.ok(m[1] === 'whale-harness' || m[1].startsWith('node:'), `${name} imports ${m[1]}`);
  }
  assert.equal(kbqa.h0Dir, path.join(HARNESSES, 'kbqa-h0'));
  assert.equal(ramble.h0Dir, path.join(HARNESSES, 'ramble-h0'));
  const h0 = (await loadHarness(kbqa.h0Dir)).manifest.settings;
  assert.deepEqual(h0, { instruction: 'prompt', topk: 1, maxSearches: 1, passageFormat: 'plain', parse: 'strict', formatRetries: 0, requireSearch: false });
  // The harness copies of the shared texts are the domain's (the corpus trains on the domain's).
  const src = readFileSync(path.join(kbqa.h0Dir, 'harness.ts'), 'utf8');
  for (const s of [...Object.values(KBQA_INSTRUCTIONS), ...Object.values(KBQA_FEEDBACK)]) assert.ok(src.includes(`'${s}'`), s);
  const rsrc = readFileSync(path.join(ramble.h0Dir, 'harness.ts'), 'utf8');
  for (const s of Object.values(RAMBLE_INSTRUCTIONS)) assert.ok(rsrc.includes(`'${s}'`), s);
  assert.equal(readFileSync(path.join(HARNESSES, 'kbqa-good', 'harness.ts'), 'utf8'), src, 'kbqa-good is h0 code with better settings');
});

test('kbqa harness code renders exactly the corpus transcripts, under random knob settings', async () => {
  const { def, manifest } = await loadHarness(kbqa.h0Dir);
  const pick = new Rng(11);
  const tasks = kbqa.tasks('harness');
  const words = new Set(requiredWords());
  for (let i = 0; i < 300; i++) {
    const task = tasks[i % tasks.length];
    const shape: KbqaShapeKnobs = randomKbqaKnobs(pick);
    const knobs = { ...knobValues(manifest), ...shape };
    const rngA = new Rng(1000 + i);
    const ran = await runHarness(def, kbqa, task, knobs, manifest.prompts, (m) => expertAct('kbqa', m, rngA));
    const sim = kbqaEpisode(task, shape, new Rng(1000 + i));
    assert.deepEqual(ran.messages, sim.messages, `knobs ${JSON.stringify(shape)}`);
    assert.equal(ran.finalAnswer, sim.answer);
    for (const c of ran.modelCalls) {
      assert.equal(c.params.temperature, undefined, 'the harness leaves sampling to the run config');
      for (const m of c.messages) for (const w of m.content.split(' ')) assert.ok(words.has(w), `'${w}' not a required word`);
    }
  }
});

test('ramble harness code renders exactly the corpus transcripts', async () => {
  const { def, manifest } = await loadHarness(ramble.h0Dir);
  const tasks = ramble.tasks('harness');
  for (let i = 0; i < 60; i++) {
    const instruction = (['prompt', 'brief', 'direct'] as const)[i % 3];
    const rngA = new Rng(i);
    const ran = await runHarness(def, ramble, tasks[i], { ...knobValues(manifest), instruction }, manifest.prompts, (m) => expertAct('ramble', m, rngA));
    assert.deepEqual(ran.messages, rambleEpisode(tasks[i], { instruction }, new Rng(i)).messages);
    assert.equal(ran.modelCalls.length, 1);
    assert.equal(await ramble.checkRules!(tasks[i], ran), null);
  }
});

/** Mean pass rate of a harness on the val split with the noisy expert as the model (rules enforced). */
async function expertScore(domainId: 'kbqa' | 'ramble', harness: string, override: Record<string, string | number | boolean> = {}, n = 256): Promise<number> {
  const domain = domainId === 'kbqa' ? kbqa : ramble;
  const { def, manifest } = await loadHarness(path.join(HARNESSES, harness));
  const knobs = { ...knobValues(manifest), ...override };
  let pass = 0;
  for (const [i, task] of domain.tasks('val').slice(0, n).entries()) {
    const rng = new Rng(i);
    const budget = domain.limits.maxTokensPerCall ?? 1e9;
    // Model replies cut at the domain's token budget, as the gateway does.
    const r = await runHarness(def, domain, task, knobs, manifest.prompts, (m) => expertAct(domainId, m, rng).split(' ').slice(0, budget).join(' '));
    if ((await domain.checkRules!(task, r)) === null && (await domain.verify(task, r)).pass) pass++;
  }
  return pass / n;
}

test('with the expert as the model: kbqa is harness-dominated, ramble is not harness-improvable', async () => {
  const h0 = await expertScore('kbqa', 'kbqa-h0');
  const good = await expertScore('kbqa', 'kbqa-good');
  assert.ok(h0 > 0.03 && h0 < 0.2, `kbqa h0 ${h0}`);
  assert.ok(good > 0.75, `kbqa good ${good}`);
  const scores: number[] = [];
  for (const instruction of ['prompt', 'brief', 'direct'])
    for (const parse of ['strict', 'lenient']) scores.push(await expertScore('ramble', 'ramble-h0', { instruction, parse }));
  assert.ok(Math.min(...scores) > 0.25 && Math.max(...scores) < 0.45, `ramble ${scores.join(' ')}`);
  assert.ok(Math.max(...scores) - Math.min(...scores) < 0.1, `ramble spread ${scores.join(' ')}`);
});
