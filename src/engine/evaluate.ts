import { ResultStore, hashKey, type EvalKey, type EvalSummary, type TaskResult } from '../archive/resultStore.js';
import type { Sampling, SandboxLimits } from '../core/config.js';
import { InfraError } from '../core/errors.js';
import { sleep } from '../core/sleep.js';
import { hashSeed } from '../core/rng.js';
import { mean, standardError } from '../core/stats.js';
import { sha256 } from '../core/treeHash.js';
import type { Trajectory } from '../core/trajectory.js';
import type { Domain, Split, Task } from '../domains/types.js';

/** What evaluation needs of the harness runtime. */
export interface RolloutRunner<P extends { treeHash: string }> {
  prepare(candidateDir: string): Promise<P>;
  /** How a prepared harness is isolated (network, file system): part of the result key, since it can change outcomes. */
  isolation?(prepared: P): Record<string, string>;
  rollout(prepared: P, task: Task, opts: { sampleIndex: number; seed: number; split: Split; runId?: string; phase?: string }): Promise<Trajectory>;
}

export interface EvaluateOptions<P extends { treeHash: string }> {
  store: ResultStore;
  runner: RolloutRunner<P>;
  domain: Domain;
  harnessDir: string;
  policyVersion: string;
  split: Split;
  k: number;
  seed: number;
  sampling: Sampling;
  limits: SandboxLimits;
  concurrency: number;
  /** Only the first N tasks of the split. */
  limit?: number;
  /** Evaluate exactly these tasks (e.g. one RSFT batch) instead of the split's; `split` labels them. */
  tasks?: Task[];
  runId?: string;
  phase?: string;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
  /** Retries of a rollout that ended in an infrastructure failure, before the evaluation fails (default 2). */
  infraRetries?: number;
  /** First wait before such a retry; doubles each time (default 2 s). */
  infraBackoffMs?: number;
  /** Told of each infrastructure failure (retried or final), for a log line. */
  onInfra?: (info: { taskId: string; sampleIndex: number; attempt: number; source: string; message: string; willRetry: boolean }) => void;
}

export interface EvaluationResult {
  summary: EvalSummary;
  tasks: TaskResult[];
  /** True when every rollout came from the store (nothing new was paid for). */
  cacheHit: boolean;
  /** Rollouts run by this call (0 on a cache hit; fewer than the total when resuming). */
  newRollouts: number;
  /**
   * Rollouts under this key paid for by `runId` (across every session of the run, so a resumed or
   * repeated evaluation reports the same figure); equals newRollouts when no runId is given.
   */
  runRollouts: number;
  trajectoriesFile: string;
}

/** The seed of one rollout: a pure function of the evaluation seed, task and sample index. */
export function rolloutSeed(seed: number, taskId: string, sampleIndex: number): number {
  return hashSeed(`${seed}/${taskId}/${sampleIndex}`);
}

export function taskSetId(tasks: Task[]): string {
  return sha256(tasks.map((t) => t.id + '\u0000' + JSON.stringify(t.public)).join('\n')).slice(0, 16);
}

/**
 * mean@k of (harness, policy version) on a split: k rollouts per task, the mean pass rate per task,
 * then the mean over tasks with its standard error across tasks. Results are stored under the full
 * key; a repeated call is answered from the store, and an interrupted one resumes where it stopped.
 */
