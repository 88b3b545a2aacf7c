// The Failing Trajectories model: a run's evaluated candidates under the current policy version →
// their failing tasks → the failing rollouts of a task. Each level is computed only when asked
// (a tree expands lazily): candidates from the journal, tasks from the evaluation's tasks.json,
// rollouts from the byte-offset index of its trajectories file (jsonlIndex.ts), never a full parse.
import { existsSync } from 'node:fs';
import type { JournalEntry } from './journal.js';
import { foldRun } from './runState.js';
import { indexJsonl, type LineEntry } from './jsonlIndex.js';
import type { TaskResult } from './resultStore.js';

export interface FailingCandidate {
  treeHash: string;
  policyVersion: string;
  /** The evaluation whose failures are listed. */
  keyHash: string;
  /** What evaluated it: a search round's scoring or a validation. */
  source: 'search' | 'validation';
  phase: number;
  round?: number;
  mean: number;
}

export interface FailingTask {
  taskId: string;
  passes: number;
  samples: number;
  terminations: Record<string, number>;
}

export interface FailingRollout {
  /** Line (0-based among the file's trajectories) for opening it. */
  line: number;
  id: string;
  taskId: string;
  sampleIndex: number;
  termination: string;
}

const str = (x: unknown) => (typeof x === 'string' ? x : undefined);
const num = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x : undefined);

/** The policy version a run is at now (the last one its journal recorded). */
export function currentPolicyVersion(entries: readonly JournalEntry[]): string | undefined {
  if (!entries.some((e) => e.type === 'run_started')) return undefined;
  return foldRun(entries).version;
}

/**
 * Candidates evaluated under the run's current policy version, the latest evaluation of each
 * (candidate, source) — best score first, so the candidates that matter are on top.
 */
export function failingCandidates(entries: readonly JournalEntry[]): FailingCandidate[] {
  const version = currentPolicyVersion(entries);
  if (version === undefined) return [];
  const latest = new Map<string, FailingCandidate>();
  for (const e of entries) {
    const keyHash = str(e.keyHash);
    if (!keyHash || str(e.version) !== version) continue;
    if (e.type === 'candidate_scored') {
      const treeHash = str(e.treeHash);
      if (treeHash)
        latest.set(`search/${treeHash}`, {
          treeHash,
          policyVersion: version,
          keyHash,
          source: 'search',
          phase: num(e.phase) ?? -1,
          round: num(e.round),
          mean: num(e.mean) ?? 0,
        });
    } else if (e.type === 'validation') {
      const treeHash = str(e.harness);
      if (treeHash)
        latest.set(`validation/${treeHash}`, {
          treeHash,
          policyVersion: version,
          keyHash,
          source: 'validation',
          phase: num(e.phase) ?? -1,
          mean: num(e.mean) ?? 0,
        });
    }
  }
  return [...latest.values()].sort((a, b) => b.mean - a.mean || a.treeHash.localeCompare(b.treeHash) || a.source.localeCompare(b.source));
}

/** Tasks with at least one failed sample, worst first. */
export function failingTasks(tasks: readonly TaskResult[]): FailingTask[] {
  return tasks
    .filter((t) => t.passes < t.samples)
    .map((t) => ({ taskId: t.taskId, passes: t.passes, samples: t.samples, terminations: t.terminations }))
    .sort((a, b) => a.passes / a.samples - b.passes / b.samples || a.taskId.localeCompare(b.taskId));
}

/** The failing rollouts of one task in an indexed trajectories file (lines whose verdict is not a pass). */
export function failingRolloutsIn(lines: readonly LineEntry[], taskId: string): FailingRollout[] {
  const out: FailingRollout[] = [];
  lines.forEach((l, line) => {
    if (l.taskId !== taskId || l.pass === true) return;
    out.push({ line, id: l.id ?? `line ${line + 1}`, taskId, sampleIndex: l.sampleIndex ?? -1, termination: l.termination ?? 'unknown' });
  });
  return out.sort((a, b) => a.sampleIndex - b.sampleIndex || a.line - b.line);
}

/** Reads (through the cached index) the failing rollouts of a task in a trajectories file. */
export async function failingRollouts(trajectoriesFile: string, taskId: string): Promise<FailingRollout[]> {
  if (!existsSync(trajectoriesFile)) return [];
  const index = await indexJsonl(trajectoriesFile);
  return failingRolloutsIn(index.lines, taskId);
}
