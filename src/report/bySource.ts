// Results of a run's final evaluation grouped by a diagnostic its trajectories carry: the paper's
// SearchQA reports its 7 QA sets apart (`data_source`: nq, triviaqa, popqa, hotpotqa, …; Math keys
// AIME 2024 and 2025 on it too), Chess its solved rate per rating band (`ratingBand`). Any domain that
// puts one of these keys in its per-rollout diagnostics gets the table.
import { ResultStore } from '../archive/resultStore.js';
import type { Trajectory } from '../core/trajectory.js';
import type { RunInput } from './aggregate.js';
import type { Table } from './document.js';

/** The diagnostics the report groups by, with the name of the table's first column and its title. */
export const GROUPINGS = [
  { key: 'data_source', label: 'source', title: 'By data source' },
  { key: 'ratingBand', label: 'rating band', title: 'By rating band' },
] as const;

export type GroupKey = (typeof GROUPINGS)[number]['key'];

export interface SourceRow {
  /** The group's value of the key (a source, a rating band). */
  source: string;
  rollouts: number;
  passRate: number;
  /** Mean of each numeric or boolean diagnostic (booleans as 0/1) over the source's rollouts. */
  means: Record<string, number>;
  /** The diagnostics that are booleans (their means are rates). */
  rates: string[];
}

export interface SourceTable {
  /** The diagnostic the rows are grouped by. */
  key: GroupKey;
  /** Which evaluation: the sealed test split when the run has one, else its last validation. */
  split: 'test' | 'val';
  keyHash: string;
  rows: SourceRow[];
  /** Rollouts left out: infrastructure failures (not scored). */
  infra: number;
}

/** Groups scored trajectories by their `key` diagnostic (default `data_source`); undefined when none carries one. */
export function sourceTable(trajectories: readonly Trajectory[], key: GroupKey = 'data_source'): Omit<SourceTable, 'split' | 'keyHash'> | undefined {
  const scored = trajectories.filter((t) => t.termination !== 'infra_error');
  if (!scored.some((t) => typeof t.diagnostics?.[key] === 'string')) return undefined;
  const groups = new Map<string, Trajectory[]>();
  for (const t of scored) {
    const v = t.diagnostics?.[key];
    const s = typeof v === 'string' ? v : '(none)';
    groups.set(s, [...(groups.get(s) ?? []), t]);
  }
  const rows = [...groups.entries()]
    // numeric: rating band 800-1000 before 1000-1200
    .sort(([a], [b]) => a.localeCompare(b, 'en', { numeric: true }))
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
      return {
        source,
        rollouts: ts.length,
        passRate: ts.filter((t) => t.verdict.pass).length / ts.length,
        means: Object.fromEntries(Object.entries(sums).map(([k, a]) => [k, a.sum / a.n])),
        rates: [...rates],
      };
    });
  return { key, rows, infra: trajectories.length - scored.length };
}

/** The run's final evaluation (test, else last validation) grouped by each of GROUPINGS its trajectories carry, read from the result store. */
export function runSourceTables(storeDir: string, run: RunInput): SourceTable[] {
  const test = [...run.entries].reverse().find((e) => e.type === 'test_evaluation') as { keyHash?: string } | undefined;
  const val = [...run.entries].reverse().find((e) => e.type === 'validation') as { keyHash?: string } | undefined;
  const pick = test?.keyHash ? { split: 'test' as const, keyHash: test.keyHash } : val?.keyHash ? { split: 'val' as const, keyHash: val.keyHash } : undefined;
  if (!pick) return [];
  let trajectories: Trajectory[];
  try {
    trajectories = new ResultStore(storeDir).loadTrajectories(pick.keyHash);
  } catch {
    return [];
  }
  return GROUPINGS.flatMap((g) => {
    const t = sourceTable(trajectories, g.key);
    return t ? [{ ...pick, ...t }] : [];
  });
}

const pct = (x: number) => (100 * x).toFixed(1);

/** The table's title in the report (By data source, By rating band). */
export const groupingTitle = (t: Pick<SourceTable, 'key'>): string => GROUPINGS.find((g) => g.key === t.key)!.title;

/** The table as the report prints it: pass rate, then each diagnostic's mean (boolean ones as % rates). */
export function sourceTableBlock(t: SourceTable): Table {
  const keys = [...new Set(t.rows.flatMap((r) => Object.keys(r.means)))].sort();
  const label = GROUPINGS.find((g) => g.key === t.key)!.label;
  const isRate = (k: string) => t.rows.some((r) => r.rates.includes(k));
  return {
    header: [label, 'rollouts', 'pass (%)', ...keys.map((k) => (isRate(k) ? `${k} (%)` : `${k} (mean)`))],
    align: ['l', 'r', 'r', ...keys.map(() => 'r' as const)],
    rows: t.rows.map((r) => [
      r.source,
      String(r.rollouts),
      pct(r.passRate),
      ...keys.map((k) => (r.means[k] === undefined ? '—' : isRate(k) ? pct(r.means[k]) : r.means[k].toFixed(2))),
    ]),
  };
}
