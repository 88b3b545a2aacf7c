/**
 * One harness process serving one rollout: spawn it in its own process group, hand it the `run`
 * message, read its protocol stream, enforce wall time, CPU time, memory and output size, and turn
 * whatever happens — an answer, a throw, a crash, garbage, a hang — into an outcome with a reason.
 * It never throws for anything the harness does.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { SandboxLimits } from '../core/config.js';
import type { Termination } from '../core/trajectory.js';
import { ChildMessage, LineSplitter, encodeMessage, parseLine, type CallMessage, type RunMessage } from './protocol.js';
import { CALL_PREFIX, encodeReply } from './framing.js';
import { processStart, treeUsage } from './procWatch.js';
import type { SpawnPlan } from './sandbox.js';
import type { HostListener, WarmHost } from './workerPool.js';

export type WorkerTermination = Extract<
  Termination,
  'answered' | 'no_answer' | 'timeout' | 'cpu_limit' | 'memory_limit' | 'output_limit' | 'crash' | 'protocol_error' | 'rule_violation' | 'error'
>;

export interface WorkerOutcome {
  termination: WorkerTermination;
  detail?: string;
  answer: string | null;
  /** ms from spawn to `ready` (undefined if it never got there). */
  startupMs?: number;
  cpuMs?: number;
  peakRssMb?: number;
  stderrTail: string;
}

export interface WorkerHooks {
  onLog(message: string, data: unknown, level: string | undefined): void;
  /** A model or tool call on the pipe lane (a run with `lane: "pipe"`): the gateway's answer to it. */
  onCall?(call: CallMessage): Promise<{ status: number; text: string }>;
}

const WATCH_INTERVAL_MS = 100;
const STDERR_TAIL_CHARS = 4000;
/** After a gateway limit is hit the harness gets this long to return before it is stopped. */
export const LIMIT_GRACE_MS = 1000;

/** Error texts that mean the runtime's memory caps fired (V8 heap limit, RLIMIT_DATA). */
const MEMORY_PATTERNS = [
  /JavaScript heap out of memory/,
  /Reached heap limit/,
  /ERR_WORKER_OUT_OF_MEMORY/, // a warm process's worker thread over its heap limit (resourceLimits)
  /Array buffer allocation failed/,
  /\bMemoryError\b/,
  /Cannot allocate memory/,
  /std::bad_alloc/,
];
/** Error texts that mean the sandbox refused something (permission model, network guard). */
const DENIED_PATTERNS = [/ERR_ACCESS_DENIED/, /Access to this API has been restricted/, /denied by the WHALE sandbox/, /ERR_DLOPEN_DISABLED/];

export function classifyFailure(text: string): 'memory_limit' | 'rule_violation' | undefined {
  if (MEMORY_PATTERNS.some((p) => p.test(text))) return 'memory_limit';
  if (DENIED_PATTERNS.some((p) => p.test(text))) return 'rule_violation';
  return undefined;
}

/**
 * One rollout, in a process of its own (spawned here, killed at the end) or, given a warm host, in
 * a worker thread of a process that serves several (workerPool.ts): the limits, the protocol checks
 * and the outcome are the same; CPU is the process's usage since this rollout began.
 */
export class WorkerProcess implements HostListener {
  private child: ChildProcess | undefined;
  private outcome: WorkerOutcome | undefined;
  private resolveDone!: (o: WorkerOutcome) => void;
  private readonly done = new Promise<WorkerOutcome>((r) => (this.resolveDone = r));
  private readonly timers: NodeJS.Timeout[] = [];
  private wallTimer: NodeJS.Timeout | undefined;
  private readonly spawnedAt = performance.now();
  private outputBytes = 0;
  private stderrTail = '';
  private ready = false;
  /**
   * This rollout's nonce (from the `run` message). Once `nonceRequired`, every frame must carry it: a
   * line without it was written by code that never saw it (candidate code under the Node bootstrap;
   * a child process of a command harness that echoes it).
   */
  private nonce: string | undefined;
  private nonceRequired = false;
  /** The run carries model and tool calls on the pipe (`call` frames, answered with `reply`). */
  private pipeLane = false;
  private startupMs: number | undefined;
  private cpuMs = 0;
  private peakRssMb = 0;
  /** Every descendant the watchdog has seen: killed at the end even if it left the process group. */
  private readonly seen = new Map<number, number>();
  /** Warm host only: the process's CPU (ms) when this rollout began. */
  private cpuBase = 0;

