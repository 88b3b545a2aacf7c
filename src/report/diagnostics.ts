// Bottleneck diagnostics for `whale report`: per-rollout rates (truncation, no answer, extraction
// failures, infrastructure failures, tool and model calls) and each domain's own diagnostics
// (trajectory.diagnostics), aggregated per phase and split and per harness candidate. The paper reads
// its regimes off such rates (truncation 95.8% → 30.8% on Math; retrieval accuracy 26.9% → 60.6% on
// SearchQA); here they come from the trajectories the run's journal points at.
import { existsSync } from 'node:fs';
import type { JournalEntry } from '../archive/journal.js';
import { forEachLineSync } from '../core/lineReader.js';

/** The parts of a stored trajectory the diagnostics read (older records may lack some). */
export interface DiagnosableTrajectory {
  modelCalls?: { finishReason?: string }[];
  events?: { type?: string }[];
  finalAnswer?: string | null;
  termination?: string;
  verdict?: { pass?: boolean; extracted?: string | null };
  diagnostics?: Record<string, number | boolean | string | null>;
}

/** A yes/no diagnostic also counts the rollouts that passed where it held: what a condition is worth (a fact shown, then read). */
type DomainStat =
  | { kind: 'number'; sum: number; n: number }
  | { kind: 'boolean'; trues: number; n: number; passedWhenTrue: number }
  | { kind: 'string'; counts: Record<string, number>; n: number };

/** Sums over rollouts; `diagnosticsRow` turns them into rates and means. */
export interface DiagnosticsAggregate {
  rollouts: number;
  passed: number;
  /** A model call cut at its token limit. */
  truncated: number;
  /** The harness returned no answer (it could not parse one, ran out of turns, crashed…). */
  noAnswer: number;
  /** An answer was returned but the verifier could extract nothing from it. */
  extractionFailures: number;
  /** Termination 'infra_error': a backend, tool service or verifier failed (never scored). */
  infraFailures: number;
  /** The harness process failed: crash, protocol error, rule violation, a sandbox limit. */
  harnessFailures: number;
  toolCalls: number;
  modelCalls: number;
  terminations: Record<string, number>;
  /** The domain's diagnostics by key: numbers averaged, booleans as rates, strings counted. */
  domain: Record<string, DomainStat>;
}

const HARNESS_FAILURES = new Set(['crash', 'protocol_error', 'rule_violation', 'timeout', 'cpu_limit', 'memory_limit', 'output_limit', 'error']);

export function emptyAggregate(): DiagnosticsAggregate {
  return {
    rollouts: 0,
    passed: 0,
    truncated: 0,
    noAnswer: 0,
    extractionFailures: 0,
    infraFailures: 0,
    harnessFailures: 0,
    toolCalls: 0,
    modelCalls: 0,
    terminations: {},
    domain: {},
  };
}

export function addTrajectory(a: DiagnosticsAggregate, t: DiagnosableTrajectory): void {
  const calls = t.modelCalls ?? [];
  a.rollouts++;
  if (t.verdict?.pass) a.passed++;
  if (calls.some((c) => c.finishReason === 'length')) a.truncated++;
  const infra = t.termination === 'infra_error';
  if (infra) a.infraFailures++;
  else if (t.finalAnswer === null || t.finalAnswer === undefined) a.noAnswer++;
  else if (t.verdict && (t.verdict.extracted === null || t.verdict.extracted === undefined)) a.extractionFailures++;
  if (t.termination && HARNESS_FAILURES.has(t.termination)) a.harnessFailures++;
  a.toolCalls += (t.events ?? []).filter((e) => e.type === 'tool').length;
  a.modelCalls += calls.filter((c) => c.finishReason !== 'error').length;
  if (t.termination) a.terminations[t.termination] = (a.terminations[t.termination] ?? 0) + 1;
  for (const [key, v] of Object.entries(t.diagnostics ?? {})) {
    if (v === null) continue;
    const kind = typeof v as 'number' | 'boolean' | 'string';
    let s = a.domain[key];
    if (!s || s.kind !== kind) {
      // A key whose type changes between rollouts is read as strings (its values counted).
      s =
        s && s.kind !== kind
          ? toStrings(s)
          : kind === 'number'
            ? { kind, sum: 0, n: 0 }
            : kind === 'boolean'
              ? { kind, trues: 0, n: 0, passedWhenTrue: 0 }
              : { kind: 'string', counts: {}, n: 0 };
      a.domain[key] = s;
    }
    s.n++;
    if (s.kind === 'number') s.sum += typeof v === 'number' && Number.isFinite(v) ? v : 0;
    else if (s.kind === 'boolean') {
      if (v === true) {
        s.trues++;
        if (t.verdict?.pass) s.passedWhenTrue++;
      }
    } else s.counts[String(v)] = (s.counts[String(v)] ?? 0) + 1;
  }
}

