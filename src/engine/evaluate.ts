import { ResultStore, hashKey, type EvalKey, type EvalSummary, type TaskResult } from '../archive/resultStore.js';
import type { Sampling, SandboxLimits } from '../core/config.js';
import { hashSeed } from '../core/rng.js';
import { mean, standardError } from '../core/stats.js';
import { sha256 } from '../core/treeHash.js';
import type { Trajectory } from '../core/trajectory.js';
import type { Domain, Split, Task } from '../domains/types.js';

/** What evaluation needs of the harness runtime. */
export interface RolloutRunner<P extends { treeHash: string }> {
  prepare(candidateDir: string): Promise<P>;
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
    limits: { ...opts.limits },
    k: opts.k,
    seed: opts.seed,
  };
  const keyHash = hashKey(key);
  const { store } = opts;
  if (store.summary(keyHash)) return answerFromStore(store, keyHash, opts.runId);
  const release = await store.lock(keyHash, opts.signal);
  try {
    return await evaluateLocked(opts, store, key, keyHash, tasks, prepared, started);
  } finally {
    release();
  }
}

function answerFromStore(store: ResultStore, keyHash: string, runId: string | undefined): EvaluationResult {
  const done = store.summary(keyHash)!;
  const runRollouts = runId ? store.countRunRollouts(keyHash, runId) : 0;
  return { summary: done, tasks: store.taskResults(keyHash) ?? [], cacheHit: true, newRollouts: 0, runRollouts, trajectoriesFile: store.trajectoriesFile(keyHash) };
}

async function evaluateLocked<P extends { treeHash: string }>(opts: EvaluateOptions<P>, store: ResultStore, key: EvalKey, keyHash: string, tasks: Task[], prepared: P, started: number): Promise<EvaluationResult> {
  // Another engine may have finished it while we waited for the lock.
  if (store.summary(keyHash)) return answerFromStore(store, keyHash, opts.runId);
  store.begin(key);
  const have = store.loadTrajectories(keyHash);
  const seen = new Set(have.map((t) => `${t.taskId}#${t.sampleIndex}`));
  const todo: { task: Task; sampleIndex: number }[] = [];
  for (const task of tasks) for (let s = 0; s < opts.k; s++) if (!seen.has(`${task.id}#${s}`)) todo.push({ task, sampleIndex: s });

  const total = tasks.length * opts.k;
  let finished = total - todo.length;
  opts.onProgress?.(finished, total);
  const results = [...have];
  let next = 0;
  const worker = async () => {
    while (next < todo.length) {
      if (opts.signal?.aborted) return;
      const item = todo[next++];
      const t = await opts.runner.rollout(prepared, item.task, {
        sampleIndex: item.sampleIndex,
        seed: rolloutSeed(opts.seed, item.task.id, item.sampleIndex),
        split: opts.split,
        runId: opts.runId,
        phase: opts.phase,
      });
      store.appendTrajectory(keyHash, t);
      results.push(t);
      finished++;
      opts.onProgress?.(finished, total);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(opts.concurrency, todo.length)) }, worker));
  if (opts.signal?.aborted) throw new Error('evaluation cancelled; the rollouts done so far are kept and a repeated call resumes');

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
    meanTurns: mean(results.map((t) => t.modelCalls.length)),
    completedAt: new Date().toISOString(),
    wallMs: Date.now() - started,
  };
  store.complete(keyHash, taskResults, summary);
  const runRollouts = opts.runId ? results.filter((t) => t.runId === opts.runId).length : todo.length;
  return { summary, tasks: taskResults, cacheHit: false, newRollouts: todo.length, runRollouts, trajectoriesFile: store.trajectoriesFile(keyHash) };
}

function summariseTasks(tasks: Task[], results: Trajectory[]): TaskResult[] {
  const byTask = new Map<string, Trajectory[]>();
  for (const t of results) {
    const list = byTask.get(t.taskId) ?? [];
    list.push(t);
    byTask.set(t.taskId, list);
  }
  return tasks.map((task) => {
    const ts = byTask.get(task.id) ?? [];
    const passes = ts.filter((t) => t.verdict.pass).length;
    const terminations: Record<string, number> = {};
    for (const t of ts) terminations[t.termination] = (terminations[t.termination] ?? 0) + 1;
    return { taskId: task.id, passes, samples: ts.length, mean: ts.length ? passes / ts.length : 0, terminations };
  });
}
