// Harness runtime overhead: trajectories/s of a two-turn harness (search, then answer), side by side.
// Against an instant scripted policy, five ways —
//   direct:  the same calls made in-process (backend.chat + tool.call), no HTTP, no process;
//   gateway: the same calls as HTTP requests to the recording gateway, from this process;
//   sandbox, process per rollout: one sandboxed harness process per rollout (warmWorkers: false);
//   sandbox, worker thread per rollout: a warm sandboxed process per slot, each rollout in a fresh worker thread;
//   sandbox, vm context per rollout: a warm sandboxed process per slot, each rollout in a fresh vm context (the default),
//     its calls carried on the process's own pipe (the default) or, for comparison, over HTTP.
// Then against the real embedded model (the shipped base checkpoint), on each path with the same calls,
// the same sampling parameters and seeds, so the model does the same work on each path:
//   model only: the calls made in-process; then the sandbox paths. The overhead of a path is the
//   share of its time per rollout that is not model time: (model-only rate / path rate) - 1.
// Standalone: node --import tsx scripts/bench-runtime.ts [--concurrency 8] [--embedded-rollouts N] [--help]
import { appendFileSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { hashSeed } from '../src/core/rng.js';
import type { Task } from '../src/domains/types.js';
import { Gateway } from '../src/harness/gateway.js';
import { RolloutSession } from '../src/harness/rolloutSession.js';
import { HarnessRuntime, type PreparedHarness } from '../src/harness/runtime.js';
import { newRolloutContext, preludeScript, type contextPrelude } from '../src/harness/worker/contextPrelude.js';
import { ScriptedBackend } from '../src/harness/testing/scriptedBackend.js';
import { createBackend } from '../src/policy/index.js';
import type { EmbeddedBackend } from '../src/policy/embedded/backend.js';
import type { SamplerStats } from '../src/policy/embedded/sampler.js';
import type { PolicyBackend } from '../src/policy/types.js';
import { fixtureDomain, fixturePolicyReply, fixtureTasks } from '../test/fixtures/harnesses/fixtureDomain.js';

const HARNESS = fileURLToPath(new URL('../test/fixtures/harnesses/good', import.meta.url));
const LIMITS = { wallMs: 30_000, cpuMs: 20_000, memoryMb: 128, outputBytes: 1_000_000, maxTurns: 4, maxTokens: 4096 };
const SAMPLING = { temperature: 1, top_p: 1, max_tokens: 16 };
/** Long enough completions that the model's work per rollout is in the range of a real domain's (tens of ms). */
const EMBEDDED_SAMPLING = { temperature: 1, top_p: 1, max_tokens: 48 };
const SYSTEM = 'write search NAME , then answer VALUE .';

interface Batching {
  stepsPerRollout: number;
  meanBatch: number;
  prefillsPerRollout: number;
}

type Chat = (messages: { role: 'system' | 'user' | 'assistant' | 'tool'; content: string }[], turn: number) => Promise<string>;
type Tool = (query: string) => Promise<string>;

/** The good fixture harness's logic, for the in-process baselines. */
async function twoTurn(task: Task, chat: Chat, tool: Tool): Promise<string | null> {
  const messages: Parameters<Chat>[0] = [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: task.public.question },
  ];
  for (let turn = 0; turn < 4; turn++) {
    const text = await chat(messages, turn);
    messages.push({ role: 'assistant', content: text });
    const m = /^(search|answer) (\S+)/.exec(text.trim());
    if (!m) return null;
    if (m[1] === 'answer') return m[2];
    messages.push({ role: 'tool', content: await tool(m[2]) });
  }
  return null;
}

async function timed(n: number, concurrency: number, one: (i: number) => Promise<boolean>): Promise<{ perSec: number; passRate: number }> {
  let next = 0;
  let passed = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) if (await one(next++)) passed++;
    }),
  );
  return { perSec: n / ((performance.now() - t0) / 1000), passRate: passed / n };
}

