// Synthetic WHALE journals for the report's tests, shaped exactly like the engine's events
// (src/engine/engine.ts, harnessPhase.ts): a seeded toy simulation of each method on two domains,
// one harness-dominated ('kbqa') and one weight-dominated ('ramble'), and a writer into a run store.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JournalEntry } from '../../src/archive/journal.js';
import type { RunInput, ScheduleCell } from '../../src/report/aggregate.js';

/** A tiny journal builder: stamps `at` one second apart. */
export class JournalBuilder {
  readonly entries: JournalEntry[] = [];
  private t: number;
  constructor(start = Date.parse('2026-11-01T10:00:00Z')) {
    this.t = start;
  }
  add(type: string, fields: Record<string, unknown> = {}): this {
    this.entries.push({ type, at: new Date(this.t).toISOString(), ...fields });
    this.t += 1000;
    return this;
  }
}

function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const hex = (r: () => number) => Array.from({ length: 40 }, () => Math.floor(r() * 16).toString(16)).join('');
const clamp = (x: number) => Math.min(0.98, Math.max(0.01, x));

export interface SimOptions {
  method: 'whale' | 'adaptive' | 'stagewise' | 'weight-only' | 'harness-only' | 'fst';
  domain: 'kbqa' | 'ramble';
  seed: number;
  /** Stop mid-run (no run_completed, no test). */
  unfinished?: boolean;
  acceptance?: 'archive-best' | 'paired';
}

/**
 * Simulates a run: pass rate = base + weight gain (saturating in steps) + harness gain (saturating
 * in search quality, larger once the weights have moved on 'ramble'), plus noise. Schedules follow
 * the methods' shapes with small toy sizes (B·G = 64 rollouts a step, 32 tasks a candidate).
 */
