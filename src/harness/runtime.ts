/**
 * The harness runtime: runs candidate harnesses on tasks, one sandboxed process per rollout, with
 * model and tool calls through the recording gateway, and returns one Trajectory per rollout.
 * The same runtime serves the harness search and the weight phase (one runtime, one record).
 *
 *   const rt = new HarnessRuntime({ domain, backend, limits, sampling, concurrency: 32, cacheDir });
 *   const h = await rt.prepare('path/to/candidate');        // InputError if invalid
 *   const trajs = await rt.rolloutMany(h, items, onProgress);
 *   await rt.close();
 *
 * `rollout` never throws for anything a harness does: a crash, hang, limit or broken protocol is a
 * trajectory with that termination and a zero score.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Sampling, SandboxLimits } from '../core/config.js';
import { InputError } from '../core/errors.js';
import type { HarnessEvent, Termination, Trajectory, Verdict } from '../core/trajectory.js';
import type { Domain, Split, Task } from '../domains/types.js';
import type { PolicyBackend } from '../policy/types.js';
import { ensureBootstrap } from './assets.js';
import { MANIFEST_FILE, prepareCandidate, type PreparedHarness } from './candidate.js';
import { reapOrphanedHarnesses } from './reaper.js';
import { Gateway, answerCall } from './gateway.js';
import type { CallMessage, RunMessage } from './protocol.js';
import { RolloutSession, type GatewayLimits } from './rolloutSession.js';
import {
  chooseFilesystem,
  chooseNetwork,
  planCommandWorker,
  planNodeContextHost,
  planNodeHost,
  planNodeWorker,
  sandboxCapabilities,
  type FilesystemIsolation,
  type NetworkIsolation,
  type SpawnPlan,
  warmWorkersSupported,
} from './sandbox.js';
import { Semaphore } from './semaphore.js';
import { WorkerPool } from './workerPool.js';
import { LIMIT_GRACE_MS, WorkerProcess, type WorkerOutcome } from './workerProcess.js';

export type { PreparedHarness } from './candidate.js';

export interface HarnessRuntimeOptions {
  domain: Domain;
  backend: PolicyBackend;
  limits: SandboxLimits;
  /** The run's sampling (config `sampling`): temperature and top_p for every call whatever the harness asks, max_tokens where it gives none. */
  sampling: Sampling;
  /** Rollouts in flight at once (each its own process). */
  concurrency: number;
  /** Where bundles and the worker bootstrap are cached; outside any candidate folder. */
  cacheDir: string;
  /**
   * 'namespace': an empty network namespace (Linux `unshare`), gateway over a unix socket;
   * 'guard': the in-process guard only (Node) / nothing (command harnesses);
   * 'auto' (default): namespace where the host allows it.
   */
  network?: 'auto' | NetworkIsolation;
  /** Command harnesses: 'confined' (bubblewrap), 'open', or 'auto' (default): confined where bwrap works. */
  filesystem?: 'auto' | FilesystemIsolation;
  /**
   * Node harnesses: serve a candidate's rollouts from warm sandboxed processes, each rollout in a
   * fresh worker thread (workerPool.ts), instead of one process per rollout. Default: on, unless the
   * environment says WHALE_WARM_WORKERS=0, where this Node can confine a worker thread on its own
   * (warmWorkersSupported). Results are the same either way (tested), so it is not part of any result key.
   */
  warmWorkers?: boolean;
  /**
   * Warm processes only: serve each rollout of a candidate that needs nothing of Node's own in a fresh
   * `vm` context (worker/contextHost.ts) rather than a worker thread. Default: on, unless the
   * environment says WHALE_CONTEXTS=0. Results are the same either way (tested).
   */
  contexts?: boolean;
  /**
   * How a context's model and tool calls reach the gateway: 'pipe' (default), as frames on the warm
   * process's own stdin/stdout; 'http', as requests to the gateway's socket (what the other
   * separations use). Results are the same either way (tested); the benchmark measures both.
   */
  contextLane?: 'pipe' | 'http';
}

/** How a Node rollout is kept apart from the others, weakest first. */
export type Separation = 'context' | 'thread' | 'process';

