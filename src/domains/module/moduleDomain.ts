/**
 * A code domain: the user's module (`domain.module` in whale.config.json) bundled with esbuild —
 * `whale/domain` resolved to our SDK, so no tsx and no node_modules are needed at run time — and
 * run in a worker thread. The engine holds a Domain whose functions are calls into that thread, each
 * with a deadline: a call that does not answer in time (a verifier stuck in a loop) ends the thread,
 * fails as an infrastructure failure, and a fresh thread serves the calls that were in flight.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname, join, resolve as resolvePath } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Message, Plugin } from 'esbuild';
import { writeFileAtomic } from '../../core/atomic.js';
import { InfraError, InputError, WhaleError } from '../../core/errors.js';
import type { Verdict } from '../../core/trajectory.js';
import { runCommandVerifier, DEFAULT_COMMAND_TIMEOUT_MS } from '../verifiers/command.js';
import type { Domain, RolloutRecord, Task } from '../types.js';
import { DOMAIN_BUILD, ensureDomainWorker, resolveDomainSdkFile } from './assets.js';
import type { CallMessage, CallOp, DomainDescriptor, FromWorker, SerializedError, WorkerInit } from './protocol.js';

export const SDK_IMPORT = 'whale/domain';
/** How long a tool call in the domain's code may take before the call is an infrastructure failure. */
export const TOOL_TIMEOUT_MS = 60_000;
export const DEFAULT_VERIFIER_TIMEOUT_MS = 30_000;
export const DEFAULT_LOAD_TIMEOUT_MS = 120_000;

export interface ModuleDomainOptions {
  /** The module file, absolute or relative to baseDir. */
  module: string;
  options?: unknown;
  baseDir: string;
  configFile?: string;
  secret?: string;
  /** Where bundles and the built worker are cached. */
  cacheDir: string;
  /** Domain code runs only in a trusted workspace. */
  trusted?: boolean;
  loadTimeoutMs?: number;
}

export interface LoadedModuleDomain extends Domain {
  /** sha256 of the bundled module (the domain code as it ran): recorded with a run. */
  codeHash: string;
  /** The module's command verifier, when verify is one. */
  verifyCommand?: DomainDescriptor['verifyCommand'];
  summary?: string;
  /** Ends the worker thread. */
  close(): Promise<void>;
}

/** Bundles the module into one ES module under cacheDir (content-addressed); a build error is an InputError naming file and line. */
export async function bundleDomainModule(moduleFile: string, cacheDir: string): Promise<{ file: string; hash: string }> {
  const esbuild = await import('esbuild');
  const sdk = resolveDomainSdkFile();
  const alias: Plugin = { name: 'whale-domain-sdk', setup: (b) => b.onResolve({ filter: /^whale\/domain$/ }, () => ({ path: sdk })) };
  let result;
  try {
    result = await esbuild.build({
      entryPoints: [moduleFile],
      absWorkingDir: dirname(moduleFile),
      ...DOMAIN_BUILD,
      sourcemap: 'inline',
      plugins: [alias],
      // The map's sources are then relative to where the bundle is written: stack frames name the user's file and line.
      outdir: join(cacheDir, 'domains'),
    });
  } catch (e) {
    const errors = (e as { errors?: Message[] }).errors;
    if (!Array.isArray(errors) || errors.length === 0) throw new InputError({ file: moduleFile }, `cannot bundle the domain module: ${String(e)}`);
    throw InputError.combine(
      errors.map(
        (m) =>
          new InputError(
            {
              file: m.location?.file ? resolvePath(dirname(moduleFile), m.location.file) : moduleFile,
              line: m.location?.line,
              column: m.location ? m.location.column + 1 : undefined,
            },
            `cannot bundle the domain module: ${m.text}`,
          ),
      ),
    );
  }
  const code = result.outputFiles[0].contents;
  const hash = createHash('sha256').update(code).digest('hex');
  const file = join(cacheDir, 'domains', `domain-${hash.slice(0, 16)}.mjs`);
  if (!existsSync(file)) writeFileAtomic(file, code, { fsync: false });
  return { file, hash };
}

function revive(e: SerializedError, fallbackSource: 'tool' | 'verifier'): Error {
  if (e.code === 'infra') return new InfraError(e.source === 'verifier' || e.source === 'tool' ? e.source : fallbackSource, e.message);
  if (e.code === 'input' && e.location) return new InputError(e.location, e.detail ?? e.message);
  return new WhaleError(e.message, 'domain');
}

interface Pending {
  msg: CallMessage;
  timeoutMs: number;
  resolve(v: unknown): void;
  reject(e: Error): void;
  timer?: NodeJS.Timeout;
  retried: boolean;
}

