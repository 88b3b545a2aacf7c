/**
 * Warm processes for Node harnesses: a sandboxed process per candidate that serves its rollouts one
 * after another, each in a fresh worker thread (worker/poolHost.ts), so a rollout no longer pays
 * for starting Node and its wrappers. One rollout at a time per process: the process's CPU, memory
 * and output are that rollout's, and killing the process costs that rollout only.
 *
 * A process is reused only after a rollout that ended cleanly (the harness returned or threw, or its
 * thread exited) AND its host reported the worker thread gone with the process's descriptors intact
 * (`exit` frame). Any other ending (wall, CPU, memory or output limit, protocol error, a crash of
 * the process, an `exit` that does not come) kills the process, and the next rollout gets a new one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { ChildMessage, LineSplitter, encodeMessage, parseLine, type RunMessage } from './protocol.js';
import { MAX_CALL_LINE_CHARS, touchRecent } from './framing.js';
import { treeUsage } from './procWatch.js';
import { WARM_RETIRE_CPU_MS, type SpawnPlan } from './sandbox.js';

/** The rollout a warm process is serving now (a WorkerProcess). */
export interface HostListener {
  /** Raw stderr bytes, counted for the output cap (false: over it). */
  onStderr(chunk: string): boolean;
  /** A line of stdout, counted for the output cap by the listener (protocol frames; see WorkerProcess.onHostLine). */
  onHostLine(line: string): void;
  /** The stdout line not finished yet, for the output cap. */
  onPartial(splitter: LineSplitter): void;
  onOverlong(bytes: number): void;
  onHostExit(code: number | null, signal: NodeJS.Signals | null, rest: string): void;
  onHostError(message: string): void;
}

/** How long a host may take, after a result, to report the worker thread gone before it is killed. */
export const DRAIN_MS = 2000;
/** Rollouts one process serves at most: bounds anything that builds up in a long-lived process. */
export const MAX_ROLLOUTS_PER_HOST = 500;

export class WarmHost {
  readonly child: ChildProcess;
  private listener: HostListener | undefined;
  private draining: { nonce: string | undefined; timer: NodeJS.Timeout } | undefined;
  private readonly splitter: LineSplitter;
  private dead = false;
  /** The candidate scripts a context host holds, as it keeps them. */
  private readonly scripts = new Map<string, true>();
  rollouts = 0;
  /** A rollout waiting for this host to finish draining (WorkerPool.acquire), told whether it can have it. */
  claimedBy: ((reusable: boolean) => void) | undefined;

