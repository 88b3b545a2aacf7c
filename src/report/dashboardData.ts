// The dashboard's data: every run in a store folded by the report's aggregation (aggregate.ts) into
// one snapshot of the contract (core/dashboardContract.ts). Pure except loadDashboard, which reads.
import { DashboardSnapshot, type DashboardMethod, type DashboardRun } from '../core/dashboardContract.js';
import { methodTable, summarizeRun, type RunSummary } from './aggregate.js';
import { loadRuns, type LoadedRuns } from './runs.js';

export function dashboardRun(s: RunSummary): DashboardRun {
  return {
    id: s.id,
    method: s.method,
    domain: s.domain,
    seed: s.seed ?? null,
    status: s.status,
    reason: s.reason,
    curve: s.curve.map((p) => ({ x: p.cumulativeRollouts, y: p.bestSoFar })),
    best: s.best?.mean ?? null,
    ledger: { ...s.ledger },
  };
}

export function dashboardSnapshot(summaries: readonly RunSummary[], opts: { store: string; skipped?: LoadedRuns['skipped']; now?: Date }): DashboardSnapshot {
  const table = methodTable(summaries);
  // A matched-steps row is a curve of its own beside the equal-total one of the same method, as is
  // each (E, I) of a method run with several (the row's label names it).
  const methods: DashboardMethod[] = table.rows.map((r) => ({
    domain: r.domain,
    method: r.budgetMode === 'equal-total' ? r.label : `${r.label} (${r.budgetMode})`,
    runs: r.runs,
    curve: r.curve.map((p) => ({ x: p.x, y: p.mean })),
  }));
  return DashboardSnapshot.parse({
    store: opts.store,
    generatedAt: (opts.now ?? new Date()).toISOString(),
    runs: summaries.map(dashboardRun),
    methods,
    skipped: opts.skipped ?? [],
  });
}

/** Reads every run in a store; an unreadable store becomes a snapshot that says why. */
export function loadDashboard(storeDir: string, now = new Date()): DashboardSnapshot {
  try {
    const { runs, skipped } = loadRuns(storeDir);
    return dashboardSnapshot(runs.map(summarizeRun), { store: storeDir, skipped, now });
  } catch (e) {
    return { store: storeDir, generatedAt: now.toISOString(), runs: [], methods: [], skipped: [], error: (e as Error).message };
  }
}
