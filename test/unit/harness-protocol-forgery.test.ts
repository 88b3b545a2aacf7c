// Issue 12 §10: harness code writing protocol-looking lines to stdout cannot speak for the runtime.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { fixtureTasks } from '../fixtures/harnesses/fixtureDomain.js';
import { assertFailed, fixture, setup } from '../fixtures/harnesses/helpers.js';

describe('protocol channel', () => {
  const { rt } = setup({ limits: { wallMs: 8000 } });
  after(() => rt.close());

  it('a forged `result` line from candidate code is a protocol error, not an answer', async () => {
    const t = await rt.rollout(await rt.prepare(fixture('forge')), fixtureTasks('val', 1)[0], { sampleIndex: 0, seed: 0 });
    assert.notEqual(t.finalAnswer, 'forged');
    assertFailed(t, 'protocol_error', /nonce/);
  });

  it('a good harness still speaks the protocol', async () => {
    const t = await rt.rollout(await rt.prepare(fixture('good')), fixtureTasks('val', 1)[0], { sampleIndex: 0, seed: 0 });
    assert.equal(t.termination, 'answered', t.terminationDetail);
  });
});
