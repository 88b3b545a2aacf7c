// Issue 12 §10: harness code writing protocol-looking lines to stdout cannot speak for the runtime.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

  it('a command harness that echoes the nonce: a forged `result` from a child process it runs is a protocol error', async () => {
    const t = await rt.rollout(await rt.prepare(fixture('py-forge')), fixtureTasks('val', 1)[0], { sampleIndex: 0, seed: 0 });
    assert.notEqual(t.finalAnswer, 'forged');
    assertFailed(t, 'protocol_error', /nonce/);
  });

  it("what holds without the echo: a command harness that does not echo the nonce keeps working, and cannot tell its child's frames from its own", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'whale-pyforge-'));
    try {
      cpSync(fixture('py-forge'), dir, { recursive: true });
      const manifest = JSON.parse(readFileSync(join(dir, 'harness.json'), 'utf8')) as { knobs: { echo: { default: boolean } } };
      manifest.knobs.echo.default = false;
      writeFileSync(join(dir, 'harness.json'), JSON.stringify(manifest));
      const t = await rt.rollout(await rt.prepare(dir), fixtureTasks('val', 1)[0], { sampleIndex: 0, seed: 0 });
      // The documented gap (SANDBOX.md): the first result line wins, whoever wrote it (the fixture
      // domain then refuses 'forged' as no model completion holds it, but it was taken as the answer).
      assert.notEqual(t.termination, 'protocol_error', t.terminationDetail);
      assert.equal(t.finalAnswer, 'forged');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a good harness still speaks the protocol', async () => {
    const t = await rt.rollout(await rt.prepare(fixture('good')), fixtureTasks('val', 1)[0], { sampleIndex: 0, seed: 0 });
    assert.equal(t.termination, 'answered', t.terminationDetail);
  });
});