  constructor(
    private readonly plan: SpawnPlan,
    private readonly limits: SandboxLimits,
    private readonly hooks: WorkerHooks,
    private readonly host?: WarmHost,
  ) {}

  /** Spawns the process (or hands a warm one the rollout), sends `run`, and resolves when the rollout is over (the process is then dead, being killed, or back in the pool). */
  run(message: RunMessage, opts: { nonceFromStart?: boolean } = {}): Promise<WorkerOutcome> {
    this.nonce = message.nonce;
    this.pipeLane = message.lane === 'pipe' && !!this.host && !!this.hooks.onCall;
    // The Node bootstrap frames every line; a command harness opts in with its first frame that echoes the nonce.
    this.nonceRequired = !!opts.nonceFromStart && this.nonce !== undefined;
    if (this.host) {
      const base = this.host.cpuMs();
      if (base === undefined) {
        this.finish('error', 'the warm harness process is gone');
        return this.done;
      }
      this.cpuBase = base;
      this.host.start(this, message);
      this.armTimers();
      return this.done;
    }
    let child: ChildProcess;
    try {
      child = spawn(this.plan.command, this.plan.args, { cwd: this.plan.cwd, env: this.plan.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    } catch (e) {
      this.finish('error', `cannot start the harness process: ${e instanceof Error ? e.message : String(e)}`);
      return this.done;
    }
    this.child = child;
    child.on('error', (e) => this.finish('error', `cannot start the harness process (${this.plan.command}): ${e.message}`));
    child.stdin?.on('error', () => undefined); // EPIPE when the harness dies early: the exit handler reports it
    child.stdin?.end(encodeMessage(message));

    const splitter = new LineSplitter(
      (line) => this.onLine(line),
      (n) => this.finish('protocol_error', `a protocol line of over ${n} bytes`),
    );
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      if (this.outcome) return;
      if (this.countOutput(chunk)) splitter.push(chunk);
    });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      if (this.outcome) return;
      this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL_CHARS);
      this.countOutput(chunk);
    });
    child.on('exit', (code, signal) => {
      // Let stdout drain (a final `result` may still be in the pipe), then decide.
      const decide = () => this.onExit(code, signal, splitter.rest());
      if (child.stdout && !child.stdout.readableEnded) {
        // The fallback is for a pipe some grandchild keeps open. It defers once more (setImmediate runs
        // after the poll phase): when the engine's loop was blocked (the embedded model samples in
        // this process), the timer would otherwise fire before the pipe's last lines are read.
        const t = setTimeout(() => setImmediate(decide), 200);
        child.stdout.once('end', () => {
          clearTimeout(t);
          decide();
        });
      } else decide();
    });
    this.armTimers();
    return this.done;
  }

  private armTimers(): void {
    this.wallTimer = setTimeout(() => this.finish('timeout', `wall-clock limit of ${this.limits.wallMs} ms`), this.limits.wallMs);
    this.timers.push(setInterval(() => this.watch(), WATCH_INTERVAL_MS));
  }

  // HostListener: what a warm host forwards from its process while this rollout is its current one.
  onStderr(chunk: string): boolean {
    if (this.outcome || !this.countOutput(chunk)) return false;
    this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL_CHARS);
    return true;
  }
  /**
   * A line of the warm process's stdout. Counted for the output cap line by line, all but `call`
   * frames: a model or tool call is the gateway's to bound (turns, tokens, tool calls), as on HTTP.
   */
  onHostLine(line: string): void {
    if (this.outcome) return;
    const parsed = parseLine(ChildMessage, line);
    if (!(parsed.ok && parsed.message.type === 'call') && !this.countOutput(line + '\n')) return;
    this.onMessage(parsed);
  }
  /** An unfinished line counts as output as it arrives, unless it is becoming a `call` (bounded by the line limit). */
  onPartial(splitter: LineSplitter): void {
    if (!this.outcome && splitter.pendingHead(CALL_PREFIX.length) !== CALL_PREFIX) this.withinOutput(splitter.pendingChars);
  }
  onOverlong(n: number): void {
    this.finish('protocol_error', `a protocol line of over ${n} bytes`);
  }
  onHostExit(code: number | null, signal: NodeJS.Signals | null, rest: string): void {
    this.onExit(code, signal, rest);
  }
  onHostError(message: string): void {
    this.finish('error', message);
  }

  /** A gateway limit was hit: give the harness a short grace to return, then stop it. */
  shortenDeadline(ms: number, termination: WorkerTermination, detail: string): void {
    if (this.outcome) return;
    if (this.wallTimer) clearTimeout(this.wallTimer);
    this.wallTimer = setTimeout(() => this.finish(termination, detail), ms);
  }

  /** Stops the rollout now (runtime closing). */
  kill(detail: string): void {
    this.finish('error', detail);
  }

  private countOutput(chunk: string): boolean {
    this.outputBytes += Buffer.byteLength(chunk);
    return this.withinOutput(0);
  }

  private withinOutput(pending: number): boolean {
    if (this.outputBytes + pending <= this.limits.outputBytes) return true;
    this.finish('output_limit', `wrote more than ${this.limits.outputBytes} bytes on stdout/stderr`);
    return false;
  }

  onLine(line: string): void {
    if (this.outcome) return;
    this.onMessage(parseLine(ChildMessage, line));
  }

  private onMessage(parsed: ReturnType<typeof parseLine<ChildMessage>>): void {
    if (!parsed.ok) return this.finish('protocol_error', parsed.error);
    const m = parsed.message;
    if (this.nonce !== undefined && m.nonce !== undefined && m.nonce !== this.nonce)
      return this.finish('protocol_error', "a protocol line with a wrong nonce: not written by this rollout's harness");
    if (this.nonce !== undefined && m.nonce === this.nonce) this.nonceRequired = true;
    else if (this.nonceRequired)
      return this.finish('protocol_error', "a protocol-looking line without this rollout's nonce: written by harness code, not by the runtime");
    switch (m.type) {
      case 'ready':
        if (!this.ready) this.startupMs = performance.now() - this.spawnedAt;
        this.ready = true;
        return;
      case 'log':
        return this.hooks.onLog(m.message, m.data, m.level);
      case 'result':
        if (!this.ready) return this.finish('protocol_error', '`result` before `ready`');
        return this.finish(m.answer === null ? 'no_answer' : 'answered', undefined, m.answer, 'drain');
      case 'error': {
        const kind = classifyFailure(`${m.message}\n${m.stack ?? ''}`);
        if (kind === 'memory_limit') return this.finish(kind, `memory limit of ${this.limits.memoryMb} MB: harness error: ${m.message}`, null, 'drain');
        if (kind === 'rule_violation') return this.finish(kind, `refused by the sandbox: harness error: ${m.message}`, null, 'drain');
        return this.finish('crash', `harness error: ${m.message}`, null, 'drain');
      }
      case 'exit':
        // Only a warm host sends it: the rollout's thread ended without a result (it exited on its own).
        if (!this.host) return this.finish('protocol_error', 'an `exit` frame from a one-rollout process');
        return this.onExit(m.code, null, '', 'exited');
      case 'call':
        return this.onCall(m);
    }
  }

  private onCall(call: CallMessage): void {
    const answer = this.hooks.onCall;
    if (!this.pipeLane || !answer) return this.finish('protocol_error', 'a `call` frame, but this run has no pipe lane');
    void answer(call).then(
      // A reply after the rollout ended is dropped: the process may already serve the next one.
      (r) => this.outcome || this.host?.send(encodeReply(call.id, r.status, r.text)),
      (e: unknown) => this.finish('error', `the gateway failed a call: ${e instanceof Error ? e.message : String(e)}`),
    );
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null, rest: string, after: 'exited' | 'kill' = 'kill'): void {
    if (this.outcome) return;
    const how = signal ? `killed by ${signal}` : `exited with code ${code}`;
    const stderr = this.stderrTail.trim();
    const tail = stderr ? `; stderr: …${stderr.slice(-600)}` : '';
    if (signal === 'SIGXCPU' || this.cpuMs > this.limits.cpuMs)
      return this.finish('cpu_limit', `CPU-time limit of ${this.limits.cpuMs} ms (${how})`, null, after);
    const kind = classifyFailure(stderr);
    if (kind === 'memory_limit') return this.finish('memory_limit', `memory limit of ${this.limits.memoryMb} MB (${how})${tail}`, null, after);
    if (rest.trim()) return this.finish('protocol_error', `${how} in the middle of a protocol line${tail}`, null, after);
    if (code === 0 && !signal) return this.finish('protocol_error', `exited without sending a result${tail}`, null, after);
    this.finish(kind ?? 'crash', `harness process ${how}${tail}`, null, after);
  }

  private watch(): void {
    const pid = this.host ? this.host.pid : this.child?.pid;
    if (this.outcome || !pid) return;
    const u = treeUsage(pid);
    if (!u) return;
    this.cpuMs = Math.max(this.cpuMs, u.cpuMs - this.cpuBase);
    this.peakRssMb = Math.max(this.peakRssMb, u.rssMb);
    for (const p of u.procs) this.seen.set(p.pid, p.start);
    if (this.cpuMs > this.limits.cpuMs) this.finish('cpu_limit', `CPU-time limit of ${this.limits.cpuMs} ms (used ${Math.round(this.cpuMs)} ms)`);
    else if (u.rssMb > this.plan.rssLimitMb) this.finish('memory_limit', `memory limit: resident ${Math.round(u.rssMb)} MB over ${this.plan.rssLimitMb} MB`);
  }

  /** `after` (warm host only): what becomes of the process — reused at once, once its thread is gone, or killed. */
  private finish(termination: WorkerTermination, detail?: string, answer: string | null = null, after: 'exited' | 'drain' | 'kill' = 'kill'): void {
    if (this.outcome) return;
    this.outcome = {
      termination,
      ...(detail ? { detail } : {}),
      answer,
      startupMs: this.startupMs,
      cpuMs: this.cpuMs || undefined,
      peakRssMb: this.peakRssMb || undefined,
      stderrTail: this.stderrTail,
    };
    for (const t of this.timers) clearInterval(t);
    if (this.wallTimer) clearTimeout(this.wallTimer);
    if (this.host) {
      // The last CPU reading of a clean ending (the watchdog polls every 100 ms).
      if (after !== 'kill') this.outcome.cpuMs = Math.max(this.cpuMs, (this.host.cpuMs() ?? this.cpuBase) - this.cpuBase) || undefined;
      this.host.end(after, this.nonce);
      this.resolveDone(this.outcome);
      return;
    }
    this.killGroup();
    // Our ends of the pipes: a grandchild that escaped the kill may still hold theirs open, and
    // must not keep this process (a `whale eval` that is done) waiting for them to close.
    for (const s of [this.child?.stdin, this.child?.stdout, this.child?.stderr]) s?.destroy();
    this.child?.unref();
    this.resolveDone(this.outcome);
  }

  /** SIGKILL to the whole process group: the harness and anything it started. */
  private killGroup(): void {
    const pid = this.child?.pid;
    // Also after the leader exited: other members of its group may live on.
    if (!pid) return;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      try {
        this.child?.kill('SIGKILL');
      } catch {
        /* already gone */
      }
    }
    // Descendants that left the group (setsid) but were seen by the watchdog; the start time
    // guards against killing an unrelated process that reused the pid.
    for (const [p, start] of this.seen) {
      if (p === pid || processStart(p) !== start) continue;
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  }
}