/** One worker thread at a time; replaced when a call overruns its deadline. */
class DomainThread {
  private worker: Worker | undefined;
  private ready: Promise<DomainDescriptor> | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly workerFile: string,
    private readonly init: WorkerInit,
    private readonly origin: string,
  ) {}

  /** Starts the first thread (which loads the tasks) and waits for its descriptor. */
  start(loadTimeoutMs: number): Promise<DomainDescriptor> {
    return this.spawn(false, loadTimeoutMs);
  }

  private spawn(skipTasks: boolean, loadTimeoutMs: number): Promise<DomainDescriptor> {
    const worker = new Worker(this.workerFile, { workerData: { ...this.init, skipTasks } satisfies WorkerInit, stdout: true, stderr: false });
    // What domain code prints goes to stderr: stdout belongs to the command (e.g. `whale eval --json`).
    worker.stdout.pipe(process.stderr, { end: false });
    worker.unref(); // a domain never keeps the CLI alive
    this.worker = worker;
    this.ready = new Promise<DomainDescriptor>((resolve, reject) => {
      const timer = setTimeout(() => {
        void worker.terminate();
        reject(new WhaleError(`${this.origin}: the domain did not load within ${loadTimeoutMs} ms (is tasks() stuck?)`, 'domain'));
      }, loadTimeoutMs);
      worker.on('message', (m: FromWorker) => {
        if (m.type === 'ready') {
          clearTimeout(timer);
          resolve(m.descriptor);
        } else if (m.type === 'load-error') {
          clearTimeout(timer);
          reject(
            m.error.code === 'input' && m.error.location
              ? revive(m.error, 'verifier')
              : new WhaleError(m.error.message.startsWith(this.origin) ? m.error.message : `${this.origin}: ${m.error.message}`, 'domain'),
          );
        } else this.settle(m);
      });
      worker.on('error', (e) => {
        clearTimeout(timer);
        reject(new WhaleError(`${this.origin}: the domain's code crashed its worker: ${e.message}`, 'domain'));
        this.failAll(worker, `the domain's code crashed its worker: ${e.message}`);
      });
      worker.on('exit', () => {
        clearTimeout(timer);
        reject(new WhaleError(`${this.origin}: the domain's worker exited while loading`, 'domain'));
        this.failAll(worker, "the domain's worker exited");
      });
    });
    this.ready.catch(() => {});
    return this.ready;
  }

  private settle(m: Extract<FromWorker, { type: 'result' }>): void {
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    clearTimeout(p.timer);
    if (m.ok) p.resolve(m.value);
    else p.reject(revive(m.error, p.msg.op === 'tool' ? 'tool' : 'verifier'));
  }

  /** The worker died (not terminated by us): every call in flight on it fails as infrastructure. */
  private failAll(worker: Worker, why: string): void {
    if (this.worker !== worker || this.closed) return;
    this.worker = undefined;
    this.ready = undefined;
    for (const [id, p] of this.pending) {
      this.pending.delete(id);
      clearTimeout(p.timer);
      p.reject(new InfraError(p.msg.op === 'tool' ? 'tool' : 'verifier', `${this.origin}: ${why}`));
    }
  }

  async call(op: CallOp, payload: Omit<CallMessage, 'id' | 'op'>, timeoutMs: number): Promise<unknown> {
    if (this.closed) throw new WhaleError(`${this.origin}: the domain was closed`);
    return new Promise((resolve, reject) => {
      const p: Pending = { msg: { id: this.nextId++, op, ...payload }, timeoutMs, resolve, reject, retried: false };
      this.pending.set(p.msg.id, p);
      void this.dispatch(p);
    });
  }

  private async dispatch(p: Pending): Promise<void> {
    try {
      if (!this.worker || !this.ready) await this.spawn(true, DEFAULT_LOAD_TIMEOUT_MS);
      await this.ready;
    } catch (e) {
      this.pending.delete(p.msg.id);
      p.reject(new InfraError(p.msg.op === 'tool' ? 'tool' : 'verifier', (e as Error).message));
      return;
    }
    if (!this.pending.has(p.msg.id)) return;
    const worker = this.worker!;
    p.timer = setTimeout(() => this.overran(worker, p), p.timeoutMs);
    worker.postMessage(p.msg);
  }

  /**
   * A call overran its deadline: it fails, and the thread is replaced — a synchronous loop cannot be
   * interrupted any other way. Calls that were in flight beside it are sent once more to the new thread.
   */
  private overran(worker: Worker, p: Pending): void {
    if (!this.pending.has(p.msg.id)) return;
    this.pending.delete(p.msg.id);
    const what = p.msg.op === 'tool' ? `tool '${p.msg.tool}'` : p.msg.op;
    p.reject(
      new InfraError(
        p.msg.op === 'tool' ? 'tool' : 'verifier',
        `${this.origin}: ${what} (task '${p.msg.task.id}') gave no answer within ${p.timeoutMs} ms; its worker thread was ended`,
      ),
    );
    if (this.worker === worker) {
      this.worker = undefined;
      this.ready = undefined;
    }
    void worker.terminate();
    for (const [id, other] of this.pending) {
      clearTimeout(other.timer);
      if (other.retried) {
        this.pending.delete(id);
        other.reject(
          new InfraError(
            other.msg.op === 'tool' ? 'tool' : 'verifier',
            `${this.origin}: ${other.msg.op} (task '${other.msg.task.id}') was interrupted twice by calls that overran their deadline`,
          ),
        );
        continue;
      }
      other.retried = true;
      void this.dispatch(other);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const w = this.worker;
    this.worker = undefined;
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(new WhaleError(`${this.origin}: the domain was closed`));
    }
    this.pending.clear();
    if (w) await w.terminate();
  }
}