export interface RolloutOptions {
  sampleIndex: number;
  seed: number;
  runId?: string;
  phase?: string;
  /** Defaults to the task's own split. */
  split?: Split;
}

export interface RolloutItem {
  task: Task;
  sampleIndex: number;
  seed: number;
}

export type ProgressCallback = (done: number, total: number, trajectory: Trajectory) => void;

export class HarnessRuntime {
  private readonly gateway = new Gateway();
  private started: Promise<string> | undefined;
  private warnedUnconfined = false;
  private readonly semaphore: Semaphore;
  private readonly live = new Set<WorkerProcess>();
  private readonly pool: WorkerPool | undefined;
  private readonly contexts: boolean;
  /** Context scripts read so far, by file (one per candidate; small). */
  private readonly scripts = new Map<string, { id: string; source: string }>();
  private closed = false;
  readonly network: NetworkIsolation;
  readonly filesystem: FilesystemIsolation;

  constructor(private readonly o: HarnessRuntimeOptions) {
    if (!Number.isInteger(o.concurrency) || o.concurrency < 1) throw new Error(`concurrency must be a positive integer, got ${o.concurrency}`);
    this.semaphore = new Semaphore(o.concurrency);
    this.network = chooseNetwork(o.network ?? 'auto', sandboxCapabilities());
    this.filesystem = chooseFilesystem(o.filesystem ?? 'auto', sandboxCapabilities());
    mkdirSync(o.cacheDir, { recursive: true });
    // The config's `sandbox.separation`: the stricter of it and what the options and environment above ask for is used.
    const asked = o.limits.separation;
    const warm = (o.warmWorkers ?? process.env.WHALE_WARM_WORKERS !== '0') && asked !== 'process';
    if (warm && warmWorkersSupported()) this.pool = new WorkerPool(o.concurrency);
    this.contexts = this.pool !== undefined && (o.contexts ?? process.env.WHALE_CONTEXTS !== '0') && asked !== 'thread';
  }

  /** Validates and bundles a candidate. Throws InputError (file, field/line) when it is invalid. */
  async prepare(candidateDir: string): Promise<PreparedHarness> {
    const prepared = await prepareCandidate(candidateDir, resolve(this.o.cacheDir));
    if (prepared.runtime === 'command' && this.filesystem === 'open') this.admitUnconfined(prepared);
    return prepared;
  }

  /** The isolation a prepared harness runs under (part of the result key). */
  isolation(prepared: PreparedHarness): Record<string, string> {
    return { network: this.network, filesystem: prepared.runtime === 'node' ? 'node-permission' : this.filesystem };
  }

  /**
   * A command harness with no file-system confinement (no bubblewrap here) can read the user's
   * files, the engine's environment and the run store: refused unless the config opts in or the
   * caller asked for an open file system explicitly; the opt-in is announced loudly, once.
   */
  private admitUnconfined(prepared: PreparedHarness): void {
    if (!this.o.limits.allowUnconfined && this.o.filesystem !== 'open') {
      throw new InputError(
        { file: join(prepared.sourceDir ?? prepared.dir, MANIFEST_FILE), field: 'runtime' },
        `a command harness cannot be confined on this host (bubblewrap \`bwrap\` is not available${this.network === 'namespace' ? '' : ', nor user namespaces'}): it would read your files, the engine's environment and the run store. Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap), use a Node harness, or accept the risk with sandbox.allowUnconfined: true in whale.config.json`,
      );
    }
    if (!this.warnedUnconfined) {
      this.warnedUnconfined = true;
      process.stderr.write(
        `\nWARNING: command harnesses run UNCONFINED here (no bubblewrap${this.network === 'namespace' ? '' : ', no network namespace'}; sandbox.allowUnconfined is set): harness code can read every file you can, the engine's environment (API keys) and the run store${this.network === 'namespace' ? '' : ', and reach the network'}.\n\n`,
      );
    }
  }

  /** Starts the gateway and builds the bootstrap once; resolves to the bootstrap file. */
  private start(): Promise<string> {
    this.started ??= (async () => {
      reapOrphanedHarnesses(); // left by an engine that died before its harnesses could be stopped
      await this.gateway.start();
      return ensureBootstrap(resolve(this.o.cacheDir));
    })();
    return this.started;
  }