export function simulateRun(o: SimOptions): { id: string; entries: JournalEntry[]; config: Record<string, unknown> } {
  const r = rng(o.seed * 7919 + (o.domain === 'kbqa' ? 1 : 2) * 104729 + o.method.length * 31 + o.method.charCodeAt(0));
  const id = `20261101-100000-${o.method}-${o.domain}-s${o.seed}`;
  const j = new JournalBuilder(Date.parse('2026-11-01T10:00:00Z') + o.seed * 3600_000);
  const k = 8;
  const valTasks = 40;
  const stepRollouts = 64;
  const searchTasks = 32;
  const harnessDominated = o.domain === 'kbqa';
  const base = harnessDominated ? 0.22 : 0.12;
  let steps = 0;
  let harnessQ = 0;
  let version = 'base';
  let harness = hex(r);
  const h0 = harness;
  const quality = () => {
    const w = (harnessDominated ? 0.1 : 0.32) * (1 - Math.exp(-steps / 10));
    const unlock = harnessDominated ? 1 : 0.3 + 0.7 * Math.min(1, steps / 6);
    const h = (harnessDominated ? 0.34 : 0.12) * unlock * (1 - Math.exp(-harnessQ / 4)) * (o.method === 'fst' ? 0.5 : 1);
    return clamp(base + w + h);
  };
  const validate = (phase: number) => {
    const mean = clamp(quality() + (r() - 0.5) * 0.04);
    j.add('validation', { phase, version, harness, mean, se: Math.sqrt((mean * (1 - mean)) / (valTasks * k)), k, keyHash: hex(r), newRollouts: valTasks * k });
  };
  j.add('session_started', { pid: 1000 + o.seed });
  j.add('run_started', { runId: id, method: o.method, seed: o.seed, domain: o.domain, h0, harness, version });
  validate(-1);
  type Phase = { kind: 'weight'; steps: number } | { kind: 'harness'; iterations: number };
  const plan: Phase[] = [];
  if (o.method === 'weight-only') for (let i = 0; i < 6; i++) plan.push({ kind: 'weight', steps: 4 });
  else if (o.method === 'harness-only') for (let i = 0; i < 4; i++) plan.push({ kind: 'harness', iterations: 4 });
  else if (o.method === 'stagewise') plan.push({ kind: 'weight', steps: 12 }, { kind: 'harness', iterations: 9 });
  else if (o.method === 'adaptive')
    for (let i = 0; i < 3; i++) plan.push({ kind: 'weight', steps: 2 + Math.floor(r() * 4) }, { kind: 'harness', iterations: 3 + Math.floor(r() * 3) });
  else for (let i = 0; i < 3; i++) plan.push({ kind: 'weight', steps: 4 }, { kind: 'harness', iterations: 4 });
  const stopAt = o.unfinished ? Math.max(1, Math.floor(plan.length / 2)) : plan.length;
  for (let phase = 0; phase < stopAt; phase++) {
    const p = plan[phase];
    j.add('phase_started', {
      phase,
      kind: p.kind,
      cycle: Math.floor(phase / 2),
      mode: o.method === 'fst' ? 'fst' : 'full',
      adaptive: o.method === 'adaptive',
      version,
      harness,
    });
    if (p.kind === 'weight') {
      for (let s = 0; s < p.steps; s++) {
        const meanReward = clamp(quality() + (r() - 0.5) * 0.06);
        const truncationRate = Math.max(0, (harnessDominated ? 0.1 : 0.8) * Math.exp(-steps / 6) + (r() - 0.5) * 0.04);
        const before = version;
        version = `v${steps + 1}`;
        j.add('weight_step', {
          phase,
          step: s,
          globalStep: steps,
          tasks: 8,
          rollouts: stepRollouts,
          newRollouts: stepRollouts,
          accepted: Math.round(meanReward * stepRollouts),
          acceptedFraction: meanReward,
          meanReward,
          truncationRate,
          examples: Math.round(meanReward * stepRollouts),
          optimizerSteps: 2,
          trainedTokens: 4000,
          meanLoss: 1.5 - steps * 0.03,
          versionBefore: before,
          versionAfter: version,
          trained: true,
          fromRecord: false,
          evalKeyHash: hex(r),
          seed: steps,
          wallMs: 900,
          rolloutMs: 700,
        });
        steps++;
      }
      j.add('phase_completed', { phase, kind: 'weight', version, harness });
    } else {
      const incumbent = harness;
      const scored: { treeHash: string; mean: number; meanTurns: number }[] = [];
      const score = (round: number, treeHash: string, q: number) => {
        const mean = clamp(q + (r() - 0.5) * 0.08);
        scored.push({ treeHash, mean, meanTurns: 1 + r() });
        j.add('candidate_scored', {
          phase,
          round,
          treeHash,
          version,
          mean,
          se: Math.sqrt((mean * (1 - mean)) / searchTasks),
          meanTurns: scored[scored.length - 1].meanTurns,
          keyHash: hex(r),
          newRollouts: searchTasks,
          cacheHit: false,
        });
      };
      score(0, incumbent, quality());
      let bestQ = harnessQ;
      const qualities = new Map([[incumbent, harnessQ]]);
      for (let round = 1; round < p.iterations; round++) {
        j.add('proposal', { phase, round, candidates: [], report: `round ${round}: mutated knobs`, dollars: 0, proposer: 'knob' });
        for (let c = 0; c < 3; c++) {
          const treeHash = hex(r);
          if (r() < 0.15) {
            j.add('candidate_invalid', { phase, round, treeHash, reasons: ['smoke run failed'], newRollouts: 1 });
            continue;
          }
          const q = Math.max(0, bestQ + (r() - 0.35) * 1.6);
          qualities.set(treeHash, q);
          const saved = harnessQ;
          harnessQ = q;
          score(round, treeHash, quality());
          harnessQ = saved;
        }
        const best = scored.reduce((a, b) => (b.mean > a.mean ? b : a));
        bestQ = qualities.get(best.treeHash) ?? bestQ;
        j.add('round_done', { phase, round, bestTreeHash: best.treeHash, bestMean: best.mean });
      }
      const best = scored.reduce((a, b) => (b.mean > a.mean ? b : a));
      const acceptance: Record<string, unknown> = {
        phase,
        rule: o.acceptance ?? 'archive-best',
        archiveBest: best.treeHash,
        archiveBestMean: best.mean,
        incumbent,
        newRollouts: 0,
      };
      let chosen = best.treeHash;
      if (o.acceptance === 'paired' && best.treeHash !== incumbent) {
        const keep = (qualities.get(best.treeHash) ?? 0) - (qualities.get(incumbent) ?? 0) < 0.3;
        chosen = keep ? incumbent : best.treeHash;
        Object.assign(acceptance, {
          pairedChoice: chosen,
          diff: 0.02,
          seDiff: 0.03,
          newRollouts: 2 * searchTasks * 4,
          changedChoice: chosen !== best.treeHash,
        });
      }
      j.add('acceptance', { ...acceptance, chosen });
      harness = chosen;
      harnessQ = qualities.get(chosen) ?? harnessQ;
      j.add('phase_completed', { phase, kind: 'harness', version, harness });
    }
    validate(phase);
  }
  if (o.unfinished) {
    j.add('run_stopped', { reason: 'stop requested' });
  } else {
    const mean = clamp(quality() - 0.01 + (r() - 0.5) * 0.04);
    j.add('test_evaluation', { version, harness, mean, se: Math.sqrt((mean * (1 - mean)) / (valTasks * k)), k, newRollouts: valTasks * k, keyHash: hex(r) });
    j.add('run_completed', { reason: 'schedule complete' });
  }
  const config = { name: 'synthetic', domain: { id: o.domain }, method: o.method, seed: o.seed, evaluation: { k, split: 'val', seed: 0, concurrency: 8 } };
  return { id, entries: j.entries, config };
}