function toStrings(s: DomainStat): DomainStat {
  if (s.kind === 'string') return s;
  return { kind: 'string', counts: {}, n: 0 };
}

export function mergeAggregates(into: DiagnosticsAggregate, from: DiagnosticsAggregate): DiagnosticsAggregate {
  for (const k of ['rollouts', 'passed', 'truncated', 'noAnswer', 'extractionFailures', 'infraFailures', 'harnessFailures', 'toolCalls', 'modelCalls'] as const)
    into[k] += from[k];
  for (const [k, n] of Object.entries(from.terminations)) into.terminations[k] = (into.terminations[k] ?? 0) + n;
  for (const [k, s] of Object.entries(from.domain)) {
    const t = into.domain[k];
    if (!t) into.domain[k] = structuredClone(s);
    else if (t.kind === 'number' && s.kind === 'number') Object.assign(t, { sum: t.sum + s.sum, n: t.n + s.n });
    else if (t.kind === 'boolean' && s.kind === 'boolean')
      Object.assign(t, { trues: t.trues + s.trues, n: t.n + s.n, passedWhenTrue: t.passedWhenTrue + s.passedWhenTrue });
    else if (t.kind === 'string' && s.kind === 'string') {
      t.n += s.n;
      for (const [v, c] of Object.entries(s.counts)) t.counts[v] = (t.counts[v] ?? 0) + c;
    }
  }
  return into;
}

/**
 * One aggregate as rates (0..1) and means, with the domain's keys flattened to `domain.<key>`; for a
 * yes/no key also `passWhen.<key>`, the pass rate among the rollouts where it held (NaN where it never did).
 */
export function diagnosticsRow(a: DiagnosticsAggregate): Record<string, number | string> {
  const n = a.rollouts || NaN;
  const row: Record<string, number | string> = {
    rollouts: a.rollouts,
    pass: a.passed / n,
    truncated: a.truncated / n,
    noAnswer: a.noAnswer / n,
    extractionFailure: a.extractionFailures / n,
    harnessFailure: a.harnessFailures / n,
    infraFailure: a.infraFailures / n,
    toolCallsPerRollout: a.toolCalls / n,
    modelCallsPerRollout: a.modelCalls / n,
  };
  for (const [k, s] of Object.entries(a.domain).sort(([x], [y]) => x.localeCompare(y))) {
    if (s.kind === 'boolean') row[`passWhen.${k}`] = s.trues ? s.passedWhenTrue / s.trues : NaN;
    row[`domain.${k}`] =
      s.kind === 'number'
        ? s.sum / s.n
        : s.kind === 'boolean'
          ? s.trues / s.n
          : Object.entries(s.counts)
              .sort((x, y) => y[1] - x[1] || x[0].localeCompare(y[0]))
              .map(([v, c]) => `${v} ${c}`)
              .join(', ');
  }
  return row;
}