  constructor(
    readonly key: string,
    readonly plan: SpawnPlan,
    private readonly pool: WorkerPool,
  ) {
    // Long enough for any `call` the gateway would read (framing.ts); other lines meet the output cap first.
    this.splitter = new LineSplitter(
      (line) => this.line(line),
      (n) => (this.listener ? this.listener.onOverlong(n) : this.kill()),
      MAX_CALL_LINE_CHARS,
    );
    this.child = spawn(plan.command, plan.args, { cwd: plan.cwd, env: plan.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.on('error', (e) => {
      this.listener?.onHostError(`cannot start the harness process (${plan.command}): ${e.message}`);
      this.kill();
    });
    this.child.stdin?.on('error', () => undefined); // EPIPE when it died: the exit handler reports it
    this.child.stdout?.setEncoding('utf8');
    this.child.stdout?.on('data', (chunk: string) => {
      this.splitter.push(chunk);
      if (this.splitter.pendingChars > 0) this.listener?.onPartial(this.splitter);
    });
    this.child.stderr?.setEncoding('utf8');
    this.child.stderr?.on('data', (chunk: string) => this.listener?.onStderr(chunk));
    this.child.on('exit', (code, signal) => {
      // As for a one-rollout process: let stdout drain first (a final frame may still be in the pipe).
      const decide = () => {
        const l = this.listener;
        this.kill();
        l?.onHostExit(code, signal, this.splitter.rest());
      };
      const out = this.child.stdout;
      if (out && !out.readableEnded) {
        const t = setTimeout(() => setImmediate(decide), 200);
        out.once('end', () => {
          clearTimeout(t);
          decide();
        });
      } else decide();
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** CPU the process has used so far (ms), or undefined when it is gone. */
  cpuMs(): number | undefined {
    return this.child.pid ? treeUsage(this.child.pid)?.cpuMs : undefined;
  }

  /** A line to the process (a `reply` on the pipe lane). */
  send(line: string): void {
    if (!this.dead) this.child.stdin?.write(line);
  }

  /** Hands the process a rollout; a context host gets the candidate's script only if it does not hold it (framing.ts, MAX_HOST_SCRIPTS). */
  start(listener: HostListener, message: RunMessage): void {
    this.listener = listener;
    this.rollouts++;
    const script = message.script;
    const fresh = script !== undefined && touchRecent(this.scripts, script.id, () => true);
    this.child.stdin?.write(encodeMessage(script && !fresh ? { ...message, script: { id: script.id } } : message));
  }

  /**
   * The rollout is over. 'exited': its worker thread is gone and the host said so (reuse now);
   * 'drain': it returned or threw, wait for the host's `exit`; 'kill': anything else.
   */
  end(how: 'exited' | 'drain' | 'kill', nonce: string | undefined): void {
    this.listener = undefined;
    if (this.dead) return;
    if (how === 'kill') return this.kill();
    if (how === 'exited') return this.idle();
    this.draining = { nonce, timer: setTimeout(() => this.kill(), DRAIN_MS) };
  }

  private line(line: string): void {
    if (this.listener) return this.listener.onHostLine(line);
    if (!this.draining) return; // after the exit frame nothing is expected; whatever comes is ignored
    const parsed = parseLine(ChildMessage, line);
    // Lines between the result and the exit frame are the finished rollout's last output: ignored.
    if (parsed.ok && parsed.message.type === 'exit' && parsed.message.nonce === this.draining.nonce) this.idle();
  }

  get isDraining(): boolean {
    return this.draining !== undefined;
  }

  private idle(): void {
    if (this.draining) clearTimeout(this.draining.timer);
    this.draining = undefined;
    const used = this.cpuMs();
    if (used === undefined || used >= WARM_RETIRE_CPU_MS || this.rollouts >= MAX_ROLLOUTS_PER_HOST) return this.kill();
    const claim = this.claimedBy;
    this.claimedBy = undefined;
    if (claim) claim(true);
    else this.pool.release(this);
  }

  /** SIGKILL to the process group, and our ends of its pipes dropped. */
  kill(): void {
    if (this.dead) return;
    this.dead = true;
    this.listener = undefined;
    if (this.draining) clearTimeout(this.draining.timer);
    this.draining = undefined;
    this.pool.forget(this);
    const claim = this.claimedBy;
    this.claimedBy = undefined;
    claim?.(false);
    const pid = this.child.pid;
    if (pid) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        try {
          this.child.kill('SIGKILL');
        } catch {
          /* gone */
        }
      }
    }
    for (const s of [this.child.stdin, this.child.stdout, this.child.stderr]) s?.destroy();
    this.child.unref();
  }

  get alive(): boolean {
    return !this.dead;
  }
}

/**
 * Idle warm processes, by candidate (the key is the spawn plan: folder, bundle, limits, network).
 * At most `maxIdle` are kept (the runtime's concurrency); the oldest idle one goes first, so a
 * search moving on to new candidates does not leave processes of old ones behind.
 */
export class WorkerPool {
  private readonly idle: WarmHost[] = [];
  private readonly all = new Set<WarmHost>();
  /** Processes started so far: how often a rollout could not reuse one. */
  started = 0;

  constructor(private readonly maxIdle: number) {}

  /**
   * An idle process of this candidate; else one that is finishing a rollout (its thread exiting,
   * a few ms) and nobody else is waiting for; else a new one.
   */
  async acquire(plan: SpawnPlan): Promise<WarmHost> {
    const key = JSON.stringify([plan.command, plan.args, plan.cwd]);
    const i = this.idle.findIndex((h) => h.key === key && h.alive);
    if (i >= 0) return this.idle.splice(i, 1)[0];
    const draining = [...this.all].find((h) => h.key === key && h.isDraining && !h.claimedBy);
    if (draining && (await new Promise<boolean>((resolve) => (draining.claimedBy = resolve)))) return draining;
    // Room for it: an idle process of another candidate goes first (a search moves on from candidates).
    if (this.all.size >= this.maxIdle) this.idle.shift()?.kill();
    const h = new WarmHost(key, plan, this);
    this.started++;
    this.all.add(h);
    return h;
  }

  release(h: WarmHost): void {
    if (!h.alive) return;
    this.idle.push(h);
    while (this.idle.length > this.maxIdle) this.idle.shift()?.kill();
  }

  forget(h: WarmHost): void {
    this.all.delete(h);
    const i = this.idle.indexOf(h);
    if (i >= 0) this.idle.splice(i, 1);
  }

  /** CPU (ms) the live processes have used so far, start-up included. */
  get cpuMs(): number {
    let sum = 0;
    for (const h of this.all) sum += h.cpuMs() ?? 0;
    return sum;
  }

  get size(): number {
    return this.all.size;
  }

  close(): void {
    for (const h of [...this.all]) h.kill();
  }
}