export async function evaluate<P extends { treeHash: string }>(opts: EvaluateOptions<P>): Promise<EvaluationResult> {
  const started = Date.now();
  const prepared = await opts.runner.prepare(opts.harnessDir);
  let tasks = opts.tasks ?? opts.domain.tasks(opts.split);
  if (opts.limit !== undefined) tasks = tasks.slice(0, opts.limit);
  const key: EvalKey = {
    domain: opts.domain.fingerprint ? `${opts.domain.id}#${opts.domain.fingerprint.slice(0, 16)}` : opts.domain.id,
    taskSet: taskSetId(tasks),
    split: opts.split,
    harnessHash: prepared.treeHash,
    policyVersion: opts.policyVersion,
    sampling: { ...opts.sampling },
    limits: resultLimits(opts.limits),
    k: opts.k,
    seed: opts.seed,
    ...(opts.runner.isolation ? { isolation: opts.runner.isolation(prepared) } : {}),
  };
  const keyHash = hashKey(key);
  const { store } = opts;
  if (servable(store.summary(keyHash))) return answerFromStore(store, keyHash, opts.runId);
  const release = await store.lock(keyHash, opts.signal);
  try {
    return await evaluateLocked(opts, store, key, keyHash, tasks, prepared, started);
  } finally {
    release();
  }
}

/** The limits that decide a result: how rollouts are kept apart does not (the same results either way, tested), so a store keeps serving whichever is set. */
function resultLimits(limits: SandboxLimits): Omit<SandboxLimits, 'separation'> {
  const { separation: _separation, ...rest } = limits;
  return rest;
}

/**
 * A summary that may answer from the cache: complete, and with no infrastructure failure counted
 * in it (stores written before failures were excluded scored them; such a key is evaluated again).
 */
function servable(s: EvalSummary | undefined): s is EvalSummary {
  return s !== undefined && !s.terminations?.infra_error;
}

function answerFromStore(store: ResultStore, keyHash: string, runId: string | undefined): EvaluationResult {
  const done = store.summary(keyHash)!;
  const runRollouts = runId ? store.countRunRollouts(keyHash, runId) : 0; // from the summary: no file read
  return {
    summary: done,
    tasks: store.taskResults(keyHash) ?? [],
    cacheHit: true,
    newRollouts: 0,
    runRollouts,
    trajectoriesFile: store.trajectoriesFile(keyHash),
  };
}

