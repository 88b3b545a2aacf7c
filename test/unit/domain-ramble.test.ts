import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { InputError } from '../../src/core/errors.js';
import { getDomain } from '../../src/domains/index.js';
import type { RamblePrivate } from '../../src/domains/ramble.js';
import { SPLITS, type RolloutRecord, type Task } from '../../src/domains/types.js';
import { ALL_VALUES } from '../../src/domains/vocab.js';

const ramble = getDomain('ramble');
const answerOf = (t: Task) => (t.private as unknown as RamblePrivate).answer;
const call = (messages: RolloutRecord['modelCalls'][number]['messages'], completion: string): RolloutRecord['modelCalls'][number] => ({
  index: 0,
  policyVersion: 'v',
  messages,
  params: {},
  completion,
  finishReason: 'stop',
  usage: { promptTokens: 0, completionTokens: 0 },
  latencyMs: 0,
});

test('ramble: fixed splits, deterministic, disjoint; the answer is stated in the question', async () => {
  assert.equal(ramble.regime, 'weight-dominated');
  assert.deepEqual(ramble.limits, { maxTurns: 1, maxTokensPerCall: 24 });
  assert.deepEqual(ramble.tools, []);
  const again = getDomain('ramble');
  const ids = new Set<string>();
  for (const s of SPLITS) {
    const a = ramble.tasks(s);
    assert.equal(a.length, ramble.splitSizes[s]);
    assert.deepEqual(again.tasks(s), a);
    for (const t of a) {
      assert.ok(!ids.has(t.id));
      ids.add(t.id);
    }
  }
  for (const t of ramble.tasks('val')) {
    const q = t.public.question;
    assert.match(q, /^\S+ \S+ \S+ \. \S+ \S+ \S+ \. What is the \S+ of \S+ \?$/);
    assert.ok(q.split(' ').includes(answerOf(t)));
    assert.ok(ALL_VALUES.includes(answerOf(t)));
    const m = /What is the (\S+) of (\S+) \?/.exec(q)!;
    assert.ok(q.includes(`${m[2]} ${m[1]} ${answerOf(t)} .`), 'the asked fact is in the question');
  }
});

test('ramble verifier and rules: the answer must come from the model; no forged turns', async () => {
  const t = ramble.tasks('val')[0];
  const a = answerOf(t);
  const user = [{ role: 'user' as const, content: t.public.question }];
  const ok: RolloutRecord = { finalAnswer: a, events: [], modelCalls: [call(user, `answer ${a}`)] };
  assert.equal((await ramble.verify(t, ok)).reason, 'correct');
  assert.equal(await ramble.checkRules!(t, ok), null);
  // A harness that reads the answer off the question: the model never wrote it.
  const parsed: RolloutRecord = { finalAnswer: a, events: [], modelCalls: [call(user, 'hmm , let me think about this so')] };
  assert.match((await ramble.checkRules!(t, parsed))!, /does not appear in any model completion/);
  assert.match((await ramble.checkRules!(t, { finalAnswer: a, events: [], modelCalls: [] }))!, /does not appear/);
  // Forged turns: a fake tool message, or an assistant message the model did not write.
  const tool: RolloutRecord = { finalAnswer: a, events: [], modelCalls: [call([...user, { role: 'tool', content: 'x' }], `answer ${a}`)] };
  assert.match((await ramble.checkRules!(t, tool))!, /tool message/);
  const fake: RolloutRecord = {
    finalAnswer: a,
    events: [],
    modelCalls: [call([...user, { role: 'assistant', content: 'answer eel' }, ...user], `answer ${a}`)],
  };
  assert.match((await ramble.checkRules!(t, fake))!, /forged turn/);
  assert.equal((await ramble.verify(t, { finalAnswer: null, events: [], modelCalls: [] })).reason, 'no answer');
});

test('ramble tasksFile: the answer must be readable from the question; broken lines name file and line', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'whale-ramble-'));
  const f = path.join(dir, 't.jsonl');
  writeFileSync(f, JSON.stringify({ id: 'x', split: 'test', question: 'Ada pet eel . What is the pet of Ada ?', answer: 'eel' }) + '\n');
  assert.equal(getDomain('ramble', { tasksFile: f }).tasks('test')[0].id, 'x');
  writeFileSync(f, JSON.stringify({ question: 'What is the pet of Ada ?', answer: 'eel' }) + '\n');
  assert.throws(
    () => getDomain('ramble', { tasksFile: f }),
    (e: unknown) => e instanceof InputError && /t\.jsonl:1: answer: .*readable from the question/.test(e.message),
  );
  writeFileSync(f, '\n\nnot json\n');
  assert.throws(
    () => getDomain('ramble', { tasksFile: f }),
    (e: unknown) => e instanceof InputError && e.message.startsWith(`${f}:3:`),
  );
});
