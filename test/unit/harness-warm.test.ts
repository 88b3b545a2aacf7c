/**
 * Warm processes (workerPool.ts, worker/poolHost.ts): a Node candidate's rollouts served one after
 * another by one sandboxed process, each in a fresh worker thread. What one rollout leaves behind
 * (globals, module scope, a polluted prototype, the environment, open descriptors, V8 flags, files,
 * timers) must not reach the next; a rollout that hangs, aborts the process or never lets its thread
 * go costs only its own task and the process is replaced; and an evaluation with the embedded model
 * is the same, rollout for rollout, with and without warm processes.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ResultStore } from '../../src/archive/resultStore.js';
import { SandboxLimitsSchema, SamplingSchema } from '../../src/core/config.js';
import type { Trajectory } from '../../src/core/trajectory.js';
import { getDomain } from '../../src/domains/index.js';
import type { Task } from '../../src/domains/types.js';
import { evaluate } from '../../src/engine/evaluate.js';
import { ensureBootstrap } from '../../src/harness/assets.js';
import { HarnessRuntime } from '../../src/harness/runtime.js';
import { planNodeHost, warmWorkersSupported } from '../../src/harness/sandbox.js';
import { ScriptedBackend } from '../../src/harness/testing/scriptedBackend.js';
import { createBackend } from '../../src/policy/index.js';
import { fixtureDomain } from '../fixtures/harnesses/fixtureDomain.js';

const PROBE = new URL('../fixtures/harnesses/warm-probe', import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), 'whale-warm-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

function task(i: number, question: string): Task {
  return { id: `t${i}-${question}`, split: 'val', public: { id: `t${i}`, question }, private: { answer: 'x', facts: [] } } as unknown as Task;
}

interface Seen {
  pid: number;
  global: string | null;
  moduleCounter: number;
  proto: string | null;
  env: string | null;
  fds: number[];
  flags: string | null;
  file: string | null;
  written: string;
}

/** Rollouts one at a time on a runtime with concurrency 1: every rollout goes to the same warm process while it lives. */
async function sequence(questions: string[], warmWorkers = true): Promise<Trajectory[]> {
  const domain = { ...fixtureDomain(), checkRules: undefined };
  const rt = new HarnessRuntime({
    domain,
    backend: new ScriptedBackend(() => 'answer x'),
    limits: SandboxLimitsSchema.parse({ wallMs: 6000, cpuMs: 10_000, memoryMb: 64 }),
    sampling: SamplingSchema.parse({}),
    concurrency: 1,
    cacheDir: join(tmp, 'cache'),
    warmWorkers,
  });
  try {
    const prepared = await rt.prepare(PROBE);
    const out: Trajectory[] = [];
    for (const [i, q] of questions.entries()) out.push(await rt.rollout(prepared, task(i, q), { sampleIndex: 0, seed: i }));
    return out;
  } finally {
    await rt.close();
  }
}

const seen = (t: Trajectory): Seen => {
  assert.equal(t.termination, 'answered', `${t.taskId}: ${t.termination} ${t.terminationDetail ?? ''}`);
  return JSON.parse(t.finalAnswer as string) as Seen;
};

test('a later rollout on the same warm process sees nothing an earlier one left: globals, module scope, prototypes, env, descriptors, V8 flags, files, timers', async () => {
  const trajs = await sequence(['first', 'sleep600', 'third']);
  const [a, b, c] = trajs.map(seen);
  assert.equal(b.pid, a.pid, 'the second rollout ran in the same process (else this test proves nothing)');
  assert.equal(c.pid, a.pid);
  for (const s of [a, b, c]) {
    assert.deepEqual(
      { global: s.global, moduleCounter: s.moduleCounter, proto: s.proto, env: s.env, file: s.file },
      { global: null, moduleCounter: 0, proto: null, env: null, file: null },
    );
    assert.match(String(s.flags), /denied by the WHALE sandbox/);
    assert.equal(s.written, 'ERR_ACCESS_DENIED');
  }
  // The first rollout left a descriptor open: gone when its thread exited (else the host would have retired the process, and the pids would differ).
  assert.deepEqual(b.fds, a.fds);
  assert.deepEqual(c.fds, a.fds);
  // The first rollout's timers (garbage on stdout after 100 and 150 ms) died with its thread: the
  // second rollout, 600 ms long, ended cleanly.
  assert.equal(trajs[1].termination, 'answered');
  const data = trajs[1].events.find((e) => e.name === 'sandbox')?.data as { warmProcess?: boolean; cpuMs?: number };
  assert.equal(data.warmProcess, true);
});