async function evaluateLocked<P extends { treeHash: string }>(
  opts: EvaluateOptions<P>,
  store: ResultStore,
  key: EvalKey,
  keyHash: string,
  tasks: Task[],
  prepared: P,
  started: number,
): Promise<EvaluationResult> {
  // Another engine may have finished it while we waited for the lock.
  if (servable(store.summary(keyHash))) return answerFromStore(store, keyHash, opts.runId);
  store.begin(key);
  // What is already stored, as light outcomes (streamed: the file may be far larger than memory
  // wants as one string); infrastructure failures are never among them.
  const have: Outcome[] = [];
  store.scanTrajectories(keyHash, (t) => void have.push(outcomeOf(t)));
  const seen = new Set(have.map((t) => `${t.taskId}#${t.sampleIndex}`));
  const todo: { task: Task; sampleIndex: number }[] = [];
  for (const task of tasks) for (let s = 0; s < opts.k; s++) if (!seen.has(`${task.id}#${s}`)) todo.push({ task, sampleIndex: s });

  const total = tasks.length * opts.k;
  let finished = total - todo.length;
  opts.onProgress?.(finished, total);
  const results = [...have];
  const retries = opts.infraRetries ?? 2;
  const backoffMs = opts.infraBackoffMs ?? 2000;
  let infraRetried = 0;
  // The first rollout that still failed on infrastructure after its retries: no new rollout starts
  // after it (the infrastructure is down), the ones in flight finish and are stored, then we fail.
  let gaveUp: { taskId: string; sampleIndex: number; source: string; message: string } | undefined;
  let next = 0;
  const worker = async () => {
    while (next < todo.length && !gaveUp) {
      if (opts.signal?.aborted) return;
      const item = todo[next++];
      for (let attempt = 1; ; attempt++) {
        const t = await opts.runner.rollout(prepared, item.task, {
          sampleIndex: item.sampleIndex,
          seed: rolloutSeed(opts.seed, item.task.id, item.sampleIndex),
          split: opts.split,
          runId: opts.runId,
          phase: opts.phase,
        });
        if (t.termination !== 'infra_error') {
          store.appendTrajectory(keyHash, t);
          results.push(outcomeOf(t));
          finished++;
          opts.onProgress?.(finished, total);
          break;
        }
        // Not a verdict: neither stored nor scored. Retry the same (task, sample, seed) after a wait.
        const failure = {
          taskId: item.task.id,
          sampleIndex: item.sampleIndex,
          source: t.infra?.source ?? 'runtime',
          message: t.infra?.message ?? t.terminationDetail ?? 'infrastructure failure',
        };
        const willRetry = attempt <= retries && !gaveUp && !opts.signal?.aborted;
        opts.onInfra?.({ ...failure, attempt, willRetry });
        if (!willRetry) {
          gaveUp ??= failure;
          return;
        }
        infraRetried++;
        try {
          await sleep(backoffMs * 2 ** (attempt - 1), opts.signal);
        } catch {
          return; // cancelled while waiting
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(opts.concurrency, todo.length)) }, worker));
  if (opts.signal?.aborted) throw new Error('evaluation cancelled; the rollouts done so far are kept and a repeated call resumes');
  if (gaveUp) {
    const kept = results.length;
    throw new InfraError(
      gaveUp.source as InfraError['source'],
      `infrastructure failure (${gaveUp.source}) on task ${gaveUp.taskId} sample ${gaveUp.sampleIndex} after ${retries} ${retries === 1 ? 'retry' : 'retries'}: ${gaveUp.message}. ` +
        `Nothing was scored; the ${kept} of ${total} rollouts that completed are stored (${store.trajectoriesFile(keyHash)}) and a rerun resumes from them.`,
    );
  }

  const taskResults = summariseTasks(tasks, results);
  const terminations: Record<string, number> = {};
  for (const t of results) terminations[t.termination] = (terminations[t.termination] ?? 0) + 1;
  const perTask = taskResults.map((r) => r.mean);
  const summary: EvalSummary = {
    key,
    keyHash,
    meanAtK: mean(perTask),
    standardError: standardError(perTask),
    tasks: tasks.length,
    k: opts.k,
    rollouts: results.length,
    terminations,
    meanTurns: mean(results.map((t) => t.turns)),
    runRollouts: countBy(results.map((t) => t.runId).filter((r): r is string => r !== undefined)),
    ...(infraRetried ? { infraRetried } : {}),
    completedAt: new Date().toISOString(),
    wallMs: Date.now() - started,
  };
  store.complete(keyHash, taskResults, summary);
  const runRollouts = opts.runId ? results.filter((t) => t.runId === opts.runId).length : todo.length;
  return { summary, tasks: taskResults, cacheHit: false, newRollouts: todo.length, runRollouts, trajectoriesFile: store.trajectoriesFile(keyHash) };
}

/** What a summary needs of a rollout (not its transcript). */
interface Outcome {
  taskId: string;
  sampleIndex: number;
  runId?: string;
  pass: boolean;
  termination: string;
  turns: number;
}

function outcomeOf(t: Trajectory): Outcome {
  return {
    taskId: t.taskId,
    sampleIndex: t.sampleIndex,
    ...(t.runId ? { runId: t.runId } : {}),
    pass: t.verdict.pass,
    termination: t.termination,
    turns: t.modelCalls.length,
  };
}

function countBy(keys: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of keys) out[k] = (out[k] ?? 0) + 1;
  return out;
}

function summariseTasks(tasks: Task[], results: Outcome[]): TaskResult[] {
  const byTask = new Map<string, Outcome[]>();
  for (const t of results) {
    const list = byTask.get(t.taskId) ?? [];
    list.push(t);
    byTask.set(t.taskId, list);
  }
  return tasks.map((task) => {
    const ts = byTask.get(task.id) ?? [];
    const passes = ts.filter((t) => t.pass).length;
    const terminations: Record<string, number> = {};
    for (const t of ts) terminations[t.termination] = (terminations[t.termination] ?? 0) + 1;
    return { taskId: task.id, passes, samples: ts.length, mean: ts.length ? passes / ts.length : 0, terminations };
  });
}