  get gatewayPort(): number {
    return this.gateway.tcpPort;
  }

  async rollout(prepared: PreparedHarness, task: Task, opts: RolloutOptions): Promise<Trajectory> {
    if (this.closed) throw new Error('HarnessRuntime is closed');
    const release = await this.semaphore.acquire();
    try {
      return await this.runOne(prepared, task, opts);
    } finally {
      release();
    }
  }

  /** Many rollouts, at most `concurrency` in flight; results in the order of `items`. */
  async rolloutMany(
    prepared: PreparedHarness,
    items: RolloutItem[],
    onProgress?: ProgressCallback,
    common: { runId?: string; phase?: string } = {},
  ): Promise<Trajectory[]> {
    let done = 0;
    return Promise.all(
      items.map(async (it) => {
        const t = await this.rollout(prepared, it.task, { sampleIndex: it.sampleIndex, seed: it.seed, ...common });
        done++;
        onProgress?.(done, items.length, t);
        return t;
      }),
    );
  }

  /** Kills every harness process and stops the gateway. In-flight rollouts end with termination 'error'. */
  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.live) w.kill('the runtime was closed');
    this.live.clear();
    this.pool?.close();
    await this.gateway.close();
  }

  private gatewayLimits(): GatewayLimits {
    const d = this.o.domain.limits;
    return {
      maxTurns: Math.min(this.o.limits.maxTurns, d.maxTurns ?? Number.POSITIVE_INFINITY),
      maxTokens: Math.min(this.o.limits.maxTokens, d.maxAssistantTokens ?? Number.POSITIVE_INFINITY),
      ...(d.maxTokensPerCall !== undefined ? { maxTokensPerCall: d.maxTokensPerCall } : {}),
    };
  }

  /** Warm processes started so far (0 without them). */
  get warmProcessesStarted(): number {
    return this.pool?.started ?? 0;
  }

  /** CPU (ms) the live warm processes have used so far, their start-up included (0 without them). */
  get warmProcessesCpuMs(): number {
    return this.pool?.cpuMs ?? 0;
  }

  /** Whether this runtime serves Node harnesses from warm processes. */
  get warmWorkers(): boolean {
    return this.pool !== undefined;
  }

  /** How a rollout of this candidate is kept apart from the others: its own process, a worker thread, or a `vm` context of a warm process. */
  separation(prepared: PreparedHarness): Separation {
    if (prepared.runtime !== 'node' || !this.pool) return 'process';
    return this.contexts && prepared.context && 'file' in prepared.context ? 'context' : 'thread';
  }

  /** The empty folder a context host runs in: it serves any candidate, so it is none of theirs. */
  private contextHostDir(): string {
    const dir = join(this.o.cacheDir, 'context-host');
    mkdirSync(dir, { recursive: true });
    return dir;
  }

  /** A context candidate's script as a context host is sent it: its text and an id that changes with it. */
  private contextScript(file: string): { id: string; source: string } {
    let s = this.scripts.get(file);
    if (!s) {
      const source = readFileSync(file, 'utf8');
      s = { id: createHash('sha256').update(source).digest('hex').slice(0, 32), source };
      this.scripts.set(file, s);
    }
    return s;
  }

  /** How a rollout's model and tool calls reach the gateway: only a context's host can carry them on its pipe. */
  private lane(prepared: PreparedHarness): 'pipe' | 'http' {
    return this.separation(prepared) === 'context' && this.o.contextLane !== 'http' ? 'pipe' : 'http';
  }

  private plan(prepared: PreparedHarness, bootstrap: string): SpawnPlan {
    const separation = this.separation(prepared);
    if (separation === 'context' && prepared.context && 'file' in prepared.context)
      return planNodeContextHost({ dir: this.contextHostDir(), bootstrap, limits: this.o.limits, network: this.network });
    if (prepared.runtime === 'node' && this.pool)
      return planNodeHost({ dir: prepared.dir, bootstrap, bundle: prepared.bundleFile as string, limits: this.o.limits, network: this.network });
    if (prepared.runtime === 'node')
      return planNodeWorker({ dir: prepared.dir, bootstrap, bundle: prepared.bundleFile as string, limits: this.o.limits, network: this.network });
    const socket = this.gateway.unixSocketPath;
    return planCommandWorker({
      dir: prepared.dir,
      command: prepared.command as string[],
      limits: this.o.limits,
      network: this.network,
      filesystem: this.filesystem,
      ...(socket ? { socketDir: dirname(socket) } : {}),
    });
  }

  private async runOne(prepared: PreparedHarness, task: Task, opts: RolloutOptions): Promise<Trajectory> {
    const startedAt = new Date();
    const t0 = performance.now();
    const limits = this.gatewayLimits();
    let worker: WorkerProcess | undefined;
    const session = new RolloutSession({
      task,
      tools: this.o.domain.tools,
      backend: this.o.backend,
      limits,
      sampling: this.o.sampling,
      seed: opts.seed,
      onLimit: (t, detail) => worker?.shortenDeadline(LIMIT_GRACE_MS, 'error', `stopped ${LIMIT_GRACE_MS} ms after a ${t}: ${detail}`),
    });
    let outcome: WorkerOutcome;
    let plan: SpawnPlan | undefined;
    try {
      const bootstrap = await this.start();
      // A rollout whose calls come on its host's pipe is not reachable over HTTP at all: no route, no token.
      const lane = this.lane(prepared);
      const gateway = lane === 'pipe' ? { baseUrl: '', toolsUrl: '', token: '' } : this.gateway.register(session, { viaSocket: true });
      plan = this.plan(prepared, bootstrap);
      const message: RunMessage = {
        type: 'run',
        rolloutId: session.id,
        task: task.public,
        knobs: prepared.knobs,
        prompts: prepared.prompts,
        tools: session.toolInfos,
        limits: { ...limits, wallMs: this.o.limits.wallMs },
        gateway,
        // Our Node bootstrap frames every line with it, so candidate code cannot (it never sees it). A
        // command harness reads it from stdin (not the environment or argv, which its children could
        // read) and, by echoing it, makes every later frame need it (workerProcess.ts).
        nonce: randomBytes(16).toString('hex'),
        ...(lane === 'pipe' ? { lane } : {}),
        ...(this.separation(prepared) === 'context' && prepared.context && 'file' in prepared.context
          ? { script: this.contextScript(prepared.context.file) }
          : {}),
      };
      // Command harnesses keep a process per rollout: a warm one would share its /tmp, its pid
      // namespace and whatever it starts between rollouts, and bubblewrap has no fresh-context switch.
      const host = prepared.runtime === 'node' ? await this.pool?.acquire(plan) : undefined;
      const hooks = {
        onLog: (m: string, data: unknown, level: string | undefined) => session.log(m, data, level === 'error' ? 'error' : 'log'),
        onCall: (c: CallMessage) => answerCall(session, c),
      };
      worker = new WorkerProcess(plan, this.o.limits, hooks, host);
      this.live.add(worker);
      outcome = await worker.run(message, { nonceFromStart: prepared.runtime === 'node' });
    } catch (e) {
      outcome = { termination: 'error', detail: `runtime error: ${e instanceof Error ? e.message : String(e)}`, answer: null, stderrTail: '' };
    } finally {
      if (worker) this.live.delete(worker);
      this.gateway.unregister(session); // and closes it, registered or not
    }

    const events: HarnessEvent[] = [...session.events];
    events.push({
      t: Date.now() - session.startedAt,
      type: 'log',
      name: 'sandbox',
      message: `${prepared.runtime} harness, network ${plan?.network ?? '?'}${plan?.filesystem ? `, file system ${plan.filesystem}` : ''}`,
      data: {
        startupMs: round(outcome.startupMs),
        cpuMs: round(outcome.cpuMs),
        peakRssMb: round(outcome.peakRssMb),
        network: plan?.network ?? null,
        filesystem: plan?.filesystem ?? null,
        ...(prepared.runtime === 'node' ? { warmProcess: this.pool !== undefined, separation: this.separation(prepared), lane: this.lane(prepared) } : {}),
        ...(this.separation(prepared) === 'thread' && this.contexts && prepared.context && 'refusal' in prepared.context
          ? { threadBecause: prepared.context.refusal }
          : {}),
      },
    });
    const record = { finalAnswer: outcome.answer, modelCalls: session.modelCalls, events };
    let { termination, detail } = decideTermination(outcome, session);
    let verdict: Verdict;
    let infra: Trajectory['infra'] = session.infraFailure;
    if (infra) {
      termination = 'infra_error';
      detail = `${infra.source === 'backend' ? 'policy backend' : infra.source} failed: ${infra.message}`;
      verdict = { pass: false, score: 0, extracted: null, reason: `infrastructure failure (not scored): ${detail}` };
    } else if (termination === 'answered' || termination === 'no_answer') {
      try {
        verdict = await withTimeout(
          Promise.resolve(this.o.domain.verify(task, record)),
          this.o.domain.limits.verifierTimeoutMs ?? VERIFIER_TIMEOUT_MS,
          'verifier',
        );
        const broken = (await this.o.domain.checkRules?.(task, record)) ?? null;
        if (broken) {
          termination = 'rule_violation';
          detail = broken;
          verdict = { pass: false, score: 0, extracted: verdict.extracted, reason: `rule violation: ${broken}` };
        }
      } catch (e) {
        infra = { source: 'verifier', message: e instanceof Error ? e.message : String(e) };
        termination = 'infra_error';
        detail = `the domain's verifier failed: ${infra.message}`;
        verdict = { pass: false, score: 0, extracted: null, reason: `infrastructure failure (not scored): ${detail}` };
      }
    } else {
      verdict = { pass: false, score: 0, extracted: null, reason: `${termination}: ${detail ?? ''}`.trim() };
    }
    let diagnostics: Trajectory['diagnostics'];
    if (this.o.domain.diagnostics && termination !== 'infra_error') {
      try {
        diagnostics = await this.o.domain.diagnostics(task, { ...record, termination });
      } catch (e) {
        events.push({
          t: Date.now() - session.startedAt,
          type: 'error',
          name: 'diagnostics',
          message: `the domain's diagnostics failed: ${e instanceof Error ? e.message : String(e)}`,
        });
      }
    }
    return {
      id: `${prepared.treeHash.slice(0, 12)}-${task.id}-${opts.sampleIndex}-${randomBytes(4).toString('hex')}`,
      ...(opts.runId !== undefined ? { runId: opts.runId } : {}),
      ...(opts.phase !== undefined ? { phase: opts.phase } : {}),
      domain: this.o.domain.id,
      harnessHash: prepared.treeHash,
      policyVersion: session.policyVersion,
      taskId: task.id,
      split: opts.split ?? task.split,
      sampleIndex: opts.sampleIndex,
      seed: opts.seed,
      modelCalls: session.modelCalls,
      events,
      finalAnswer: outcome.answer,
      termination,
      ...(detail ? { terminationDetail: detail } : {}),
      verdict,
      ...(infra ? { infra } : {}),
      ...(diagnostics ? { diagnostics } : {}),
      timings: { startedAt: startedAt.toISOString(), wallMs: performance.now() - t0, modelMs: session.modelMs, toolMs: session.toolMs },
    };
  }
}

/**
 * One reason per rollout. A gateway limit wins (the harness overran its budget, whatever it did
 * next); a backend failure is ours, not the harness's, unless the harness answered anyway.
 */
export function decideTermination(outcome: WorkerOutcome, session: RolloutSession): { termination: Termination; detail?: string } {
  if (session.limitHit) return { termination: session.limitHit.termination, detail: session.limitHit.detail };
  return { termination: outcome.termination, ...(outcome.detail ? { detail: outcome.detail } : {}) };
}

/** A verifier that has not answered by then is an infrastructure failure, not a verdict. */
export const VERIFIER_TIMEOUT_MS = 30_000;

async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} gave no answer within ${ms} ms`)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function round(x: number | undefined): number | null {
  return x === undefined ? null : Math.round(x * 10) / 10;
}