test('a rollout that hangs, kills or aborts its process, overflows its heap, exits or holds its thread costs its own task only; the process is replaced when it must be', async () => {
  const qs = ['ok', 'hang', 'ok', 'kill-process', 'ok', 'heap', 'ok', 'exit', 'ok', 'busy-pool', 'ok', 'ok', 'abort', 'ok', 'close-stdin', 'ok'];
  const trajs = await sequence(qs);
  const term = trajs.map((t) => t.termination);
  assert.deepEqual(term, [
    'answered',
    'timeout',
    'answered',
    'crash',
    'answered',
    'memory_limit',
    'answered',
    'protocol_error',
    'answered',
    'answered',
    'answered',
    'answered',
    'crash',
    'answered',
    'answered',
    'answered',
  ]);
  assert.match(String(trajs[3].terminationDetail), /killed by SIGKILL/);
  const pid = (i: number) => seen(trajs[i]).pid;
  assert.notEqual(pid(2), pid(0), 'after a hang the process was killed and replaced');
  assert.notEqual(pid(4), pid(2), 'after the process was killed from inside, a new one');
  // A heap overflow ends only the worker thread, and a thread that exits on its own leaves the process clean: both reused.
  assert.equal(pid(6), pid(4));
  assert.equal(pid(8), pid(6));
  // Work left running in the thread pool keeps the thread from exiting: the process is killed, not reused.
  assert.equal(pid(9), pid(8));
  assert.notEqual(pid(10), pid(9));
  assert.equal(pid(11), pid(10));
  // process.abort() ends the process where it runs, or is refused in a worker thread: a crash of this task either way.
  assert.equal(trajs[13].termination, 'answered');
  // A rollout that closed one of the process's own descriptors answered, but the process is not reused.
  assert.notEqual(pid(15), pid(14));
});

test('without warm processes every rollout has a process of its own (the comparison the first test needs)', async () => {
  const [a, b] = (await sequence(['first', 'second'], false)).map(seen);
  assert.notEqual(a.pid, b.pid);
  const data = (await sequence(['x'], false))[0].events.find((e) => e.name === 'sandbox')?.data as { warmProcess?: boolean };
  assert.equal(data.warmProcess, false);
});

