// The runtime's normal path: what a trajectory records, how sampling settings and limits apply,
// concurrency, and shutdown.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { TrajectorySchema } from '../../src/core/trajectory.js';
import { gitTreeHash } from '../../src/core/treeHash.js';
import { fixtureTasks } from '../fixtures/harnesses/fixtureDomain.js';
import { assertFailed, fixture, runAlongside, setup, TEST_SAMPLING } from '../fixtures/harnesses/helpers.js';

describe('harness runtime', () => {
  const { rt, backend } = setup({ domainLimits: { maxTokensPerCall: 12 } });
  after(() => rt.close());

  it('runs a good harness and records the whole rollout', async () => {
    const prepared = await rt.prepare(fixture('good'));
    assert.equal(prepared.treeHash, gitTreeHash(fixture('good')));
    const tasks = fixtureTasks('val', 4);
    const seen: number[] = [];
    const trajs = await rt.rolloutMany(
      prepared,
      tasks.map((task, i) => ({ task, sampleIndex: i % 2, seed: 7 + i })),
      (done, total) => seen.push(done * 100 + total),
      { runId: 'run-1', phase: 'h1' },
    );
    assert.deepEqual(seen, [104, 204, 304, 404]);
    for (const [i, t] of trajs.entries()) {
      assert.ok(TrajectorySchema.safeParse(t).success, JSON.stringify(TrajectorySchema.safeParse(t).error?.issues));
      assert.equal(t.taskId, tasks[i].id);
      assert.equal(t.termination, 'answered');
      assert.equal(t.verdict.pass, true, t.verdict.reason);
      assert.equal(t.runId, 'run-1');
      assert.equal(t.phase, 'h1');
      assert.equal(t.split, 'val');
      assert.equal(t.seed, 7 + i);
      assert.equal(t.harnessHash, prepared.treeHash);
      assert.equal(t.policyVersion, 'scripted-v0');
      assert.equal(t.domain, 'fixture');
      // Two model calls: the search, then the answer; messages exactly as the harness sent them.
      assert.equal(t.modelCalls.length, 2);
      const [first, second] = t.modelCalls;
      assert.deepEqual(first.messages, [
        { role: 'system', content: 'write search NAME , then answer VALUE .' },
        { role: 'user', content: tasks[i].public.question },
      ]);
      assert.match(first.completion, /^search /);
      assert.equal(second.messages.at(-1)?.role, 'tool');
      assert.equal(second.completion, `answer ${t.finalAnswer}`);
      for (const c of t.modelCalls) {
        assert.ok(c.promptTokenIds && c.promptTokenIds.length > 0);
        assert.equal(c.completionTokenIds?.length, c.usage.completionTokens);
        assert.equal(c.logprobs?.length, c.usage.completionTokens);
        assert.equal(c.finishReason, 'stop');
        assert.ok(c.latencyMs >= 0);
        assert.equal(c.policyVersion, 'scripted-v0');
      }
      const tool = t.events.find((e) => e.type === 'tool');
      assert.deepEqual(tool?.args, { query: tasks[i].public.question.split(' ')[5] });
      assert.match(tool?.observation ?? '', /colour/);
      assert.ok(t.events.some((e) => e.type === 'log' && e.message === 'searched'));
      assert.ok(t.timings.wallMs > 0);
    }
  });

  it('shows the harness only the public task, its knob values, prompts, tools and limits', async () => {
    const t = await runAlongside(rt, await rt.prepare(fixture('show-context')));
    const seen = JSON.parse(t.finalAnswer ?? '{}') as Record<string, unknown>;
    const task = fixtureTasks('val', 1)[0];
    assert.deepEqual(seen.task, task.public);
    assert.ok(!(t.finalAnswer ?? '').includes('"answer"'), 'private data must not reach the harness');
    assert.deepEqual(seen.knobs, { topk: 3, mode: 'a' });
    assert.deepEqual(seen.prompts, { system: 'be brief .' });
    assert.deepEqual(
      (seen.tools as { name: string }[]).map((x) => x.name),
      ['search'],
    );
    assert.deepEqual(seen.limits, { maxTurns: 4, maxTokens: 200, maxTokensPerCall: 12, wallMs: 8000 });
  });

  it("enforces the run config's sampling whatever the harness asks (recording what it asked), and clamps max_tokens", async () => {
    backend.requests.length = 0;
    const prepared = await rt.prepare(fixture('good'));
    await rt.rollout(prepared, fixtureTasks('val', 1)[0], { sampleIndex: 0, seed: 3 });
    const p = backend.requests[0].params;
    assert.equal(p.temperature, TEST_SAMPLING.temperature); // the harness asked for 0.5: sampling is not a harness knob
    assert.equal(p.top_p, TEST_SAMPLING.top_p); // config default: the harness passed none
    const t = (await rt.rollout(prepared, fixtureTasks('val', 1)[0], { sampleIndex: 0, seed: 4 })).modelCalls[0].params;
    assert.equal(t.temperature, TEST_SAMPLING.temperature);
    assert.equal(t.requested_temperature, 0.5, 'the trajectory records what the harness asked for');
    assert.equal(t.requested_top_p, undefined, 'nothing asked, nothing recorded');
    assert.equal(p.max_tokens, 12); // config default 16, clamped by the domain's maxTokensPerCall
    assert.equal(typeof p.seed, 'number');
    assert.notEqual(backend.requests[0].params.seed, backend.requests[1].params.seed);
    assert.equal(backend.requests[0].version, 'scripted-v0');
  });

  it('ends with turn_limit after the harness overruns min(sandbox, domain) turns', async () => {
    const local = setup({ domainLimits: { maxTurns: 2 }, limits: { maxTurns: 6 } });
    try {
      const t = await runAlongside(local.rt, await local.rt.prepare(fixture('greedy')));
      assertFailed(t, 'turn_limit', /model call 3 refused: the limit is 2 calls/);
      assert.equal(t.modelCalls.length, 2);
      assert.ok(t.events.some((e) => e.type === 'limit' && e.name === 'turn_limit'));
      assert.ok(t.events.some((e) => e.type === 'log' && /refused/.test(String((e.data as { message?: string })?.message))));
      assert.ok(t.finalAnswer !== null, 'the harness still returned; its answer is kept for reading');
    } finally {
      await local.rt.close();
    }
  });

  it('clamps each call to the domain limit and ends with token_limit when the rollout budget is spent', async () => {
    const long = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ');
    const local = setup({ domainLimits: { maxTokensPerCall: 5 }, limits: { maxTokens: 12, maxTurns: 10 }, script: () => long });
    try {
      const t = await runAlongside(local.rt, await local.rt.prepare(fixture('greedy')), fixtureTasks('val', 1));
      assertFailed(t, 'token_limit', /used all 12 completion tokens/);
      // Asked for 1000 each time: got 5, 5, then the 2 left.
      assert.deepEqual(
        t.modelCalls.map((c) => c.params.max_tokens),
        [5, 5, 2],
      );
      assert.deepEqual(
        t.modelCalls.map((c) => c.params.requested_max_tokens),
        [1000, 1000, 1000],
      );
      assert.deepEqual(
        t.modelCalls.map((c) => c.finishReason),
        ['length', 'length', 'length'],
      );
    } finally {
      await local.rt.close();
    }
  });

  it("records a backend failure as 'infra_error' (not the harness's fault, not scored)", async () => {
    const local = setup({ script: () => ({ error: 'engine down' }) });
    try {
      const t = await local.rt.rollout(await local.rt.prepare(fixture('crash')), fixtureTasks('val', 1)[0], { sampleIndex: 0, seed: 0 });
      assertFailed(t, 'infra_error', /policy backend failed: engine down/);
      assert.equal(t.infra?.source, 'backend');
      assert.equal(t.modelCalls[0].finishReason, 'error');
    } finally {
      await local.rt.close();
    }
  });

  it('keeps `concurrency` rollouts in flight, so a batching backend sees full batches', async () => {
    const local = setup({
      concurrency: 8,
      script: (m) => ({
        text:
          m.at(-1)?.role === 'tool' ? `answer ${/colour (\S+)/.exec(m.at(-1)?.content ?? '')?.[1]}` : `search ${/of (\S+)/.exec(m.at(-1)?.content ?? '')?.[1]}`,
        delayMs: 150,
      }),
    });
    try {
      const prepared = await local.rt.prepare(fixture('good'));
      const items = Array.from({ length: 16 }, (_, i) => ({ task: fixtureTasks('val', 8)[i % 8], sampleIndex: Math.floor(i / 8), seed: i }));
      const trajs = await local.rt.rolloutMany(prepared, items);
      assert.equal(trajs.filter((t) => t.verdict.pass).length, 16);
      assert.ok(local.backend.maxInFlight <= 8);
      assert.ok(local.backend.maxInFlight >= 6, `only ${local.backend.maxInFlight} calls were in flight at once`);
    } finally {
      await local.rt.close();
    }
  });

  it('close() kills running harnesses; their rollouts end with a reason', async () => {
    const local = setup({ limits: { wallMs: 30_000 } });
    const prepared = await local.rt.prepare(fixture('hang'));
    const pending = local.rt.rollout(prepared, fixtureTasks('val', 1)[0], { sampleIndex: 0, seed: 0 });
    await new Promise((r) => setTimeout(r, 500));
    const t0 = Date.now();
    await local.rt.close();
    const t = await pending;
    assert.ok(Date.now() - t0 < 2000);
    assertFailed(t, 'error', /runtime was closed/);
    await assert.rejects(local.rt.rollout(prepared, fixtureTasks('val', 1)[0], { sampleIndex: 0, seed: 0 }), /closed/);
  });
});
