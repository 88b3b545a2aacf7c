// The transcript renderer: what a person reads for one trajectory, and the line → structure map
// that decorations, hovers and comments rely on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { callDetails, newMessages, renderTranscript, segmentAt, turnAt, turnLine } from '../../src/report/transcript.js';
import { call, multiTurn } from './trajectory-fixtures.js';

const lineOf = (text: string, needle: string) => text.split('\n').findIndex((l) => l.includes(needle));

test('header: harness, policy, task, sample, verdict with reason and extracted answer', () => {
  const tr = renderTranscript(multiTurn());
  const lines = tr.text.split('\n');
  assert.match(lines[0], /^# Trajectory h1-task-7-2-abcd$/);
  assert.match(tr.text, /^harness {5}feedfacefeedface/m);
  assert.match(tr.text, /^policy {6}v1$/m);
  assert.match(tr.text, /^task {8}task-7 {3}\(domain kbqa, split harness, sample 2, seed 42\)$/m);
  assert.match(lines[tr.marks.verdict.line], /^verdict {5}FAIL {3}score 0 {3}wrong answer {3}\(extracted: "tokyo"\)$/);
  assert.equal(tr.marks.verdict.pass, false);
  assert.equal(renderTranscript(multiTurn({ verdict: { pass: true, score: 1, extracted: null, reason: 'correct' } })).marks.verdict.pass, true);
});

test('each turn shows only the messages not shown before, its completion, and the tool calls it led to', () => {
  const tr = renderTranscript(multiTurn());
  const t = tr.text;
  assert.equal(
    t.slice(0, t.indexOf('══ turn 3')).split('You answer questions about cities.').length - 1,
    1,
    'the system prompt is shown once while the context only grows',
  );
  assert.match(t, /\(3 earlier messages as before\)/, 'turn 2 says what it did not repeat');
  assert.match(t, /\(context rewritten by the harness: all 2 messages sent\)/, 'turn 3 rewrote its context, so everything is shown');
  assert.match(t, /\[tool search\]\n {4}Ziras: a town near Lima/);
  // The tool call at 150 ms falls after call 2 was sent (100 ms), so it is listed in turn 2.
  const toolLine = lineOf(t, '• tool search({"q":"Ziras"})');
  assert.ok(toolLine > lineOf(t, '══ turn 2') && toolLine < lineOf(t, '══ turn 3'));
  assert.equal(turnAt(tr, toolLine), 1);
  assert.match(t.split('\n')[toolLine + 1], /^ {4}→ Ziras: a town near Lima$/);
  assert.match(t, /• tool lookup\(\{"id":3\}\) @160 ms\n {4}✗ error: no such id/);
  assert.match(t, /! error parse: could not parse the answer @250 ms/);
  assert.ok(lineOf(t, '· log sandbox: node harness') < lineOf(t, '══ turn 1'), 'events before the first call come first');
  assert.match(t, /^final answer {2}"Tokyo"$/m);
  assert.match(t, /^termination {3}answered$/m);
  assert.match(t, /1 completion cut by max_tokens \(33% of calls\)/);
});

test('the line map: turns, calls and events by line; marks for truncation and errors', () => {
  const tr = renderTranscript(multiTurn({ termination: 'turn_limit', terminationDetail: 'at most 3 turns' }));
  const lines = tr.text.split('\n');
  const call2 = lineOf(tr.text, '▶ model call 2');
  assert.deepEqual(segmentAt(tr, call2), { kind: 'call', startLine: call2, endLine: call2, turn: 1, call: 1 });
  assert.equal(segmentAt(tr, call2 + 1)?.kind, 'message');
  assert.equal(turnAt(tr, 0), undefined, 'header lines belong to no turn');
  assert.equal(turnLine(tr, 2), lineOf(tr.text, '══ turn 3'));
  assert.ok(tr.marks.truncated.includes(call2), 'finish=length marks the call as truncated');
  assert.ok(tr.marks.truncated.some((l) => lines[l].startsWith('termination   turn_limit — at most 3 turns')));
  assert.ok(tr.marks.truncated.some((l) => lines[l].startsWith('ended       turn_limit')));
  assert.deepEqual(
    tr.marks.errors.map((l) => lines[l].trim().slice(0, 14)),
    ['• tool lookup(', '! error parse:'],
  );
  const crashed = renderTranscript(multiTurn({ termination: 'crash' }));
  assert.ok(crashed.marks.errors.some((l) => crashed.text.split('\n')[l].startsWith('termination   crash')));
});

test('a hover on a call: tokens, finish reason, mean/min logprob, or that the backend gave none', () => {
  const c = call(1, [{ role: 'user', content: 'x' }], 'y', { finishReason: 'length' });
  const md = callDetails(c).join('\n');
  assert.match(md, /11 prompt \+ 3 completion/);
  assert.match(md, /finish reason: `length` \(cut by max_tokens\)/);
  assert.match(md, /mean -0\.700, min -1\.500 over 3 tokens/);
  assert.match(callDetails({ ...c, logprobs: undefined }).join('\n'), /logprob: not recorded by the backend/);
});

test('new messages: an extended context shows only its tail; without call times events go after the last turn', () => {
  const t = multiTurn();
  assert.deepEqual(newMessages(t.modelCalls, 1), { skipped: 3, messages: [t.modelCalls[1].messages[3]], rewritten: false });
  const untimed = multiTurn({ modelCalls: multiTurn().modelCalls.map((c) => ({ ...c, t: undefined })) });
  const tr = renderTranscript(untimed);
  assert.ok(lineOf(tr.text, '· log sandbox') > lineOf(tr.text, '══ turn 3'));
});

test('a huge trajectory is cut with a clear marker and still says how it ended', () => {
  const q = { role: 'user' as const, content: 'go' };
  const calls = Array.from({ length: 5000 }, (_, i) => call(i, [q], 'step\n'.repeat(3) + 'x'.repeat(10_000)));
  const big = multiTurn({ modelCalls: calls, events: [], termination: 'token_limit' });
  const tr = renderTranscript(big, { maxFieldChars: 500, maxLines: 2000 });
  const lines = tr.text.split('\n');
  assert.equal(tr.clipped, true);
  assert.ok(lines.length <= 2010, `at most the line limit plus the footer (got ${lines.length})`);
  assert.match(tr.text, /⋯ transcript truncated at 2,000 lines: \d+ of 5000 turns not shown/);
  assert.match(tr.text, /x… \[9,\d{3} more characters not shown\]/);
  assert.match(lines[lines.length - 2], /^termination {3}token_limit$/);
  const small = renderTranscript(multiTurn());
  assert.equal(small.clipped, false);
});
