// Per-source results of a run's final evaluation, from the diagnostics its trajectories carry: the
// paper's SearchQA reports its 7 QA sets apart (nq, triviaqa, popqa, hotpotqa, …), and any domain
// that puts `data_source` in its per-rollout diagnostics gets the same table.
import { ResultStore } from '../archive/resultStore.js';
import type { Trajectory } from '../core/trajectory.js';
import type { RunInput } from './aggregate.js';
import type { Table } from './document.js';

export interface SourceRow {
  source: string;
  rollouts: number;
  passRate: number;
  /** Mean of each numeric or boolean diagnostic (booleans as 0/1) over the source's rollouts. */
  means: Record<string, number>;
  /** The diagnostics that are booleans (their means are rates). */
  rates: string[];
}

export interface SourceTable {
  /** Which evaluation: the sealed test split when the run has one, else its last validation. */
  split: 'test' | 'val';
  keyHash: string;
  rows: SourceRow[];
  /** Rollouts left out: infrastructure failures (not scored). */
  infra: number;
}

/** Groups scored trajectories by their `data_source` diagnostic; undefined when none carries one. */
export function sourceTable(trajectories: readonly Trajectory[]): Omit<SourceTable, 'split' | 'keyHash'> | undefined {
  const scored = trajectories.filter((t) => t.termination !== 'infra_error');
  if (!scored.some((t) => typeof t.diagnostics?.data_source === 'string')) return undefined;
  const groups = new Map<string, Trajectory[]>();
  for (const t of scored) {
    const s = typeof t.diagnostics?.data_source === 'string' ? t.diagnostics.data_source : '(none)';
    groups.set(s, [...(groups.get(s) ?? []), t]);
  }
  const rows = [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([source, ts]): SourceRow => {
      const sums: Record<string, { sum: number; n: number }> = {};
      const rates = new Set<string>();
      for (const t of ts) {
        for (const [k, v] of Object.entries(t.diagnostics ?? {})) {
          if (typeof v !== 'number' && typeof v !== 'boolean') continue;
          if (typeof v === 'boolean') rates.add(k);
          const acc = (sums[k] ??= { sum: 0, n: 0 });
          acc.sum += Number(v);
          acc.n++;
        }
      }
      return { source, rollouts: ts.length, passRate: ts.filter((t) => t.verdict.pass).length / ts.length, means: Object.fromEntries(Object.entries(sums).map(([k, a]) => [k, a.sum / a.n])), rates: [...rates] };
    });
  return { rows, infra: trajectories.length - scored.length };
}

/** The run's final evaluation (test, else last validation) by source, read from the result store. */
export function runSourceTable(storeDir: string, run: RunInput): SourceTable | undefined {
  const test = [...run.entries].reverse().find((e) => e.type === 'test_evaluation') as { keyHash?: string } | undefined;
  const val = [...run.entries].reverse().find((e) => e.type === 'validation') as { keyHash?: string } | undefined;
  const pick = test?.keyHash ? { split: 'test' as const, keyHash: test.keyHash } : val?.keyHash ? { split: 'val' as const, keyHash: val.keyHash } : undefined;
  if (!pick) return undefined;
  let trajectories: Trajectory[];
  try {
    trajectories = new ResultStore(storeDir).loadTrajectories(pick.keyHash);
  } catch {
    return undefined;
  }
  const t = sourceTable(trajectories);
  return t ? { ...pick, ...t } : undefined;
}

const pct = (x: number) => (100 * x).toFixed(1);

/** The table as the report prints it: pass rate, then each diagnostic's mean (boolean ones as % rates). */
export function sourceTableBlock(t: SourceTable): Table {
  const keys = [...new Set(t.rows.flatMap((r) => Object.keys(r.means)))].sort();
  const isRate = (k: string) => t.rows.some((r) => r.rates.includes(k));
  return {
    header: ['source', 'rollouts', 'pass (%)', ...keys.map((k) => (isRate(k) ? `${k} (%)` : `${k} (mean)`))],
    align: ['l', 'r', 'r', ...keys.map(() => 'r' as const)],
    rows: t.rows.map((r) => [r.source, String(r.rollouts), pct(r.passRate), ...keys.map((k) => (r.means[k] === undefined ? '—' : isRate(k) ? pct(r.means[k]) : r.means[k].toFixed(2)))]),
  };
}
