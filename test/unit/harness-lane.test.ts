/**
 * What a context host does since it carries its calls on its own pipe and serves every candidate.
 * The pipe lane (protocol.ts, `call` / `reply`): whatever a candidate sends — large, escape-heavy,
 * oversized, refused, parallel calls — it must get the same answers as over HTTP, the calls must not
 * count against the output cap, and the lines themselves must split the same however they arrive;
 * the HTTP lane retries a kept-alive connection the gateway dropped. The shared host: each
 * candidate gets its own code, one it no longer holds is sent again, and what candidates leave
 * behind cannot add up.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { SandboxLimitsSchema, SamplingSchema } from '../../src/core/config.js';
import type { Trajectory } from '../../src/core/trajectory.js';
import { LineSplitter } from '../../src/harness/framing.js';
import { HarnessRuntime } from '../../src/harness/runtime.js';
import { warmWorkersSupported } from '../../src/harness/sandbox.js';
import { gatewayPost } from '../../src/harness/worker/gatewayClient.js';
import { ScriptedBackend } from '../../src/harness/testing/scriptedBackend.js';
import { fixtureDomain, fixtureTasks } from '../fixtures/harnesses/fixtureDomain.js';

const PROBE = new URL('../fixtures/harnesses/lane-probe', import.meta.url).pathname;
const GOOD = new URL('../fixtures/harnesses/good', import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), 'whale-lane-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const skip = warmWorkersSupported() ? false : 'no warm processes on this Node';

async function rollouts(lane: 'pipe' | 'http', dir: string, n: number, o: { outputBytes: number; maxTurns: number }): Promise<Trajectory[]> {
  const rt = new HarnessRuntime({
    // The probe answers with what it saw, which no model said: the domain's rules would call that a violation.
    domain: { ...fixtureDomain({ maxTurns: o.maxTurns }), checkRules: undefined },
    backend: new ScriptedBackend((m) => (m.some((x) => x.role === 'tool') ? 'answer blue' : `search ${/of (\S+)/.exec(m[m.length - 1].content)?.[1] ?? 'x'}`)),
    limits: SandboxLimitsSchema.parse({ wallMs: 20_000, cpuMs: 20_000, memoryMb: 256, outputBytes: o.outputBytes }),
    sampling: SamplingSchema.parse({}),
    concurrency: 2,
    cacheDir: join(tmp, 'cache'),
    contextLane: lane,
  });
  try {
    const prepared = await rt.prepare(dir);
    const tasks = fixtureTasks('val').slice(0, n);
    return await Promise.all(tasks.map((t, i) => rt.rollout(prepared, t, { sampleIndex: 0, seed: i })));
  } finally {
    await rt.close();
  }
}

/** What a rollout did, without its timings. */
function shape(t: Trajectory) {
  const sandbox = t.events.find((e) => e.name === 'sandbox')?.data as { separation?: string; lane?: string };
  return {
    termination: t.termination,
    detail: t.terminationDetail,
    answer: t.finalAnswer,
    score: t.verdict.score,
    calls: t.modelCalls.map((c) => ({ messages: c.messages, completion: c.completion, params: c.params })),
    events: t.events
      .filter((e) => e.name !== 'sandbox')
      .map((e) => ({ type: e.type, name: e.name, message: e.message, args: JSON.stringify(e.args ?? null).length })),
    separation: sandbox.separation,
  };
}