export async function benchRuntime(opts: { rollouts?: number; embeddedRollouts?: number; concurrency?: number } = {}): Promise<Record<string, number>> {
  const concurrency = opts.concurrency ?? 8;
  // At least 12 rollouts per slot, so a higher concurrency is not timed on a wave or two.
  const n = opts.rollouts ?? Math.max(96, 12 * concurrency);
  const domain = fixtureDomain();
  const tasks = fixtureTasks('val');
  const backend = new ScriptedBackend((m) => fixturePolicyReply(m));
  const answerOf = (t: Task) => (t.private as { answer: string }).answer;

  const direct = await timed(n * 4, concurrency, async (i) => {
    const task = tasks[i % tasks.length];
    const answer = await twoTurn(
      task,
      async (messages) => (await backend.chat({ messages, params: { ...SAMPLING } })).text,
      async (query) => domain.tools[0].call({ query }, task),
    );
    return answer === answerOf(task);
  });

  const gateway = new Gateway();
  await gateway.start({ unixSocket: false });
  const viaGateway = await timed(n * 2, concurrency, async (i) => {
    const task = tasks[i % tasks.length];
    const session = new RolloutSession({ task, tools: domain.tools, backend, limits: { maxTurns: 4, maxTokens: 4096 }, sampling: SAMPLING, seed: i });
    const info = gateway.register(session, { viaSocket: false });
    const post = async (url: string, body: unknown) =>
      (await (
        await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${info.token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
      ).json()) as Record<string, unknown>;
    const answer = await twoTurn(
      task,
      async (messages) => ((await post(`${info.baseUrl}/chat/completions`, { messages })).choices as { message: { content: string } }[])[0].message.content,
      async (query) => String((await post(`${info.toolsUrl}/search`, { query })).observation),
    );
    gateway.unregister(session);
    return answer === answerOf(task);
  });
  await gateway.close();

  const cacheDir = mkdtempSync(join(tmpdir(), 'whale-bench-runtime-'));
  const out: Record<string, number> = { concurrency };
  try {
    const paths = await samePaths((p) => sandboxRate({ domain, backend, cacheDir, concurrency, n, tasks, ...p }));
    Object.assign(out, {
      'instant policy: direct trajectories/s': round(direct.perSec),
      'instant policy: gateway (HTTP, in-process) trajectories/s': round(viaGateway.perSec),
      'gateway cost per rollout (ms, 2 chat + 1 tool)': round(1000 / viaGateway.perSec - 1000 / direct.perSec, 3),
    });
    for (const [name, r] of paths) {
      out[`instant policy: sandbox, ${name}: trajectories/s`] = round(r.perSec);
      out[`instant policy: sandbox, ${name}: cost per rollout (ms, wall at this concurrency)`] = round(1000 / r.perSec - 1000 / direct.perSec, 2);
      out[`instant policy: sandbox, ${name}: start-up to ready (ms, mean under load)`] = round(r.startupMs, 1);
      out[`instant policy: sandbox, ${name}: harness CPU per rollout (ms, the trajectories' /proc figure, in 10 ms ticks)`] = round(r.cpuMs, 1);
      out[`instant policy: sandbox, ${name}: engine + harness CPU per rollout (ms)`] = round(r.totalCpuMs, 1);
      out[`instant policy: sandbox, ${name}: of which the harness processes (ms)`] = round(r.totalCpuMs - r.engineCpuMs, 2);
      if (r.warmStartCpuMs)
        out[`instant policy: sandbox, ${name}: CPU to start a warm process and serve its first rollout (ms, not in the line above)`] = round(
          r.warmStartCpuMs,
          1,
        );
    }
    const [process1, thread, contextHttp, context] = paths.map(([, r]) => r);
    out['instant policy: context / process throughput'] = round(context.perSec / process1.perSec, 2);
    out['instant policy: context / thread throughput'] = round(context.perSec / thread.perSec, 2);
    out['instant policy: context, pipe / HTTP throughput'] = round(context.perSec / contextHttp.perSec, 2);
    out['sandbox pass rate (lowest of the paths)'] = Math.min(...paths.map(([, r]) => r.passRate));
    Object.assign(out, await searchShape({ domain, backend, cacheDir, concurrency, tasks }));
    // 32 rollouts per slot with the model: a run keeps one runtime, so each warm process serves
    // hundreds of rollouts, and its first few (before V8 has compiled the host's code) are not what
    // a run pays per rollout. Fewer (8 per slot until 2026-12-02) overstate the harness side's CPU.
    Object.assign(out, await embeddedRates({ domain, cacheDir, concurrency, n: opts.embeddedRollouts ?? 32 * concurrency, tasks }));
    out['network isolation is a namespace (1) or the guard only (0)'] = process1.network === 'namespace' ? 1 : 0;
  } finally {
    rmSync(cacheDir, { recursive: true, force: true });
  }
  return out;
}

/**
 * The harness search's shape: a new candidate every few rollouts (kbchain's search tries each on 16
 * tasks × k 4 at concurrency 32, two rollouts a slot). Eight candidates that differ in their code,
 * each given 2 × concurrency rollouts, against the instant policy; CPU counts everything, the
 * processes started for a candidate included, which is what this shape costs.
 */
async function searchShape(o: { domain: ReturnType<typeof fixtureDomain>; backend: PolicyBackend; cacheDir: string; concurrency: number; tasks: Task[] }) {
  const dirs = Array.from({ length: 8 }, (_, i) => {
    const dir = join(o.cacheDir, `candidate-${i}`);
    cpSync(HARNESS, dir, { recursive: true });
    appendFileSync(join(dir, 'harness.ts'), `\nexport const variant = ${i};\n`);
    return dir;
  });
  const out: Record<string, number> = {};
  const rates: number[] = [];
  for (const [name, p] of PATHS.filter(([, p]) => p.warmWorkers)) {
    const rt = new HarnessRuntime({
      domain: o.domain,
      backend: o.backend,
      limits: LIMITS,
      sampling: SAMPLING,
      concurrency: o.concurrency,
      cacheDir: o.cacheDir,
      ...p,
    });
    let cpu0 = 0;
    let rate: { perSec: number };
    try {
      const prepared: PreparedHarness[] = [];
      for (const d of dirs) prepared.push(await rt.prepare(d)); // bundling is not the runtime's cost here
      await childrenReaped();
      cpu0 = cpuWithChildrenMs();
      let k = 0;
      const per = 2 * o.concurrency;
      rate = await timed(per * dirs.length, o.concurrency, async () => {
        const i = k++;
        const t = await rt.rollout(prepared[Math.floor(i / per)], o.tasks[i % o.tasks.length], { sampleIndex: 0, seed: i });
        return t.verdict.pass;
      });
    } finally {
      await rt.close();
    }
    await childrenReaped();
    const n = 2 * o.concurrency * dirs.length;
    out[`search shape (a new candidate every 2 rollouts a slot): ${name}: trajectories/s`] = round(rate.perSec);
    out[`search shape: ${name}: engine + harness CPU per rollout, processes started included (ms)`] = round((cpuWithChildrenMs() - cpu0) / n, 2);
    rates.push(rate.perSec);
  }
  out['search shape: context / thread throughput'] = round(rates[rates.length - 1] / rates[0], 2);
  return out;
}

/**
 * CPU (ms) of this process and of its children once reaped (/proc/self/stat utime, stime, cutime,
 * cstime): engine and harness processes together, less sensitive to a loaded machine than wall time.
 */
function cpuWithChildrenMs(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 10;
}

/** Waits until every child process has exited and been reaped (their CPU is then in cutime/cstime). */
async function childrenReaped(timeoutMs = 5000): Promise<void> {
  const file = `/proc/self/task/${process.pid}/children`;
  const t0 = Date.now();
  while (existsSync(file) && readFileSync(file, 'utf8').trim() !== '' && Date.now() - t0 < timeoutMs) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 100));
}