test("a warm process's host thread validates each run message before it starts a thread for it: a bad one ends the process (exit 3, the reason on stderr)", async (t) => {
  if (!warmWorkersSupported()) return t.skip('no warm processes on this Node');
  const cacheDir = join(tmp, 'cache-badrun');
  const rt = new HarnessRuntime({
    domain: fixtureDomain(),
    backend: new ScriptedBackend(() => 'answer x'),
    limits: SandboxLimitsSchema.parse({}),
    sampling: SamplingSchema.parse({}),
    concurrency: 1,
    cacheDir,
  });
  try {
    const prepared = await rt.prepare(PROBE);
    const bootstrap = await ensureBootstrap(cacheDir);
    const plan = planNodeHost({ dir: prepared.dir, bootstrap, bundle: prepared.bundleFile as string, limits: SandboxLimitsSchema.parse({}), network: 'guard' });
    const r = spawnSync(plan.command, plan.args, {
      cwd: plan.cwd,
      env: plan.env,
      input: JSON.stringify({ type: 'run', rolloutId: 'r1', nonce: 'n1' }) + '\n',
      encoding: 'utf8',
      timeout: 20_000,
    });
    assert.equal(r.status, 3, `exit status ${r.status}, stderr: ${r.stderr}`);
    assert.match(r.stderr, /bad message from the runtime: invalid message \(task/);
    assert.equal(r.stdout, '', 'no thread was started, so nothing was framed');
  } finally {
    await rt.close();
  }
});

/** What must not depend on how rollouts were run: everything but timings and ids. */
type LogprobsOf = { modelCalls: { logprobs?: number[] }[] };

function comparable(t: Trajectory): unknown {
  return {
    taskId: t.taskId,
    sampleIndex: t.sampleIndex,
    seed: t.seed,
    harnessHash: t.harnessHash,
    policyVersion: t.policyVersion,
    split: t.split,
    finalAnswer: t.finalAnswer,
    termination: t.termination,
    verdict: t.verdict,
    diagnostics: t.diagnostics ?? null,
    modelCalls: t.modelCalls.map(({ latencyMs: _l, t: _t, logprobs: _p, ...call }) => call),
    events: t.events.filter((e) => e.name !== 'sandbox').map(({ t: _t, ...e }) => e),
  };
}

test('an embedded kbqa evaluation gives the same key, summary and trajectories with sandbox.separation process, thread and context', async () => {
  const domain = getDomain('kbqa');
  const results: { keyHash: string; mean: number; terminations: Record<string, number>; trajs: unknown[]; raw: LogprobsOf[]; separation: string[] }[] = [];
  for (const separation of ['process', 'thread', 'context'] as const) {
    const dir = join(tmp, `eval-${separation}`);
    const backend = await createBackend({ kind: 'embedded', model: 'base', maxBatch: 64 }, { storeDir: dir });
    // As the engine builds it from a config that says `"sandbox": { "separation": … }` (its limits are the config's `sandbox`).
    const limits = SandboxLimitsSchema.parse({ separation });
    const rt = new HarnessRuntime({
      domain,
      backend,
      limits,
      sampling: SamplingSchema.parse({}),
      concurrency: 4,
      cacheDir: join(dir, 'cache'),
    });
    try {
      const store = new ResultStore(dir);
      const r = await evaluate({
        store,
        runner: rt,
        domain,
        harnessDir: domain.h0Dir,
        policyVersion: backend.currentVersion(),
        split: 'val',
        k: 2,
        seed: 11,
        sampling: SamplingSchema.parse({}),
        limits,
        concurrency: 4,
        limit: 8,
      });
      const raw = store.loadTrajectories(r.summary.keyHash).sort((x, y) => x.taskId.localeCompare(y.taskId) || x.sampleIndex - y.sampleIndex);
      const trajs = raw.map(comparable);
      assert.equal(trajs.length, 16);
      const separation = [...new Set(raw.map((t) => (t.events.find((e) => e.name === 'sandbox')?.data as { separation?: string }).separation ?? '?'))];
      results.push({ keyHash: r.summary.keyHash, mean: r.summary.meanAtK, terminations: r.summary.terminations, trajs, raw, separation });
    } finally {
      await rt.close();
      await backend.close();
    }
  }
  const [cold] = results;
  assert.deepEqual(
    results.map((r) => r.separation),
    warmWorkersSupported() ? [['process'], ['thread'], ['context']] : [['process'], ['process'], ['process']],
    'each mode ran as it says (else this test compares a mode with itself)',
  );
  for (const warm of results.slice(1)) {
    assert.equal(warm.keyHash, cold.keyHash, 'same result key: cached results stay valid whichever separation is set');
    assert.equal(warm.mean, cold.mean);
    assert.deepEqual(warm.terminations, cold.terminations);
    assert.deepEqual(warm.trajs, cold.trajs);
  }
  // Logprobs too, bit for bit: the embedded model batches whatever calls are in flight, each path
  // brings them in another order, and a request's numbers must not depend on its batch (sampler.ts,
  // PREFILL_ALIGN; before it they differed at ~1e-7, and CI once saw a token tip).
  const logprobs = (t: LogprobsOf) => t.modelCalls.flatMap((c) => c.logprobs ?? []);
  const lc = cold.raw.flatMap(logprobs);
  assert.ok(lc.length > 16, 'logprobs were recorded');
  for (const warm of results.slice(1)) assert.deepEqual(warm.raw.flatMap(logprobs), lc);
  // Not a vacuous comparison: the model really sampled, and the rollouts differ from one another.
  const calls = (cold.trajs as { modelCalls: { completionTokenIds?: number[] }[] }[]).flatMap((t) => t.modelCalls);
  assert.ok(calls.length >= 16 && calls.every((c) => (c.completionTokenIds?.length ?? 0) > 0));
  assert.ok(new Set(calls.map((c) => JSON.stringify(c.completionTokenIds))).size > 4);
});
