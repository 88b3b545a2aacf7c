/**
 * Context hosts (worker/contextHost.ts): a warm process that serves each rollout of a candidate in a
 * fresh `vm` context. What one rollout leaves behind (globals, module scope, polluted prototypes,
 * timers, promise chains) must not reach the next; nothing of the host's realm may be reachable from
 * candidate code (every escape route below must find no `process`); every bad ending costs its own
 * task only, and the process is replaced when it must be; and a candidate that needs anything of
 * Node's runs in a worker thread instead, saying why.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxLimitsSchema, SamplingSchema } from '../../src/core/config.js';
import type { Trajectory } from '../../src/core/trajectory.js';
import type { Task } from '../../src/domains/types.js';
import { HarnessRuntime } from '../../src/harness/runtime.js';
import { warmWorkersSupported } from '../../src/harness/sandbox.js';
import { ScriptedBackend } from '../../src/harness/testing/scriptedBackend.js';
import { fixtureDomain } from '../fixtures/harnesses/fixtureDomain.js';

const fixture = (name: string) => new URL(`../fixtures/harnesses/${name}`, import.meta.url).pathname;
const PROBE = fixture('context-probe');
const tmp = mkdtempSync(join(tmpdir(), 'whale-context-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const skip = warmWorkersSupported() ? false : 'no warm processes on this Node';

function task(i: number, question: string): Task {
  return { id: `t${i}-${question}`, split: 'val', public: { id: `t${i}`, question }, private: { answer: 'x', facts: [] } } as unknown as Task;
}

interface Seen {
  global: string | null;
  moduleCounter: number;
  proto: string | null;
  arrayProto: string | null;
  leftoverTimers: number;
  escapes: Record<string, unknown> | null;
}

/** Rollouts one at a time (concurrency 1, so each goes to the same warm process while it lives), with the processes started before each. */
async function sequence(questions: string[], dir = PROBE, memoryMb = 64): Promise<{ trajs: Trajectory[]; started: number[] }> {
  const rt = new HarnessRuntime({
    domain: { ...fixtureDomain(), checkRules: undefined },
    backend: new ScriptedBackend(() => 'answer x'),
    limits: SandboxLimitsSchema.parse({ wallMs: 4000, cpuMs: 10_000, memoryMb }), // CPU above wall: a loop always ends as `timeout`
    sampling: SamplingSchema.parse({}),
    concurrency: 1,
    cacheDir: join(tmp, 'cache'),
  });
  try {
    const prepared = await rt.prepare(dir);
    const trajs: Trajectory[] = [];
    const started: number[] = [];
    for (const [i, q] of questions.entries()) {
      trajs.push(await rt.rollout(prepared, task(i, q), { sampleIndex: 0, seed: i }));
      started.push(rt.warmProcessesStarted);
    }
    return { trajs, started };
  } finally {
    await rt.close();
  }
}

const seen = (t: Trajectory): Seen => {
  assert.equal(t.termination, 'answered', `${t.taskId}: ${t.termination} ${t.terminationDetail ?? ''}`);
  return JSON.parse(t.finalAnswer as string) as Seen;
};
const sandboxData = (t: Trajectory) => t.events.find((e) => e.name === 'sandbox')?.data as { separation?: string; threadBecause?: string };

test('a later rollout in the same context host sees nothing an earlier one left: globals, module scope, prototypes, timers', { skip }, async () => {
  const { trajs, started } = await sequence(['first', 'sleep300', 'third']);
  assert.deepEqual(started, [1, 1, 1], 'all three rollouts ran in one process (else this test proves nothing)');
  for (const t of trajs) {
    assert.equal(sandboxData(t).separation, 'context');
    const s = seen(t);
    assert.deepEqual(s, { global: null, moduleCounter: 0, proto: null, arrayProto: null, leftoverTimers: 0, escapes: null });
    // The earlier rollouts' timers (a timeout at 50 ms, an interval every 30 ms) never fired in a later one.
    assert.ok(!t.events.some((e) => /leftover/.test(String(e.message))), `${t.taskId}: ${JSON.stringify(t.events.map((e) => e.message))}`);
  }
});