/** Writes runs into `<store>/runs/<id>/{config.json,journal.jsonl}` as the RunStore lays them out. */
export function writeRuns(storeDir: string, runs: readonly { id: string; entries: readonly JournalEntry[]; config: unknown }[]): void {
  for (const run of runs) {
    const dir = join(storeDir, 'runs', run.id);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'config.json'), JSON.stringify(run.config, null, 2) + '\n');
    writeFileSync(join(dir, 'journal.jsonl'), run.entries.map((e) => JSON.stringify(e)).join('\n') + '\n');
  }
}

/** The demonstration grid: every method on both domains, `seeds` seeds each. */
export function syntheticGrid(seeds = 3): ReturnType<typeof simulateRun>[] {
  const methods: SimOptions['method'][] = ['whale', 'adaptive', 'stagewise', 'weight-only', 'harness-only', 'fst'];
  const out: ReturnType<typeof simulateRun>[] = [];
  for (const domain of ['kbqa', 'ramble'] as const)
    for (const method of methods)
      for (let seed = 0; seed < seeds; seed++)
        out.push(simulateRun({ method, domain, seed, acceptance: method === 'whale' && seed === 0 ? 'paired' : 'archive-best' }));
  return out;
}

export interface Phase {
  kind: 'weight' | 'harness';
  /** Training (weight) or search (harness) rollouts the phase spends. */
  spend: number;
  /** Validation mean@k after the phase. */
  val: number;
  completed?: boolean;
}

/** A hand-built run with the given phases (a proposal by `proposer` in every harness phase), its config snapshot naming (E, I). */
export function run(
  id: string,
  o: {
    method: string;
    domain?: string;
    seed: number;
    cell?: ScheduleCell;
    start?: number;
    phases: Phase[];
    test?: number;
    end?: 'completed' | 'none';
    proposer?: string;
    mode?: string;
  },
): RunInput {
  const j = new JournalBuilder();
  j.add('session_started', {}).add('run_started', {
    runId: id,
    method: o.method,
    seed: o.seed,
    domain: o.domain ?? 'd',
    h0: 'h0',
    harness: 'h0',
    version: 'base',
  });
  j.add('validation', { phase: -1, mean: o.start ?? 0.1, se: 0.01, k: 4, newRollouts: 10 });
  o.phases.forEach((p, i) => {
    j.add('phase_started', { phase: i, kind: p.kind, cycle: Math.floor(i / 2) });
    if (p.kind === 'weight') j.add('weight_step', { phase: i, step: 0, globalStep: i, meanReward: 0.5, rollouts: p.spend, newRollouts: p.spend });
    else {
      j.add('candidate_scored', { phase: i, round: 0, treeHash: 'h0', mean: 0.1, newRollouts: p.spend / 2 });
      j.add('proposal', { phase: i, round: 1, candidates: [], report: '', dollars: 0, proposer: o.proposer ?? 'knob' });
      j.add('candidate_scored', { phase: i, round: 1, treeHash: `c${i}`, mean: 0.2, newRollouts: p.spend / 2 });
      j.add('round_done', { phase: i, round: 1 });
      j.add('acceptance', { phase: i, rule: 'archive-best', archiveBest: `c${i}`, chosen: `c${i}`, incumbent: 'h0' });
    }
    if (p.completed !== false) j.add('phase_completed', { phase: i, kind: p.kind, version: `v${i}`, harness: 'h0' });
    j.add('validation', { phase: i, mean: p.val, se: 0.01, k: 4, newRollouts: 10 });
  });
  if ((o.end ?? 'completed') === 'completed') {
    if (o.test !== undefined) j.add('test_evaluation', { mean: o.test, se: 0.01, k: 4, newRollouts: 20 });
    j.add('run_completed', { reason: 'schedule complete' });
  }
  const config = {
    method: o.method,
    seed: o.seed,
    domain: { id: o.domain ?? 'd' },
    budget: { mode: o.mode ?? 'equal-total' },
    search: { proposer: o.proposer ?? 'knob' },
    ...(o.cell ? { schedule: { epochs: o.cell.epochs, iterations: o.cell.iterations, cycles: 2 } } : {}),
  };
  return { id, entries: j.entries, config };
}

export const W = (spend: number, val: number, completed?: boolean): Phase => ({ kind: 'weight', spend, val, completed });
export const H = (spend: number, val: number, completed?: boolean): Phase => ({ kind: 'harness', spend, val, completed });