test('every call a candidate can make gets the same answer on the pipe as over HTTP, and calls do not count as output', { skip }, async () => {
  const [pipe, http] = [
    await rollouts('pipe', PROBE, 3, { outputBytes: 100_000, maxTurns: 1 }),
    await rollouts('http', PROBE, 3, { outputBytes: 100_000, maxTurns: 1 }),
  ];
  for (const [i, t] of pipe.entries()) {
    assert.equal((t.events.find((e) => e.name === 'sandbox')?.data as { lane: string }).lane, 'pipe');
    assert.equal((http[i].events.find((e) => e.name === 'sandbox')?.data as { lane: string }).lane, 'http');
    assert.equal(t.termination, 'turn_limit', `${t.terminationDetail}`);
    const seen = JSON.parse(t.finalAnswer as string) as string[];
    // The probe's 600 KB of calls are over the 100 KB output cap; had they counted, it would have stopped there.
    assert.deepEqual(seen.slice(0, 3), ['big 0: ok 8', 'big 1: ok 8', 'big 2: ok 8']);
    assert.equal(seen[3], 'escapes: ok 8');
    assert.match(seen[4], /^unknown tool: gateway: unknown tool 'no such tool'/);
    assert.equal(seen[5], 'over the body limit: gateway: request body over 4194304 bytes');
    assert.match(seen[6], /^not an object: gateway: tool 'search' failed: search needs a string query/);
    assert.match(seen[7], /^parallel: \d+ search /);
    assert.match(seen[8], /^chat over the turn limit: gateway: model call 2 refused: the limit is 1 calls per rollout/);
    assert.deepEqual(shape(t), shape(http[i]));
  }
});

test('a two-turn harness scores the same on both lanes, call for call', { skip }, async () => {
  const [pipe, http] = [
    await rollouts('pipe', GOOD, 8, { outputBytes: 1_000_000, maxTurns: 2 }),
    await rollouts('http', GOOD, 8, { outputBytes: 1_000_000, maxTurns: 2 }),
  ];
  assert.ok(pipe.some((t) => t.verdict.score === 1) && pipe.some((t) => t.modelCalls.length === 2), 'the rollouts searched and answered');
  assert.deepEqual(pipe.map(shape), http.map(shape));
});

test('a protocol line splits the same however it arrives: across chunks, many to a chunk, CRLF, blank lines, too long', () => {
  const split = (chunks: string[], maxLine = 10) => {
    const lines: string[] = [];
    const overlong: number[] = [];
    const s = new LineSplitter(
      (l) => lines.push(l),
      (n) => overlong.push(n),
      maxLine,
    );
    for (const c of chunks) s.push(c);
    return { lines, overlong, rest: s.rest(), pending: s.pendingChars };
  };
  assert.deepEqual(split(['ab', 'c\nde', 'f\r\n\n  \ng']), { lines: ['abc', 'def'], overlong: [], rest: 'g', pending: 1 });
  assert.deepEqual(split(['a\nb\nc\n']), { lines: ['a', 'b', 'c'], overlong: [], rest: '', pending: 0 });
  // A finished line over the limit is reported and dropped, and the next one still arrives.
  assert.deepEqual(split(['0123456789AB\nok\n']), { lines: ['ok'], overlong: [12], rest: '', pending: 0 });
  // An unfinished one is reported once it passes the limit, and the reader starts afresh.
  assert.deepEqual(split(['01234', '56789', 'AB', 'C\nok\n']), { lines: ['C', 'ok'], overlong: [12], rest: '', pending: 0 });
  // A long line in many small chunks comes out whole.
  const long = 'z'.repeat(100_000);
  const chunks = Array.from({ length: 100 }, (_, i) => long.slice(i * 1000, (i + 1) * 1000));
  assert.deepEqual(split([...chunks, '\n'], 200_000).lines, [long]);
});

test('one context host serves every candidate: each gets its own code, and one it no longer holds is sent again', { skip }, async () => {
  // Ten candidates that differ in their code (more than a host holds), then the first again.
  const variants = Array.from({ length: 10 }, (_, i) => {
    const dir = join(tmp, `variant-${i}`);
    cpSync(GOOD, dir, { recursive: true });
    const entry = join(dir, 'harness.ts');
    writeFileSync(
      entry,
      readFileSync(entry, 'utf8').replace('return { answer: act.arg };', `return { answer: act.arg === 'blue' ? 'variant ${i}' : act.arg };`),
    );
    return dir;
  });
  const rt = new HarnessRuntime({
    domain: { ...fixtureDomain(), checkRules: undefined },
    backend: new ScriptedBackend((m) => (m.some((x) => x.role === 'tool') ? 'answer blue' : 'search x')),
    limits: SandboxLimitsSchema.parse({ wallMs: 20_000, cpuMs: 20_000, memoryMb: 128 }),
    sampling: SamplingSchema.parse({}),
    concurrency: 1,
    cacheDir: join(tmp, 'cache-variants'),
  });
  try {
    const answers: (string | null)[] = [];
    for (const dir of [...variants, variants[0], variants[9]]) {
      const t = await rt.rollout(await rt.prepare(dir), fixtureTasks('val')[0], { sampleIndex: 0, seed: 0 });
      assert.equal((t.events.find((e) => e.name === 'sandbox')?.data as { separation: string }).separation, 'context');
      answers.push(t.finalAnswer);
    }
    assert.deepEqual(answers, [...variants.map((_, i) => `variant ${i}`), 'variant 0', 'variant 9']);
    assert.equal(rt.warmProcessesStarted, 1, 'every candidate ran in the one process');
  } finally {
    await rt.close();
  }
});

