// The dashboard's data: every run in a store folded by the report's aggregation (aggregate.ts) into
// one snapshot of the contract (core/dashboardContract.ts): each run's best-so-far curve with its
// phases as spans of the x-axis, its weight steps, its candidates per round, its diagnostics per
// phase; each method's mean curve over seeds. Pure except loadDashboard, which reads the store.
import { statSync } from 'node:fs';
import { cumulativeRollouts } from '../archive/runState.js';
import { ResultStore } from '../archive/resultStore.js';
import { DashboardSnapshot, type DashboardMethod, type DashboardRun } from '../core/dashboardContract.js';
import { acceptanceText, methodTable, phaseSequence, summarizeRun, type RunInput, type RunSummary } from './aggregate.js';
import { diagnosticsRow, readTrajectoriesFile, runDiagnostics, type DiagnosableTrajectory } from './diagnostics.js';
import { loadRuns, type LoadedRuns } from './runs.js';

const finite = (x: number | null | undefined): number | null => (typeof x === 'number' && Number.isFinite(x) ? x : null);
const num = (x: unknown): number | undefined => (typeof x === 'number' && Number.isFinite(x) ? x : undefined);

/** Each phase as the span of cumulative training + search rollouts it spent (an unfinished one runs to the journal's end). */
export function phaseSpans(run: Pick<RunInput, 'entries'>, summary: Pick<RunSummary, 'phases'>): DashboardRun['phases'] {
  const spent = cumulativeRollouts(run.entries);
  const from = new Map<number, number>();
  const to = new Map<number, number>();
  run.entries.forEach((e, i) => {
    const phase = num(e.phase);
    if (phase === undefined) return;
    if (e.type === 'phase_started' && !from.has(phase)) from.set(phase, spent[i]);
    if (e.type === 'phase_completed') to.set(phase, spent[i]);
  });
  const end = spent.length > 0 ? spent[spent.length - 1] : 0;
  return summary.phases.map((p) => ({
    phase: p.phase,
    kind: p.kind,
    from: from.get(p.phase) ?? 0,
    to: to.get(p.phase) ?? end,
    completed: p.completed,
    work:
      p.kind === 'weight'
        ? `W ${p.steps ?? 0} step${p.steps === 1 ? '' : 's'}`
        : p.kind === 'harness'
          ? `H ${p.iterations ?? 0} iteration${p.iterations === 1 ? '' : 's'}`
          : p.kind,
  }));
}

/** Every candidate scoring of the run, the one its phase accepted marked (an older candidate accepted again is marked where it was re-scored). */
export function roundCandidates(run: Pick<RunInput, 'entries'>, summary: Pick<RunSummary, 'phases'>): DashboardRun['candidates'] {
  const chosen = new Map(summary.phases.filter((p) => p.acceptance).map((p) => [p.phase, p.acceptance!.chosen]));
  return run.entries
    .filter((e) => e.type === 'candidate_scored' && typeof e.treeHash === 'string' && num(e.mean) !== undefined)
    .map((e) => {
      const phase = num(e.phase) ?? -1;
      return {
        phase,
        round: num(e.round) ?? 0,
        treeHash: String(e.treeHash),
        mean: num(e.mean)!,
        se: num(e.se) ?? 0,
        accepted: chosen.get(phase) === e.treeHash,
      };
    });
}

/** The best-so-far curve with the standard error of the validation that set each best. */
function bestCurve(s: RunSummary): DashboardRun['curve'] {
  let bestSe = 0;
  let best = -Infinity;
  return s.curve.map((p) => {
    if (p.mean > best) {
      best = p.mean;
      bestSe = p.se;
    }
    return { x: p.cumulativeRollouts, y: p.bestSoFar, se: bestSe, mean: p.mean, phase: p.phase };
  });
}