test(
  "nothing of the host's realm is reachable from candidate code: constructors, the bridge's errors, stack overflows, call sites, callers",
  { skip },
  async () => {
    const { trajs } = await sequence(['escape']);
    const s = seen(trajs[0]);
    const escapes = s.escapes as Record<string, unknown>;
    const flat = (v: unknown): string[] => (Array.isArray(v) ? v.flatMap(flat) : [String(v)]);
    const found = Object.entries(escapes).flatMap(([k, v]) => flat(v).map((x) => [k, x]));
    assert.ok(found.length >= 15, JSON.stringify(escapes));
    for (const [k, v] of found) assert.ok(v === 'undefined' || v.startsWith('blocked') || v.startsWith('no '), `${k}: ${v} (${JSON.stringify(escapes)})`);
    // Not vacuous: the attempts ran (the stack overflow was caught, the call sites were read, the gateway refused).
    assert.ok((escapes['stack overflow'] as unknown[]).length >= 1);
    assert.ok((escapes['call sites'] as unknown[]).length >= 2, JSON.stringify(escapes['call sites']));
    assert.equal(escapes['gateway error'], 'undefined');
  },
);

test('every bad ending in a context costs its own task only, as in a process of its own; the process is replaced when it must be', { skip }, async () => {
  const qs = ['ok', 'hang', 'ok', 'heap', 'ok', 'throw-in-timer', 'ok', 'reject', 'ok', 'never', 'ok', 'unref', 'ok', 'spin-after', 'ok'];
  const { trajs, started } = await sequence(qs);
  const term = trajs.map((t) => t.termination);
  assert.deepEqual(term, [
    'answered',
    'timeout', // a synchronous loop: the engine's limit kills the process
    'answered',
    'memory_limit',
    'answered',
    'crash',
    'answered',
    'crash',
    'answered',
    'protocol_error',
    'answered',
    'protocol_error',
    'answered',
    'timeout', // answered, then never let go: stopped by its limit, not counted as an answer
    'answered',
  ]);
  assert.match(String(trajs[5].terminationDetail), /uncaught exception: thrown in a timer/);
  assert.match(String(trajs[7].terminationDetail), /unhandled rejection: nobody caught this/);
  assert.match(String(trajs[9].terminationDetail), /exited without sending a result/);
  assert.match(String(trajs[11].terminationDetail), /exited without sending a result/);
  // Processes: replaced after the hang, the heap overflow and the spin; reused after every clean ending.
  assert.deepEqual(started, [1, 1, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 4]);
  for (const i of [0, 2, 4, 6, 8, 10, 12, 14]) assert.deepEqual(seen(trajs[i]).moduleCounter, 0);
});

test('what a candidate logged before it hangs reaches the trajectory: a context host sends its frames in batches, but a log at once', { skip }, async () => {
  const { trajs } = await sequence(['log-then-hang', 'ok']);
  assert.equal(trajs[0].termination, 'timeout');
  const logged = trajs[0].events.filter((e) => e.message === 'about to hang');
  assert.equal(logged.length, 1, JSON.stringify(trajs[0].events.map((e) => [e.type, e.name, e.message])));
  assert.deepEqual(logged[0].data, { step: 1 });
  assert.equal(trajs[1].termination, 'answered');
});

test(
  'an error the runtime cannot even describe ends its own rollout only, and its stack is never read where the host realm shows; a context has no FinalizationRegistry',
  { skip },
  async () => {
    // Room for a string at V8's length limit (512 MB): below it the rollout ends as memory_limit, which proves nothing here.
    const { trajs, started } = await sequence(['ok', 'huge-throw', 'ok', 'finalizer', 'ok'], PROBE, 1400);
    assert.deepEqual(
      trajs.map((t) => t.termination),
      ['answered', 'crash', 'answered', 'answered', 'answered'],
    );
    assert.match(String(trajs[1].terminationDetail), /uncaught exception: x{100}/);
    assert.doesNotMatch(JSON.stringify(trajs[1]), /typeof process = object/);
    assert.equal(trajs[3].finalAnswer, 'typeof FinalizationRegistry: undefined');
    assert.deepEqual(started, [1, 1, 1, 1, 1], 'one process throughout: nothing here needed a new one');
  },
);

