import type { JournalEntry } from './journal.js';

/** The budget ledger: rollouts by purpose (counted apart), proposer dollars and wall time. */
export interface Ledger {
  trainingRollouts: number;
  searchRollouts: number;
  evalRollouts: number;
  proposerDollars: number;
  wallMs: number;
}

export interface CurvePoint {
  phase: number;
  /** Training + search rollouts spent so far (what the paper's x-axis counts). */
  cumulativeRollouts: number;
  mean: number;
  se: number;
  bestSoFar: number;
  version: string;
  harness: string;
}

export interface RunState {
  runId: string;
  method: string;
  version: string;
  harness: string;
  /** The first phase not yet completed. */
  nextPhase: number;
  globalStep: number;
  ledger: Ledger;
  curve: CurvePoint[];
  best?: { version: string; harness: string; mean: number; se: number; phase: number };
  finished?: { reason: string };
  test?: { mean: number; se: number; k: number };
  /** Units stopped by an infrastructure failure (backend, tool service, verifier), each resumed or to resume. */
  infraFailures?: number;
}

const num = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x : 0);

const CATEGORY: Record<string, keyof Pick<Ledger, 'trainingRollouts' | 'searchRollouts' | 'evalRollouts'>> = {
  weight_step: 'trainingRollouts',
  candidate_scored: 'searchRollouts',
  candidate_invalid: 'searchRollouts',
  acceptance: 'searchRollouts',
  validation: 'evalRollouts',
  test_evaluation: 'evalRollouts',
};

/**
 * Rollouts an event adds to the ledger. Events name the result-store keys they drew on and how many
 * rollouts each key holds: the ledger counts what the run CONSUMED, whether this run or another one
 * sharing the store ran them (`paid` says how many this run ran itself), so methods compared in one
 * store are charged alike. A key already counted (a repeated or resumed evaluation) adds nothing, so
 * a run killed and resumed any number of times counts exactly what an uninterrupted run counts.
 */
function spentBy(e: JournalEntry, seen: Map<string, number>): number {
  const spent = Array.isArray(e.spent) ? (e.spent as { key: string; rollouts: number }[]) : undefined;
  if (!spent) return num(e.newRollouts);
  let add = 0;
  for (const { key, rollouts } of spent) {
    const before = seen.get(key) ?? 0;
    if (rollouts > before) {
      add += rollouts - before;
      seen.set(key, rollouts);
    }
  }
  return add;
}

export function ledgerOf(entries: readonly JournalEntry[]): Ledger {
  const l: Ledger = { trainingRollouts: 0, searchRollouts: 0, evalRollouts: 0, proposerDollars: 0, wallMs: 0 };
  let sessionStart: number | undefined;
  let lastAt: number | undefined;
  const seen = new Map<string, number>();
  for (const e of entries) {
    const at = Date.parse(e.at);
    if (e.type === 'session_started') {
      if (sessionStart !== undefined && lastAt !== undefined) l.wallMs += lastAt - sessionStart;
      sessionStart = at;
    }
    lastAt = at;
    const category = CATEGORY[e.type];
    if (category) l[category] += spentBy(e, seen);
    if (e.type === 'proposal' || e.type === 'proposer_session_lost') l.proposerDollars += num(e.dollars);
  }
  if (sessionStart !== undefined && lastAt !== undefined) l.wallMs += lastAt - sessionStart;
  return l;
}

/** The run's state as a fold over its journal: what a resumed engine continues from. */
export function foldRun(entries: readonly JournalEntry[]): RunState {
  const start = entries.find((e) => e.type === 'run_started');
  if (!start) throw new Error('the journal has no run_started event');
  const s: RunState = {
    runId: String(start.runId),
    method: String(start.method),
    version: String(start.version),
    harness: String(start.harness),
    nextPhase: 0,
    globalStep: 0,
    ledger: ledgerOf(entries),
    curve: [],
  };
  let spent = 0;
  let bestSoFar = -Infinity;
  const seen = new Map<string, number>();
  for (const e of entries) {
    const category = CATEGORY[e.type];
    if (category === 'trainingRollouts' || category === 'searchRollouts') spent += spentBy(e, seen);
    switch (e.type) {
      case 'weight_step':
        s.version = String(e.versionAfter);
        s.globalStep = num(e.globalStep) + 1;
        break;
      case 'phase_completed':
        s.nextPhase = num(e.phase) + 1;
        s.version = String(e.version);
        s.harness = String(e.harness);
        break;
      case 'validation': {
        const mean = num(e.mean);
        bestSoFar = Math.max(bestSoFar, mean);
        s.curve.push({
          phase: num(e.phase),
          cumulativeRollouts: spent,
          mean,
          se: num(e.se),
          bestSoFar,
          version: String(e.version),
          harness: String(e.harness),
        });
        if (!s.best || mean > s.best.mean) s.best = { version: String(e.version), harness: String(e.harness), mean, se: num(e.se), phase: num(e.phase) };
        break;
      }
      case 'run_completed':
        s.finished = { reason: String(e.reason) };
        break;
      case 'infra_failure':
        s.infraFailures = (s.infraFailures ?? 0) + 1;
        break;
      case 'test_evaluation':
        s.test = { mean: num(e.mean), se: num(e.se), k: num(e.k) };
        break;
    }
  }
  return s;
}

/**
 * Training + search rollouts spent after each journal entry (the curve's x-axis, entry by entry),
 * counted exactly as foldRun counts them, so a phase's span lines up with its validation point.
 */
export function cumulativeRollouts(entries: readonly JournalEntry[]): number[] {
  const seen = new Map<string, number>();
  let spent = 0;
  return entries.map((e) => {
    const category = CATEGORY[e.type];
    if (category === 'trainingRollouts' || category === 'searchRollouts') spent += spentBy(e, seen);
    return spent;
  });
}