/**
 * The three ways a Node rollout can be kept apart: a process of its own (old), a worker thread of a
 * warm process, a `vm` context of one (the default); the context's calls on its host's pipe (the
 * default) and, for comparison, over HTTP as the other two make them.
 */
const PATHS = [
  ['process per rollout', { warmWorkers: false, contexts: false }],
  ['worker thread per rollout', { warmWorkers: true, contexts: false }],
  ['vm context per rollout, calls over HTTP', { warmWorkers: true, contexts: true, contextLane: 'http' }],
  ['vm context per rollout', { warmWorkers: true, contexts: true }],
] as const;
type PathOptions = { warmWorkers: boolean; contexts: boolean; contextLane?: 'pipe' | 'http' };

async function samePaths<R>(run: (p: PathOptions) => Promise<R>): Promise<[string, R][]> {
  const out: [string, R][] = [];
  for (const [name, p] of PATHS) out.push([name, await run(p)]);
  return out;
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

/** Rollouts/s through the real runtime, with per-rollout start-up and CPU from each trajectory's sandbox event. */
async function sandboxRate(o: {
  domain: ReturnType<typeof fixtureDomain>;
  backend: PolicyBackend;
  cacheDir: string;
  concurrency: number;
  n: number;
  warmWorkers: boolean;
  contexts: boolean;
  contextLane?: 'pipe' | 'http';
  tasks: Task[];
  sampling?: typeof SAMPLING;
}): Promise<{
  perSec: number;
  passRate: number;
  startupMs: number;
  cpuMs: number;
  totalCpuMs: number;
  /** This process's share of totalCpuMs: the model, the gateway and the rollout sessions. */
  engineCpuMs: number;
  warmStartCpuMs: number;
  network: string;
  completions: string[];
  /** Each rollout's termination (and detail), to say why one sampled other completions. */
  endings: string[];
  /** Model and tool calls (gateway requests) per rollout: the harness side's cost grows with them. */
  requestsPerRollout: number;
}> {
  const rt = new HarnessRuntime({
    domain: o.domain,
    backend: o.backend,
    limits: LIMITS,
    sampling: o.sampling ?? SAMPLING,
    concurrency: o.concurrency,
    cacheDir: o.cacheDir,
    warmWorkers: o.warmWorkers,
    contexts: o.contexts,
    contextLane: o.contextLane,
  });
  const startups: number[] = [];
  const cpus: number[] = [];
  const completions: string[] = [];
  const endings: string[] = [];
  let requests = 0;
  let result: Omit<Awaited<ReturnType<typeof sandboxRate>>, 'totalCpuMs' | 'warmStartCpuMs' | 'engineCpuMs'>;
  let engine = process.cpuUsage();
  let cpu0 = 0;
  // What the warm processes had used before the timed rollouts (their start and one warm-up rollout each): not counted per rollout.
  let warm0 = 0;
  let hosts = 0;
  try {
    const prepared = await rt.prepare(HARNESS);
    // Warm-up (gateway start, bootstrap build; for warm processes, one process per slot), not timed.
    await Promise.all(Array.from({ length: o.concurrency }, (_, i) => rt.rollout(prepared, o.tasks[i % o.tasks.length], { sampleIndex: 0, seed: -1 - i })));
    await childrenReaped(); // the one-rollout processes of the warm-up (warm processes stay: their start-up is counted below)
    cpu0 = cpuWithChildrenMs();
    warm0 = rt.warmProcessesCpuMs;
    hosts = rt.warmProcessesStarted;
    engine = process.cpuUsage();
    const r = await timed(o.n, o.concurrency, async (i) => {
      const t = await rt.rollout(prepared, o.tasks[i % o.tasks.length], { sampleIndex: 0, seed: i });
      const d = t.events.find((e) => e.name === 'sandbox')?.data as { startupMs?: number; cpuMs?: number } | undefined;
      if (typeof d?.startupMs === 'number') startups.push(d.startupMs);
      if (typeof d?.cpuMs === 'number') cpus.push(d.cpuMs);
      completions[i] = t.modelCalls.map((c) => c.completion).join('\u0000');
      endings[i] = `${t.termination}${t.terminationDetail ? `: ${t.terminationDetail}` : ''}`;
      requests += t.modelCalls.length + t.events.filter((e) => e.type === 'tool').length;
      return t.verdict.pass;
    });
    engine = process.cpuUsage(engine);
    result = { ...r, startupMs: mean(startups), cpuMs: mean(cpus), network: rt.network, completions, endings, requestsPerRollout: requests / o.n };
  } finally {
    await rt.close();
  }
  await childrenReaped();
  return {
    ...result,
    totalCpuMs: (cpuWithChildrenMs() - cpu0 - warm0) / o.n,
    engineCpuMs: (engine.user + engine.system) / 1000 / o.n,
    warmStartCpuMs: hosts ? warm0 / hosts : 0,
  };
}

/**
 * The embedded model (shipped base checkpoint) behind every path. Model-only makes the
 * harness's calls in-process with the parameters the gateway would send (the run's sampling, the
 * per-call seed of (rollout seed, call index)), so each path asks the model for the same tokens; the
 * completions are compared to prove it.
 */
async function embeddedRates(o: { domain: ReturnType<typeof fixtureDomain>; cacheDir: string; concurrency: number; n: number; tasks: Task[] }) {
  const backend = await createBackend({ kind: 'embedded', model: 'base', maxBatch: 64 }, { storeDir: join(o.cacheDir, 'embedded') });
  const sampling = EMBEDDED_SAMPLING;
  try {
    const completions: string[] = [];
    const run = (i: number) => {
      const task = o.tasks[i % o.tasks.length];
      const texts: string[] = [];
      return twoTurn(
        task,
        async (messages, turn) => {
          const r = await backend.chat({ messages, params: { ...sampling, seed: hashSeed(`${i}:${turn}`) }, version: backend.currentVersion() });
          texts.push(r.text);
          completions[i] = texts.join('\u0000');
          return r.text;
        },
        async (query) => o.domain.tools[0].call({ query }, task),
      );
    };
    await Promise.all(Array.from({ length: o.concurrency }, (_, i) => run(o.n + i))); // warm-up: weights loaded, kernels compiled
    // How batched the model ran on each path: a path whose calls arrive spread out costs the model
    // more decode steps and prefill passes for the same tokens, which is overhead too but not the runtime's CPU.
    // `rollouts`: all the rollouts f runs, its untimed warm-up included (the model sampled for those too).
    const batching = async <R>(rollouts: number, f: () => Promise<R>): Promise<R & { batching: Batching }> => {
      const stats = () => ({ ...(backend as EmbeddedBackend).samplerStats() }) as SamplerStats;
      const s0 = stats();
      const r = await f();
      const s1 = stats();
      const steps = s1.steps - s0.steps;
      return {
        ...r,
        batching: {
          stepsPerRollout: steps / rollouts,
          meanBatch: (s1.batchSum - s0.batchSum) / steps,
          prefillsPerRollout: (s1.prefillPasses - s0.prefillPasses) / rollouts,
        },
      };
    };
    const cpu0 = cpuWithChildrenMs();
    const modelOnly = await batching(o.n, () =>
      timed(o.n, o.concurrency, async (i) => (await run(i)) === (o.tasks[i % o.tasks.length].private as { answer: string }).answer),
    );
    const modelCpuMs = (cpuWithChildrenMs() - cpu0) / o.n;
    const common = { domain: o.domain, backend, cacheDir: o.cacheDir, concurrency: o.concurrency, n: o.n, tasks: o.tasks, sampling };
    // sandboxRate warms up with one rollout per slot before it times n.
    const paths = await samePaths((p) => batching(o.n + o.concurrency, () => sandboxRate({ ...common, ...p })));
    const differing = (xs: string[]) => xs.flatMap((c, i) => (c === completions[i] ? [] : [i]));
    const floor = contextFloorMs();
    const out: Record<string, number> = {
      'embedded model: model only (in-process calls) rollouts/s': round(modelOnly.perSec, 2),
      'embedded model: CPU per rollout, model only (ms, engine)': round(modelCpuMs, 1),
      'a fresh vm context per rollout, in-process: creating it (ms CPU)': round(floor.create, 3),
      'a fresh vm context per rollout, in-process: running the prelude in it (ms CPU)': round(floor.prelude, 3),
      'a fresh vm context per rollout: its floor, creating it + the prelude / model-only CPU': round((floor.create + floor.prelude) / modelCpuMs, 3),
    };
    for (const [name, r] of paths) {
      out[`embedded model: ${name}: rollouts/s`] = round(r.perSec, 2);
      out[`embedded model: ${name}: overhead (model-only rate / path rate - 1)`] = round(modelOnly.perSec / r.perSec - 1, 3);
      out[`embedded model: ${name}: CPU per rollout (ms, engine + harness processes, warm ones already started)`] = round(r.totalCpuMs, 1);
      out[`embedded model: ${name}: CPU overhead (CPU / model-only CPU - 1)`] = round(r.totalCpuMs / modelCpuMs - 1, 3);
      out[`embedded model: ${name}: of which the engine (model, gateway, sessions; ms per rollout)`] = round(r.engineCpuMs, 1);
      out[`embedded model: ${name}: of which the harness processes (ms per rollout)`] = round(r.totalCpuMs - r.engineCpuMs, 1);
      out[`embedded model: ${name}: gateway requests per rollout`] = round(r.requestsPerRollout, 2);
      const d = differing(r.completions);
      out[`embedded model: ${name}: rollouts that sampled other completions than model-only`] = d.length;
      for (const i of d.slice(0, 3))
        console.error(
          `bench-runtime: ${name}: rollout ${i} (${r.endings[i]}): ${JSON.stringify(r.completions[i])} against model-only ${JSON.stringify(completions[i])}`,
        );
    }
    for (const [name, b] of [['model only', modelOnly.batching], ...paths.map(([n, r]) => [n, r.batching] as const)] as const) {
      out[`embedded model: ${name}: decode steps per rollout`] = round(b.stepsPerRollout, 2);
      out[`embedded model: ${name}: mean decode batch`] = round(b.meanBatch, 2);
      out[`embedded model: ${name}: prefill passes per rollout`] = round(b.prefillsPerRollout, 2);
    }
    const [process1, thread, contextHttp, context] = paths.map(([, r]) => r);
    out['embedded model: context / process throughput'] = round(context.perSec / process1.perSec, 2);
    out['embedded model: context / thread throughput'] = round(context.perSec / thread.perSec, 2);
    out['embedded model: context, pipe / HTTP throughput'] = round(context.perSec / contextHttp.perSec, 2);
    out['embedded model: every path sampled the same completions (1 yes, 0 no)'] = paths.every(([, r]) => differing(r.completions).length === 0) ? 1 : 0;
    return out;
  } finally {
    await backend.close();
  }
}

/**
 * What the default separation cannot do without: a new realm per rollout and the prelude that builds
 * its console, timers and `ctx` (worker/contextHost.ts does both per rollout), timed in this process
 * with nothing else around them; CPU per rollout.
 */
function contextFloorMs(n = 400): { create: number; prelude: number } {
  const prelude = preludeScript();
  const cpuMs = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  let create = 0;
  let run = 0;
  for (let i = -50; i < n; i++) {
    const t0 = cpuMs();
    const context = newRolloutContext();
    const t1 = cpuMs();
    (prelude.runInContext(context) as typeof contextPrelude)(() => undefined, 1000);
    const t2 = cpuMs();
    if (i < 0) continue; // warm-up
    create += t1 - t0;
    run += t2 - t1;
  }
  return { create: create / n, prelude: run / n };
}

function round(x: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  // --concurrency N: rollouts in flight (default 8; a run's evaluation.concurrency defaults to 32).
  // --embedded-rollouts N: timed rollouts per path with the model (default 32 per slot).
  let values: { concurrency?: string; 'embedded-rollouts'?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      options: { concurrency: { type: 'string', default: '8' }, 'embedded-rollouts': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    }));
  } catch (e) {
    console.error(`bench-runtime: (command line): ${(e as Error).message} (--help lists the options)`);
    process.exit(2);
  }
  if (values.help) {
    // The help is this file's opening comment.
    const lines = readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n');
    console.log(
      lines
        .slice(
          0,
          lines.findIndex((l) => !l.startsWith('//')),
        )
        .map((l) => l.replace(/^\/\/ ?/, ''))
        .join('\n'),
    );
    process.exit(0);
  }
  const positive = (name: string, v: string | undefined): number | undefined => {
    if (v === undefined) return undefined;
    const x = Number(v);
    if (Number.isInteger(x) && x >= 1) return x;
    console.error(`bench-runtime: --${name}: expected a positive integer, got ${v}`);
    process.exit(2);
  };
  const concurrency = positive('concurrency', values.concurrency) as number;
  const rows = await benchRuntime({ concurrency, embeddedRollouts: positive('embedded-rollouts', values['embedded-rollouts']) });
  for (const [k, v] of Object.entries(rows)) console.log(`${k.padEnd(58)} ${v}`);
  process.exit(0);
}
