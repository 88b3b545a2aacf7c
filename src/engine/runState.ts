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
}

const num = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x : 0);

export function ledgerOf(entries: readonly JournalEntry[]): Ledger {
  const l: Ledger = { trainingRollouts: 0, searchRollouts: 0, evalRollouts: 0, proposerDollars: 0, wallMs: 0 };
  let sessionStart: number | undefined;
  let lastAt: number | undefined;
  for (const e of entries) {
    const at = Date.parse(e.at);
    if (e.type === 'session_started') {
      if (sessionStart !== undefined && lastAt !== undefined) l.wallMs += lastAt - sessionStart;
      sessionStart = at;
    }
    lastAt = at;
    switch (e.type) {
      case 'weight_step':
        l.trainingRollouts += num(e.newRollouts);
        break;
      case 'candidate_scored':
      case 'candidate_invalid':
      case 'acceptance':
        l.searchRollouts += num(e.newRollouts);
        break;
      case 'validation':
      case 'test_evaluation':
        l.evalRollouts += num(e.newRollouts);
        break;
      case 'proposal':
        l.proposerDollars += num(e.dollars);
        break;
    }
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
  for (const e of entries) {
    switch (e.type) {
      case 'weight_step':
        s.version = String(e.versionAfter);
        s.globalStep = num(e.globalStep) + 1;
        spent += num(e.newRollouts);
        break;
      case 'candidate_scored':
      case 'candidate_invalid':
      case 'acceptance':
        spent += num(e.newRollouts);
        break;
      case 'phase_completed':
        s.nextPhase = num(e.phase) + 1;
        s.version = String(e.version);
        s.harness = String(e.harness);
        break;
      case 'validation': {
        const mean = num(e.mean);
        bestSoFar = Math.max(bestSoFar, mean);
        s.curve.push({ phase: num(e.phase), cumulativeRollouts: spent, mean, se: num(e.se), bestSoFar, version: String(e.version), harness: String(e.harness) });
        if (!s.best || mean > s.best.mean) s.best = { version: String(e.version), harness: String(e.harness), mean, se: num(e.se), phase: num(e.phase) };
        break;
      }
      case 'run_completed':
        s.finished = { reason: String(e.reason) };
        break;
      case 'test_evaluation':
        s.test = { mean: num(e.mean), se: num(e.se), k: num(e.k) };
        break;
    }
  }
  return s;
}