test(
  "what of the host's realm a context can reach is inert: its Function compiles nothing, its built-ins cannot be changed; no asynchronous WebAssembly",
  { skip },
  async () => {
    const { trajs, started } = await sequence(['host-error', 'ok', 'wasm', 'ok', 'callsite-stash', 'callsite-stash']);
    assert.equal(trajs[0].termination, 'answered', String(trajs[0].terminationDetail));
    const report = JSON.parse(String(trajs[0].finalAnswer)) as Record<string, string>;
    assert.deepEqual(report, { hostRealm: 'true', eval: 'blocked: EvalError', 'hook apply': 'blocked: TypeError', 'hook toJSON': 'blocked: TypeError' });
    assert.equal(trajs[2].finalAnswer, 'compile: undefined, instantiate: undefined, compileStreaming: undefined, Module: function');
    assert.deepEqual(seen(trajs[1]).moduleCounter, 0);
    // The host's call sites can be reached, but their prototype (shared by the process) is frozen: nothing is carried to the next rollout.
    assert.equal(trajs[4].finalAnswer, 'host call sites: host, frozen true, previous none');
    assert.equal(trajs[5].finalAnswer, 'host call sites: host, frozen true, previous none');
    assert.deepEqual(started, [1, 1, 1, 1, 1, 1]);
  },
);

test(
  'a rollout that leaves memory behind where the host cannot free it (the Symbol.for registry) retires its process: the next rollout is not charged for it',
  { skip },
  async () => {
    const { trajs, started } = await sequence(['ok', 'symbol-hog', 'ok', 'ok']);
    assert.deepEqual(
      trajs.map((t) => t.termination),
      ['answered', 'answered', 'answered', 'answered'],
    );
    assert.deepEqual(started, [1, 1, 2, 2], 'a new process after the rollout that left 24 MB behind, and only then');
  },
);

test(
  'a candidate that needs anything of Node (a built-in, process, Buffer, URL, …) runs in a worker thread, and the trajectory says why',
  { skip },
  async () => {
    for (const [name, why] of [
      ['read-outside', /imports Node's node:fs/],
      ['env', /uses process/],
      ['alloc', /uses Buffer/],
      ['finalizer', /uses FinalizationRegistry/],
      ['wasm-named', /uses WebAssembly/],
    ] as const) {
      const { trajs } = await sequence(['x'], fixture(name));
      const d = sandboxData(trajs[0]);
      assert.equal(d.separation, 'thread', name);
      assert.match(String(d.threadBecause), why);
    }
  },
);

test('sandbox.separation and the environment: the stricter of the two decides how rollouts are kept apart', { skip }, async () => {
  const saved = { contexts: process.env.WHALE_CONTEXTS, warm: process.env.WHALE_WARM_WORKERS };
  const restore = (name: string, v: string | undefined) => (v === undefined ? delete process.env[name] : (process.env[name] = v));
  const cases: [separation: 'context' | 'thread' | 'process' | undefined, env: Record<string, string>, expected: string][] = [
    [undefined, {}, 'context'],
    ['context', {}, 'context'],
    ['thread', {}, 'thread'],
    ['process', {}, 'process'],
    ['context', { WHALE_CONTEXTS: '0' }, 'thread'],
    ['context', { WHALE_WARM_WORKERS: '0' }, 'process'],
    ['process', { WHALE_CONTEXTS: '0' }, 'process'],
    [undefined, { WHALE_CONTEXTS: '0' }, 'thread'],
  ];
  try {
    for (const [separation, env, expected] of cases) {
      delete process.env.WHALE_CONTEXTS;
      delete process.env.WHALE_WARM_WORKERS;
      Object.assign(process.env, env);
      const limits = SandboxLimitsSchema.parse({ wallMs: 4000, ...(separation ? { separation } : {}) });
      const rt = new HarnessRuntime({
        domain: { ...fixtureDomain(), checkRules: undefined },
        backend: new ScriptedBackend(() => 'answer x'),
        limits,
        sampling: SamplingSchema.parse({}),
        concurrency: 1,
        cacheDir: join(tmp, 'cache'),
      });
      try {
        const prepared = await rt.prepare(PROBE);
        const t = await rt.rollout(prepared, task(0, 'first'), { sampleIndex: 0, seed: 0 });
        assert.equal(sandboxData(t).separation, expected, `separation ${separation ?? '(unset)'} with ${JSON.stringify(env)}`);
        assert.equal(t.termination, 'answered', `${expected}: the rollout ran (${t.terminationDetail ?? ''})`);
      } finally {
        await rt.close();
      }
    }
  } finally {
    restore('WHALE_CONTEXTS', saved.contexts);
    restore('WHALE_WARM_WORKERS', saved.warm);
  }
  assert.throws(() => SandboxLimitsSchema.parse({ separation: 'vm' }), /separation/);
});