export interface PhaseSplitDiagnostics {
  /** -1: before the first phase; 'test' rows have phase null. */
  phase: number | null;
  split: string;
  aggregate: DiagnosticsAggregate;
}

export interface CandidateDiagnostics {
  phase: number;
  round: number;
  treeHash: string;
  aggregate: DiagnosticsAggregate;
}

export interface RunDiagnostics {
  byPhase: PhaseSplitDiagnostics[];
  byCandidate: CandidateDiagnostics[];
}

/**
 * A run's diagnostics from the trajectories its journal points at: weight steps (split weight),
 * candidate scorings (harness, also per candidate), validations (val) and the sealed test. A key the
 * journal names twice (a cache hit, a resumed evaluation) is read once per place it is named in.
 */
export function runDiagnostics(entries: readonly JournalEntry[], trajectoriesOf: (keyHash: string) => readonly DiagnosableTrajectory[]): RunDiagnostics {
  const byPhase = new Map<string, PhaseSplitDiagnostics>();
  const byCandidate = new Map<string, CandidateDiagnostics>();
  const memo = new Map<string, DiagnosticsAggregate>();
  const aggregateOf = (key: string) => {
    let a = memo.get(key);
    if (!a) {
      a = emptyAggregate();
      for (const t of trajectoriesOf(key)) addTrajectory(a, t);
      memo.set(key, a);
    }
    return a;
  };
  const seen = new Set<string>();
  const add = (phase: number | null, split: string, key: unknown, candidate?: { round: number; treeHash: string }) => {
    if (typeof key !== 'string' || key === '') return;
    // Each key once per (phase, split): a re-scored pair that hit the cache adds no new rollouts.
    const once = `${phase}/${split}/${key}`;
    if (seen.has(once)) return;
    seen.add(once);
    const a = aggregateOf(key);
    const where = `${phase}/${split}`;
    const p = byPhase.get(where) ?? { phase, split, aggregate: emptyAggregate() };
    mergeAggregates(p.aggregate, a);
    byPhase.set(where, p);
    if (candidate && phase !== null) {
      const c = `${phase}/${candidate.treeHash}`;
      const cd = byCandidate.get(c) ?? { phase, round: candidate.round, treeHash: candidate.treeHash, aggregate: emptyAggregate() };
      mergeAggregates(cd.aggregate, a);
      byCandidate.set(c, cd);
    }
  };
  const num = (x: unknown) => (typeof x === 'number' ? x : null);
  for (const e of entries) {
    if (e.type === 'weight_step') add(num(e.phase), 'weight', e.evalKeyHash);
    else if (e.type === 'candidate_scored') add(num(e.phase), 'harness', e.keyHash, { round: num(e.round) ?? 0, treeHash: String(e.treeHash) });
    else if (e.type === 'validation') add(num(e.phase), 'val', e.keyHash);
    else if (e.type === 'test_evaluation') add(null, 'test', e.keyHash);
  }
  const order = (p: PhaseSplitDiagnostics) => (p.phase === null ? Number.MAX_SAFE_INTEGER : p.phase);
  const splitOrder = ['weight', 'harness', 'val', 'test'];
  return {
    byPhase: [...byPhase.values()].sort((a, b) => order(a) - order(b) || splitOrder.indexOf(a.split) - splitOrder.indexOf(b.split)),
    byCandidate: [...byCandidate.values()].sort((a, b) => a.phase - b.phase || a.round - b.round),
  };
}

/** Trajectories of a result-store key, read leniently (a torn last line is skipped, nothing is rewritten). */
export function readTrajectoriesFile(file: string): DiagnosableTrajectory[] {
  if (!existsSync(file)) return [];
  const out: DiagnosableTrajectory[] = [];
  forEachLineSync(file, (line) => {
    if (line.trim() === '') return;
    try {
      out.push(JSON.parse(line) as DiagnosableTrajectory);
    } catch {
      /* a line torn by a crash: the store cuts it off on its next write */
    }
  });
  return out;
}
