import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../../src/core/rng.js';
import {
  CORPUS_MIX,
  EXPERT,
  approxTokens,
  corpusTranscript,
  expertAct,
  pretrainingTranscripts,
  rambleEpisode,
  requiredWords,
  type ChatMessage,
} from '../../src/domains/corpus.js';
import { getDomain } from '../../src/domains/index.js';
import { factsInText, parseAction, parseQuestion } from '../../src/domains/text.js';
import { ALL_VALUES, ATTRIBUTES, FILLER, NAMES, VALUES } from '../../src/domains/vocab.js';

const words = requiredWords();
const wordSet = new Set(words);
const take = (n: number, seed = 7): ChatMessage[][] => {
  const out: ChatMessage[][] = [];
  for (const t of pretrainingTranscripts(seed)) {
    out.push(t);
    if (out.length === n) break;
  }
  return out;
};
const isKbqa = (t: ChatMessage[]) => t.some((m) => m.role === 'tool') || /^What is/.test(t.find((m) => m.role === 'user')!.content);

test('requiredWords: unique, each one pre-token of the embedded tokenizer, vocabulary classes disjoint', () => {
  assert.equal(new Set(words).size, words.length);
  for (const w of words) assert.match(w, /^(?:[A-Za-z0-9_]+|[^\sA-Za-z0-9_])$/, `'${w}' is a single piece`);
  assert.equal(NAMES.length, 300);
  assert.equal(ALL_VALUES.length, 48);
  const names = new Set(NAMES);
  const nonName = words.filter((w) => !names.has(w));
  assert.equal(nonName.length + NAMES.length, words.length);
  for (const v of ALL_VALUES) assert.ok(!names.has(v) && !ATTRIBUTES.includes(v) && !FILLER.includes(v), v);
  for (const f of FILLER) assert.ok(!['search', 'answer', 'find', ...ATTRIBUTES].includes(f), f);
  for (const n of NAMES) assert.match(n, /^[A-Z][a-z]+$/);
  assert.ok(words.length < 450, `${words.length} words`);
});

test('pretrainingTranscripts: deterministic per seed, mixture as declared, fresh knowledge bases', () => {
  const a = take(300, 1);
  assert.deepEqual(take(300, 1), a);
  assert.notDeepEqual(take(300, 2), a);
  const kb = take(3000).filter(isKbqa);
  const share = kb.length / 3000;
  assert.ok(Math.abs(share - CORPUS_MIX.kbqa) < 0.04, `kbqa share ${share}`);
  const subjects = new Set(kb.map((t) => parseQuestion(t.find((m) => m.role === 'user')!.content)!.subject));
  assert.ok(subjects.size > 250, `only ${subjects.size} distinct subjects: the knowledge base must be fresh per transcript`);
  assert.deepEqual(corpusTranscript('kbqa', 99), corpusTranscript('kbqa', 99));
});

test('corpus transcripts: only required words, names and values from the closed lists, harness message order, fit the context', () => {
  const capital = new Set([...NAMES, ...VALUES.city, 'What']);
  let maxTokens = 0;
  for (const t of take(4000)) {
    maxTokens = Math.max(maxTokens, approxTokens(t));
    let i = 0;
    if (t[0].role === 'system') i++;
    assert.equal(t[i].role, 'user');
    assert.equal(t[t.length - 1].role, 'assistant', 'a transcript ends with the model');
    for (let j = i + 1; j < t.length; j++) {
      const prev = t[j - 1].role;
      assert.ok(t[j].role === 'assistant' ? prev !== 'assistant' : prev === 'assistant', `role order ${t.map((m) => m.role).join(',')}`);
    }
    for (const m of t) {
      for (const w of m.content.split(' ')) {
        assert.ok(wordSet.has(w), `'${w}' in ${JSON.stringify(m)} is not a required word`);
        if (/^[A-Z]/.test(w)) assert.ok(capital.has(w), w);
      }
    }
  }
  assert.ok(maxTokens <= 200, `longest transcript ${maxTokens} tokens (context 256)`);
});

test('kbqa expert: copies the value when the needed fact is shown; no instruction means more answers without search', () => {
  let shownRight = 0;
  let shownTotal = 0;
  const direct: Record<string, [number, number]> = { none: [0, 0], full: [0, 0] };
  for (const t of take(6000).filter(isKbqa)) {
    const sys = t[0].role === 'system' ? t[0].content : '';
    const level = sys === '' ? 'none' : sys.startsWith('write') ? 'full' : 'short';
    const firstReply = t.find((m) => m.role === 'assistant')!;
    if (level !== 'short') {
      direct[level][1]++;
      if (parseAction(firstReply.content, 'lenient')?.kind === 'answer') direct[level][0]++;
    }
    const q = parseQuestion(t.find((m) => m.role === 'user')!.content)!;
    const shown = t.filter((m) => m.role === 'tool').flatMap((m) => factsInText(m.content));
    const mid = q.relation ? shown.find((f) => f[0] === q.subject && f[1] === q.relation)?.[2] : q.subject;
    const fact = mid ? shown.find((f) => f[0] === mid && f[1] === q.attribute) : undefined;
    const last = parseAction(t[t.length - 1].content, 'lenient');
    if (fact && last?.kind === 'answer') {
      shownTotal++;
      if (last.arg === fact[2]) shownRight++;
    }
  }
  assert.ok(shownRight / shownTotal > 0.94, `copy rate ${shownRight}/${shownTotal}`);
  const none = direct.none[0] / direct.none[1];
  const full = direct.full[0] / direct.full[1];
  assert.ok(none > 0.4 && full < 0.12, `direct answers: none ${none}, full ${full}`);
});

test('ramble expert: rambles 60% of the time under every instruction, always past the 24-token budget', () => {
  const ramble = getDomain('ramble');
  const tasks = ramble.tasks('weight');
  for (const instruction of ['prompt', 'brief', 'direct'] as const) {
    let rambles = 0;
    const rng = new Rng(5);
    for (let i = 0; i < 3000; i++) {
      const reply = rambleEpisode(tasks[i % tasks.length], { instruction }, rng).messages.at(-1)!.content;
      const toks = reply.split(' ');
      if (toks[0] === 'hmm') {
        rambles++;
        assert.ok(toks.indexOf('answer') > 24, `rambling answers after the budget: ${reply}`);
      } else assert.ok(toks.length <= 4, reply);
    }
    assert.ok(Math.abs(rambles / 3000 - EXPERT.ramble) < 0.03, `${instruction}: ramble rate ${rambles / 3000}`);
  }
  // Nothing else in the context changes it either (e.g. a system text never seen).
  const msgs: ChatMessage[] = [
    { role: 'system', content: 'do not think . answer with one word .' },
    { role: 'user', content: tasks[0].public.question },
  ];
  const rng = new Rng(9);
  let r = 0;
  for (let i = 0; i < 2000; i++) if (expertAct('ramble', msgs, rng).startsWith('hmm')) r++;
  assert.ok(Math.abs(r / 2000 - EXPERT.ramble) < 0.04);
});