/** Loads a code domain; only in a trusted workspace. Errors in the module name its file, and a task's id and field where known. */
export async function loadModuleDomain(o: ModuleDomainOptions): Promise<LoadedModuleDomain> {
  const moduleFile = resolvePath(o.baseDir, o.module);
  if (!o.trusted)
    throw new WhaleError(
      `${moduleFile}: a domain module is code and runs only in a trusted workspace (the CLI in your own terminal is trusted; in VS Code, trust the folder)`,
      'untrusted',
    );
  if (!existsSync(moduleFile)) throw new InputError({ file: o.configFile ?? 'whale.config.json', field: 'domain.module' }, `no domain module at ${moduleFile}`);
  const [{ file: bundle, hash }, workerFile] = await Promise.all([bundleDomainModule(moduleFile, o.cacheDir), ensureDomainWorker(o.cacheDir)]);
  const init: WorkerInit = {
    bundle,
    origin: moduleFile,
    moduleDir: dirname(moduleFile),
    baseDir: o.baseDir,
    options: o.options ?? {},
    skipTasks: false,
    ...(o.configFile ? { configFile: o.configFile } : {}),
    ...(o.secret ? { secret: o.secret } : {}),
  };
  const thread = new DomainThread(workerFile, init, moduleFile);
  const d = await thread.start(o.loadTimeoutMs ?? DEFAULT_LOAD_TIMEOUT_MS);
  const tasks = d.tasks!;
  const verifierMs = d.limits.verifierTimeoutMs ?? (d.verifyCommand ? (d.verifyCommand.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS) : DEFAULT_VERIFIER_TIMEOUT_MS);
  const strip = (r: RolloutRecord & { termination?: string }) => ({
    finalAnswer: r.finalAnswer,
    modelCalls: r.modelCalls,
    events: r.events,
    ...(r.termination ? { termination: r.termination } : {}),
  });
  const cmd = d.verifyCommand;
  const domain: LoadedModuleDomain = {
    id: d.id,
    title: d.title,
    description: d.description,
    ...(d.summary ? { summary: d.summary } : {}),
    regime: d.regime,
    splitSizes: { weight: tasks.weight.length, harness: tasks.harness.length, val: tasks.val.length, test: tasks.test.length },
    tasks: (split) => {
      const t = tasks[split];
      if (!t) throw new WhaleError(`unknown split '${String(split)}'`, 'split');
      return t;
    },
    tools: d.tools.map((t) => ({
      ...t,
      call: async (args: unknown, task: Task) => (await thread.call('tool', { task, tool: t.name, args }, TOOL_TIMEOUT_MS)) as string,
    })),
    verify: cmd
      ? (task, rollout) => runCommandVerifier(cmd, task, rollout, { cwd: dirname(moduleFile), origin: moduleFile })
      : async (task, rollout) => (await thread.call('verify', { task, rollout: strip(rollout) }, verifierMs)) as Verdict,
    // The worker enforces the deadline (and ends a stuck thread); the runtime's own is a backstop past it.
    limits: { ...d.limits, verifierTimeoutMs: verifierMs + 2000 },
    h0Dir: d.h0Dir,
    searchSpace: d.searchSpace,
    codeHash: hash,
    ...(cmd ? { verifyCommand: cmd } : {}),
    gold: async (task) => (await thread.call('gold', { task }, verifierMs)) as string | null,
    close: () => thread.close(),
  };
  if (d.hasCheckRules)
    domain.checkRules = async (task, rollout) => (await thread.call('checkRules', { task, rollout: strip(rollout) }, verifierMs)) as string | null;
  if (d.hasDiagnostics)
    domain.diagnostics = async (task, rollout) =>
      (await thread.call('diagnostics', { task, rollout: strip(rollout) }, verifierMs)) as Record<string, number | boolean | string | null>;
  return domain;
}
