// Faulty and hostile harnesses: each ends scored 0 with its reason, and good rollouts running at
// the same time in the same runtime are unharmed.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { TrajectorySchema } from '../../src/core/trajectory.js';
import { sandboxCapabilities } from '../../src/harness/sandbox.js';
import { assertFailed, fixture, runAlongside, setup } from '../fixtures/harnesses/helpers.js';
import { countingListener } from '../support/countingListener.js';

const caps = sandboxCapabilities();
const { rt, backend } = setup({ limits: { cpuMs: 1500, wallMs: 6000, memoryMb: 64 } });
after(() => rt.close());

describe('harness sandbox', () => {
  it('stops a harness that spins forever at the CPU limit', async () => {
    // A generous wall clock of its own: on a loaded machine 1.5 s of CPU can take longer than 6 s.
    const local = setup({ limits: { cpuMs: 1500, wallMs: 120_000, memoryMb: 64 } });
    try {
      const t = await runAlongside(local.rt, await local.rt.prepare(fixture('cpu-loop')));
      assertFailed(t, 'cpu_limit', /CPU-time limit of 1500 ms/);
      assert.ok(TrajectorySchema.safeParse(t).success);
    } finally {
      await local.rt.close();
    }
  });

  it('stops a harness that hangs at the wall-clock limit', async () => {
    const local = setup({ limits: { wallMs: 1500 } });
    try {
      const t0 = Date.now();
      const t = await runAlongside(local.rt, await local.rt.prepare(fixture('hang')));
      assertFailed(t, 'timeout', /wall-clock limit of 1500 ms/);
      assert.ok(Date.now() - t0 < 5000);
    } finally {
      await local.rt.close();
    }
  });

  it('stops a harness that allocates without bound on the JS heap', async () => {
    const t = await runAlongside(rt, await rt.prepare(fixture('alloc')));
    assertFailed(t, 'memory_limit', /memory limit|heap/i);
  });

  it('stops a harness that allocates without bound off the heap (Buffers)', { skip: !caps.prlimit && !caps.proc && 'needs prlimit or /proc' }, async () => {
    // Same code with the knob flipped: a copy of the folder is not needed, knobs come from settings.
    const prepared = await rt.prepare(fixture('alloc'));
    const t = await runAlongside(rt, { ...prepared, knobs: { offHeap: true } });
    assertFailed(t, 'memory_limit', /memory limit/i);
  });

  it('refuses to read a file outside the candidate folder (answers planted next to it)', async () => {
    const t = await runAlongside(rt, await rt.prepare(fixture('read-outside')));
    assertFailed(t, 'rule_violation', /ERR_ACCESS_DENIED|restricted/);
    assert.equal(t.finalAnswer, null);
  });

  it('gives the harness a scrubbed environment: no keys planted in the parent leak', async () => {
    const planted = {
      ANTHROPIC_API_KEY: 'sk-ant-PLANTED',
      OPENAI_API_KEY: 'sk-PLANTED',
      WHALE_SECRET: 'PLANTED-SECRET',
      NODE_OPTIONS: '--require /tmp/evil.js',
    };
    Object.assign(process.env, planted);
    try {
      const prepared = await rt.prepare(fixture('env'));
      const t = await runAlongside(rt, prepared);
      const env = JSON.parse(t.finalAnswer ?? '{}') as Record<string, string>;
      for (const [k, v] of Object.entries(planted)) {
        assert.equal(env[k], undefined, `${k} leaked`);
        assert.ok(!(t.finalAnswer ?? '').includes(v));
      }
      assert.deepEqual(Object.keys(env).sort(), ['HOME', 'LANG', 'PATH', 'WHALE_ENGINE']);
      assert.equal(env.HOME, prepared.dir); // its materialised copy
      // Its "answer" never came from the model: the fixture domain's rule scores it 0.
      assertFailed(t, 'rule_violation', /does not appear in any model completion/);
    } finally {
      for (const k of Object.keys(planted)) delete process.env[k];
    }
  });

  it('refuses child processes, workers and signals to other processes', async () => {
    const t = await runAlongside(rt, await rt.prepare(fixture('spawn')));
    assertFailed(t, 'rule_violation', /ERR_ACCESS_DENIED|restricted/);
    const attempts = t.events.find((e) => e.message === 'attempts')?.data as Record<string, string>;
    assert.ok(attempts, 'the harness logged its attempts');
    for (const [name, result] of Object.entries(attempts)) assert.match(result, /^denied/, `${name}: ${result}`);
  });

  for (const network of (caps.netns ? ['guard', 'namespace'] : ['guard']) as ('guard' | 'namespace')[]) {
    it(`refuses sockets to anything but the gateway (network: ${network})`, async () => {
      const local = setup({ network });
      const listener = await countingListener();
      const port = listener.port;
      try {
        const prepared = await local.rt.prepare(fixture('socket'));
        const t = await runAlongside(local.rt, { ...prepared, knobs: { port } });
        assertFailed(t, 'rule_violation', /all network attempts refused/);
        const attempts = t.events.find((e) => e.message === 'attempts')?.data as Record<string, string>;
        assert.deepEqual(Object.keys(attempts).sort(), ['dnsLookup', 'dnsResolve', 'fetch', 'httpGet', 'listen', 'netConnect', 'netSocketConnect', 'udp']);
        for (const [name, result] of Object.entries(attempts)) assert.match(result, /^denied/, `${name}: ${result}`);
        assert.equal(listener.connections(), 0);
      } finally {
        listener.close();
        await local.rt.close();
      }
    });
  }

  it('ends a harness that prints garbage on the protocol', async () => {
    const t = await runAlongside(rt, await rt.prepare(fixture('garbage')));
    assertFailed(t, 'protocol_error', /not JSON/);
  });

  it('ends a harness that floods its output at the output limit', async () => {
    const local = setup({ limits: { outputBytes: 50_000 } });
    try {
      const t = await runAlongside(local.rt, await local.rt.prepare(fixture('spam')));
      assertFailed(t, 'output_limit', /more than 50000 bytes/);
    } finally {
      await local.rt.close();
    }
  });

  it('records a crash mid-task, keeping the model call made before it', async () => {
    const t = await runAlongside(rt, await rt.prepare(fixture('crash')));
    assertFailed(t, 'crash', /exited with code 3/);
    assert.equal(t.modelCalls.length, 1);
  });

  it('records a thrown error with its message', async () => {
    const t = await runAlongside(rt, await rt.prepare(fixture('throws')));
    assertFailed(t, 'crash', /parser blew up/);
  });

  it("scores a broken domain rule 0 as 'rule_violation'", async () => {
    const t = await runAlongside(rt, await rt.prepare(fixture('answer-not-from-model')));
    assertFailed(t, 'rule_violation', /does not appear in any model completion/);
    assert.equal(t.finalAnswer, 'made-up');
  });

  it('kept the scripted backend busy only with real calls', () => {
    assert.ok(backend.requests.length > 0);
  });
});
