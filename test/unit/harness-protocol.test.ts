// The worker protocol: every line from a harness is validated; nothing it sends can throw in the parent.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChildMessage, LineSplitter, MAX_ANSWER_CHARS, ParentMessage, encodeMessage, parseLine, type RunMessage } from '../../src/harness/protocol.js';

const run: RunMessage = {
  type: 'run',
  rolloutId: 'r1',
  task: { id: 't', question: 'q ?', meta: { hops: 1 } },
  knobs: { k: 3 },
  prompts: { system: 's' },
  tools: [{ name: 'search', description: 'd', parameters: { type: 'object' } }],
  limits: { maxTurns: 2, maxTokens: 100, wallMs: 1000 },
  gateway: { baseUrl: 'http://127.0.0.1:1/rollout/r1/v1', toolsUrl: 'http://127.0.0.1:1/rollout/r1/tools', token: 'x', socketPath: '/tmp/s' },
};

describe('harness protocol', () => {
  it('round-trips the run message and the child messages', () => {
    assert.deepEqual(parseLine(ParentMessage, encodeMessage(run).trim()), { ok: true, message: run });
    for (const m of [
      { type: 'ready', protocol: 1, runtime: 'python 3.11' },
      { type: 'log', message: 'hi', data: { a: [1] }, level: 'info' },
      { type: 'result', answer: 'red' },
      { type: 'result', answer: null },
      { type: 'error', message: 'boom', stack: 'at x' },
    ] as ChildMessage[])
      assert.deepEqual(parseLine(ChildMessage, JSON.stringify(m)), { ok: true, message: m });
  });

  it('rejects garbage, unknown types, wrong shapes and oversized fields without throwing', () => {
    const bad = [
      'hello',
      '{"type":"result"}',
      '{"type":"shell","cmd":"rm"}',
      '{"type":"ready","protocol":2}',
      '[1,2]',
      'null',
      JSON.stringify({ type: 'result', answer: 'x'.repeat(MAX_ANSWER_CHARS + 1) }),
    ];
    for (const line of bad) {
      const r = parseLine(ChildMessage, line);
      assert.equal(r.ok, false, line.slice(0, 40));
      if (!r.ok) assert.ok(r.error.length < 400, 'errors quote a bounded preview');
    }
    assert.equal(parseLine(ParentMessage, JSON.stringify({ ...run, task: { id: 't' } })).ok, false);
  });

  it('frames lines across chunks and reports an overlong line instead of buffering it', () => {
    const lines: string[] = [];
    const overlong: number[] = [];
    const s = new LineSplitter(
      (l) => lines.push(l),
      (n) => overlong.push(n),
      10,
    );
    s.push('{"a"');
    s.push(':1}\n\n{"b":2}\r\n{"c"');
    assert.deepEqual(lines, ['{"a":1}', '{"b":2}']);
    assert.equal(s.rest(), '{"c"');
    s.push('x'.repeat(20));
    assert.deepEqual(overlong, [24]);
    assert.equal(s.rest(), '');
  });
});