test("a kept-alive connection the gateway drops as it is reused is retried once on a new one; other failures are the caller's", async () => {
  // The keep-alive race, made certain: the server resets every connection at its second request.
  const seen = new Map<object, number>();
  let resets = 0;
  const server = http.createServer((req, res) => {
    const n = (seen.get(req.socket) ?? 0) + 1;
    seen.set(req.socket, n);
    if (n === 2) {
      resets++;
      req.socket.destroy();
      return;
    }
    req.resume();
    req.on('end', () => res.end(JSON.stringify({ n })));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const gateway = { baseUrl: `http://127.0.0.1:${port}/v1`, toolsUrl: '', token: 't' };
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const replies = [];
    for (let i = 0; i < 4; i++) replies.push(await gatewayPost(gateway, `${gateway.baseUrl}/chat/completions`, '{}', agent));
    assert.ok(resets >= 1, 'a reused connection was reset');
    assert.deepEqual(
      replies.map((r) => r.status),
      [200, 200, 200, 200],
    );
    // A gateway that is not there is no stale connection: the caller sees the failure.
    await assert.rejects(gatewayPost({ ...gateway, baseUrl: 'http://127.0.0.1:1/v1' }, 'http://127.0.0.1:1/v1/chat/completions', '{}', agent), /ECONNREFUSED/);
  } finally {
    agent.destroy();
    server.close();
  }
});

test('candidates that each leave a little memory behind cannot add up in a shared host: past its budget it retires', { skip }, async () => {
  // Each candidate's first rollout leaves 6 MB where nothing frees it: under the per-rollout check's slack, over the budget for code in two.
  const dirs = Array.from({ length: 4 }, (_, i) => {
    const dir = join(tmp, `leaky-${i}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'harness.json'),
      JSON.stringify({ name: `leaky-${i}`, description: 'leaves 6 MB', runtime: 'node', entry: 'harness.ts', prompts: {} }),
    );
    writeFileSync(
      join(dir, 'harness.ts'),
      `import { defineHarness } from 'whale-harness';\nexport default defineHarness({ async run(task) { Symbol.for(\`leaky ${i} \${task.id}\`.padEnd(6 * 2 ** 20, 'x')); return { answer: 'x' }; } });\n`,
    );
    return dir;
  });
  const rt = new HarnessRuntime({
    domain: { ...fixtureDomain(), checkRules: undefined },
    backend: new ScriptedBackend(() => 'answer x'),
    limits: SandboxLimitsSchema.parse({ wallMs: 20_000, cpuMs: 20_000, memoryMb: 64 }),
    sampling: SamplingSchema.parse({}),
    concurrency: 1,
    cacheDir: join(tmp, 'cache-leaky'),
  });
  try {
    const started: number[] = [];
    for (const dir of dirs) {
      const t = await rt.rollout(await rt.prepare(dir), fixtureTasks('val')[0], { sampleIndex: 0, seed: 0 });
      assert.equal(t.termination, 'answered', t.terminationDetail);
      started.push(rt.warmProcessesStarted);
    }
    assert.ok(started[3] > 1, `a new process once the leaks passed the budget (processes started after each: ${started.join(', ')})`);
  } finally {
    await rt.close();
  }
});