export function dashboardRun(run: RunInput, s: RunSummary = summarizeRun(run)): DashboardRun {
  const end = s.ledger.trainingRollouts + s.ledger.searchRollouts;
  return {
    id: s.id,
    method: s.method,
    domain: s.domain,
    seed: s.seed ?? null,
    status: s.status,
    reason: s.reason,
    k: s.k ?? null,
    curve: bestCurve(s),
    best: s.best?.mean ?? null,
    test: s.test ? { x: end, mean: s.test.mean, se: s.test.se, k: s.test.k } : null,
    phases: phaseSpans(run, s),
    training: s.training.map((t) => ({
      step: t.globalStep + 1,
      phase: t.phase,
      reward: finite(t.meanReward),
      accepted: finite(t.acceptedFraction),
      truncation: finite(t.truncationRate),
      loss: finite(t.meanLoss),
    })),
    candidates: roundCandidates(run, s),
    acceptances: s.phases
      .filter((p) => p.acceptance)
      .map((p) => ({ phase: p.phase, text: acceptanceText(p.acceptance).replace(/`/g, ''), chosen: p.acceptance!.chosen, invalid: p.invalid ?? 0 })),
    diagnostics: (s.diagnostics?.byPhase ?? [])
      .filter((p) => p.aggregate.rollouts > 0)
      .map((p) => ({
        phase: p.phase,
        split: p.split,
        values: Object.fromEntries(Object.entries(diagnosticsRow(p.aggregate)).map(([k, v]) => [k, typeof v === 'number' ? finite(v) : v])),
      })),
    phaseSequence: phaseSequence(s),
    ledger: { ...s.ledger },
  };
}

export function dashboardSnapshot(
  runs: readonly { run: RunInput; summary: RunSummary }[],
  opts: { store: string; skipped?: LoadedRuns['skipped']; now?: Date },
): DashboardSnapshot {
  const table = methodTable(runs.map((r) => r.summary));
  // A matched-steps row is a curve of its own beside the equal-total one of the same method, as is
  // each (E, I) of a method run with several (the row's label names it).
  const methods: DashboardMethod[] = table.rows.map((r) => ({
    domain: r.domain,
    method: r.budgetMode === 'equal-total' ? r.label : `${r.label} (${r.budgetMode})`,
    runs: r.runs,
    curve: r.curve.map((p) => ({ x: p.x, y: p.mean, sd: finite(p.sd), n: p.n })),
  }));
  return DashboardSnapshot.parse({
    store: opts.store,
    generatedAt: (opts.now ?? new Date()).toISOString(),
    runs: runs.map((r) => dashboardRun(r.run, r.summary)),
    methods,
    skipped: opts.skipped ?? [],
  });
}

/**
 * Trajectory files read for the diagnostics, kept slim (only what the diagnostics count) and reused
 * while a file's size and mtime stay the same: the dashboard re-reads the store on every journal
 * change, and a finished evaluation's rollouts never change.
 */
const slimCache = new Map<string, { size: number; mtimeMs: number; trajectories: DiagnosableTrajectory[] }>();

function slim(t: DiagnosableTrajectory): DiagnosableTrajectory {
  return {
    modelCalls: t.modelCalls?.map((c) => ({ finishReason: c.finishReason })),
    events: t.events?.filter((e) => e.type === 'tool').map(() => ({ type: 'tool' })),
    finalAnswer: t.finalAnswer === null || t.finalAnswer === undefined ? t.finalAnswer : '',
    termination: t.termination,
    verdict: t.verdict && { pass: t.verdict.pass, extracted: t.verdict.extracted === null || t.verdict.extracted === undefined ? t.verdict.extracted : '' },
    diagnostics: t.diagnostics,
  };
}

export function cachedTrajectories(file: string): DiagnosableTrajectory[] {
  let st: { size: number; mtimeMs: number };
  try {
    st = statSync(file);
  } catch {
    return [];
  }
  const hit = slimCache.get(file);
  if (hit && hit.size === st.size && hit.mtimeMs === st.mtimeMs) return hit.trajectories;
  const trajectories = readTrajectoriesFile(file).map(slim);
  slimCache.set(file, { size: st.size, mtimeMs: st.mtimeMs, trajectories });
  return trajectories;
}

/** Reads every run in a store, with the diagnostics of the trajectories it points at; an unreadable store becomes a snapshot that says why. */
export function loadDashboard(storeDir: string, now = new Date()): DashboardSnapshot {
  try {
    const { runs, skipped } = loadRuns(storeDir);
    const results = new ResultStore(storeDir);
    const read = runs.map((run) => ({
      run,
      summary: { ...summarizeRun(run), diagnostics: runDiagnostics(run.entries, (key) => cachedTrajectories(results.trajectoriesFile(key))) },
    }));
    return dashboardSnapshot(read, { store: storeDir, skipped, now });
  } catch (e) {
    return { store: storeDir, generatedAt: now.toISOString(), runs: [], methods: [], skipped: [], error: (e as Error).message };
  }
}
