// Pure aggregation for `whale report`: journals → per-run summaries → the method table and the
// best-so-far curves averaged over seeds. No I/O here; everything is a fold over journal entries.
import { METHODS } from '../core/config.js';
import type { JournalEntry } from '../archive/journal.js';
import { foldRun, type CurvePoint, type Ledger } from '../archive/runState.js';
import type { RunDiagnostics } from './diagnostics.js';

/** One run as the report reads it: its id, its journal, and (when present) its config snapshot. */
export interface RunInput {
  id: string;
  entries: readonly JournalEntry[];
  config?: {
    method?: unknown;
    seed?: unknown;
    domain?: { id?: unknown };
    evaluation?: { k?: unknown };
    budget?: { mode?: unknown };
    schedule?: { epochs?: unknown; iterations?: unknown };
    search?: { proposer?: unknown; llm?: { provider?: unknown; model?: unknown } };
  };
}

export interface PhaseInfo {
  phase: number;
  kind: string;
  cycle?: number;
  mode?: string;
  completed: boolean;
  /** Weight phases: steps taken, and the epochs of the weight split they covered (when the journal says B/N). */
  steps?: number;
  epochs?: number;
  /** Harness phases: iterations run, the seed's evaluation counting as the first. */
  iterations?: number;
  adaptive?: boolean;
  /** What the schedule planned for the phase (absent in journals older than the field). */
  planned?: { steps?: { min: number; max: number | null }; iterations?: { min: number; max: number }; epochsPerStep?: number };
  /** The harness the phase ended with (for weight phases: unchanged). */
  harness?: string;
  /** The policy version the phase ended with. */
  version?: string;
  acceptance?: AcceptanceInfo;
  /** Harness phases: candidates scored (including the re-scored incumbent) and found invalid. */
  scored?: number;
  invalid?: number;
  /** Validation mean@k after the phase, when it was evaluated. */
  validation?: number;
}

export interface AcceptanceInfo {
  phase: number;
  rule: string;
  incumbent?: string;
  archiveBest: string;
  chosen: string;
  /** True when the paired rule was actually applied (a challenger differed from the incumbent). */
  pairedUsed: boolean;
  /** True when the paired rule's choice differs from the archive-wide best. */
  changedChoice: boolean;
  /** True when the accepted harness is neither the incumbent nor new in this phase (the search returned to an older candidate). */
  olderCandidate: boolean;
}

export interface TrainingPoint {
  phase: number;
  /** 0-based global weight step. */
  globalStep: number;
  meanReward: number;
  truncationRate: number;
  acceptedFraction: number;
  meanLoss: number | null;
}

export interface RunSummary {
  id: string;
  method: string;
  domain: string;
  /** How the run's budget was counted (config budget.mode; runs older than the field: 'equal-total'). */
  budgetMode: string;
  seed: number | undefined;
  /** k of validation mean@k (from the journal, else the config). */
  k: number | undefined;
  status: 'completed' | 'stopped' | 'in progress';
  /** Why the run ended (run_completed / run_stopped reason), or a note that it has not. */
  reason: string;
  phases: PhaseInfo[];
  curve: CurvePoint[];
  training: TrainingPoint[];
  ledger: Ledger;
  best?: { version: string; harness: string; mean: number; se: number; phase: number };
  test?: { mean: number; se: number; k: number };
  pairedUsed: number;
  pairedChanged: number;
  /** The fixed schedule (E, I) the run was configured with (config snapshot), the key of the (E, I) grid. */
  cell?: ScheduleCell;
  /** The proposer(s) that wrote its candidates ('llm (anthropic claude-…)', 'knob'); empty when it proposed nothing. */
  proposers?: string[];
  /** Bottleneck diagnostics from the run's trajectories (diagnostics.ts), when the store was read for them. */
  diagnostics?: RunDiagnostics;
}

/** A fixed schedule: E epochs per weight phase, I iterations per harness phase. */
export interface ScheduleCell {
  epochs: number;
  iterations: number;
}

export const cellLabel = (c: ScheduleCell): string => `E ${fmtNum(c.epochs)}, I ${c.iterations}`;

function fmtNum(x: number): string {
  return String(Number(x.toFixed(2)));
}

const num = (x: unknown): number | undefined => (typeof x === 'number' && Number.isFinite(x) ? x : undefined);
const str = (x: unknown): string | undefined => (typeof x === 'string' ? x : undefined);

/** A run's summary, folded from its journal (and config for what the journal lacks). */
export function summarizeRun(run: RunInput): RunSummary {
  const { entries } = run;
  const state = foldRun(entries);
  const start = entries.find((e) => e.type === 'run_started')!;
  const phases = new Map<number, PhaseInfo>();
  const phaseOf = (p: number): PhaseInfo => {
    let info = phases.get(p);
    if (!info) {
      info = { phase: p, kind: 'unknown', completed: false };
      phases.set(p, info);
    }
    return info;
  };
  const training: TrainingPoint[] = [];
  let k: number | undefined;
  let completedReason: string | undefined;
  let stoppedReason: string | undefined;
  let globalStep = 0;
  const firstScored = new Map<string, number>();
  const proposerKinds = new Set<string>();
  for (const e of entries) {
    const phase = num(e.phase);
    switch (e.type) {
      case 'phase_started': {
        const p = phaseOf(phase ?? -1);
        p.kind = str(e.kind) ?? p.kind;
        if (num(e.cycle) !== undefined) p.cycle = num(e.cycle);
        if (str(e.mode)) p.mode = str(e.mode);
        p.adaptive = e.adaptive === true;
        if (e.planned && typeof e.planned === 'object') p.planned = e.planned as PhaseInfo['planned'];
        break;
      }
      case 'proposal': {
        const kind = str(e.proposer);
        if (kind) proposerKinds.add(kind);
        break;
      }
      case 'round_done': {
        const p = phaseOf(phase ?? -1);
        p.iterations = (p.iterations ?? 1) + 1;
        break;
      }
      case 'weight_step': {
        const p = phaseOf(phase ?? -1);
        if (p.kind === 'unknown') p.kind = 'weight';
        p.steps = (p.steps ?? 0) + 1;
        const g = num(e.globalStep) ?? globalStep;
        globalStep = g + 1;
        training.push({
          phase: phase ?? -1,
          globalStep: g,
          meanReward: num(e.meanReward) ?? NaN,
          truncationRate: num(e.truncationRate) ?? NaN,
          acceptedFraction: num(e.acceptedFraction) ?? NaN,
          meanLoss: num(e.meanLoss) ?? null,
        });
        break;
      }
      case 'candidate_scored': {
        const p = phaseOf(phase ?? -1);
        const h = str(e.treeHash);
        if (h && !firstScored.has(h)) firstScored.set(h, phase ?? -1);
        if (p.kind === 'unknown') p.kind = 'harness';
        p.scored = (p.scored ?? 0) + 1;
        break;
      }
      case 'candidate_invalid': {
        const p = phaseOf(phase ?? -1);
        p.invalid = (p.invalid ?? 0) + 1;
        break;
      }
      case 'acceptance': {
        const p = phaseOf(phase ?? -1);
        const chosen = str(e.chosen) ?? '';
        const archiveBest = str(e.archiveBest) ?? chosen;
        const pairedUsed = str(e.pairedChoice) !== undefined || typeof e.changedChoice === 'boolean';
        const incumbent = str(e.incumbent);
        const olderCandidate = chosen !== incumbent && (firstScored.get(chosen) ?? phase ?? -1) < (phase ?? -1);
        p.acceptance = {
          phase: phase ?? -1,
          rule: str(e.rule) ?? 'archive-best',
          incumbent,
          archiveBest,
          chosen,
          pairedUsed,
          changedChoice: e.changedChoice === true || (pairedUsed && chosen !== archiveBest),
          olderCandidate,
        };
        break;
      }
      case 'phase_completed': {
        const p = phaseOf(phase ?? -1);
        p.completed = true;
        p.kind = str(e.kind) ?? p.kind;
        p.harness = str(e.harness);
        p.version = str(e.version);
        break;
      }
      case 'validation': {
        k = num(e.k) ?? k;
        if (phase !== undefined && phase >= 0) phaseOf(phase).validation = num(e.mean);
        break;
      }
      case 'run_completed':
        completedReason = str(e.reason) ?? 'completed';
        break;
      case 'run_stopped':
        stoppedReason = str(e.reason) ?? 'stopped';
        break;
    }
  }
  for (const p of phases.values()) {
    const perStep = num(p.planned?.epochsPerStep);
    if (p.kind === 'weight' && perStep !== undefined) p.epochs = (p.steps ?? 0) * perStep;
    if (p.kind === 'harness' && p.iterations === undefined && (p.scored ?? 0) > 0) p.iterations = 1;
  }
  const acceptances = [...phases.values()].map((p) => p.acceptance).filter((a): a is AcceptanceInfo => !!a);
  const cfg = run.config ?? {};
  const epochs = num(cfg.schedule?.epochs);
  const iterations = num(cfg.schedule?.iterations);
  const llm = cfg.search?.llm;
  const llmName = [str(llm?.provider), str(llm?.model)].filter((x) => x !== undefined).join(' ');
  const status: RunSummary['status'] = completedReason !== undefined ? 'completed' : stoppedReason !== undefined ? 'stopped' : 'in progress';
  return {
    id: run.id,
    method: str(start.method) ?? str(cfg.method) ?? 'unknown',
    domain: str(start.domain) ?? str(cfg.domain?.id) ?? 'unknown',
    budgetMode: str(cfg.budget?.mode) ?? 'equal-total',
    seed: num(start.seed) ?? num(cfg.seed),
    k: k ?? num(cfg.evaluation?.k),
    status,
    reason: completedReason ?? (stoppedReason !== undefined ? `${stoppedReason} (resumable)` : 'not finished (running, or killed: resumable)'),
    phases: [...phases.values()].filter((p) => p.phase >= 0).sort((a, b) => a.phase - b.phase),
    curve: state.curve,
    training,
    ledger: state.ledger,
    best: state.best,
    test: state.test,
    pairedUsed: acceptances.filter((a) => a.pairedUsed).length,
    pairedChanged: acceptances.filter((a) => a.pairedUsed && a.changedChoice).length,
    cell: epochs !== undefined && iterations !== undefined ? { epochs, iterations } : undefined,
    proposers: [...proposerKinds].sort().map((k) => (k === 'llm' && llmName ? `llm (${llmName})` : k)),
  };
}

/**
 * The schedule a run actually ran, in the paper's units: E (epochs of the weight split) per weight
 * phase and I (iterations, the seed's evaluation counted) per harness phase, with the planned value
 * beside a fixed phase that a budget cut short ("I 3 of 5"). Repeated values are written once (×n).
 */
export function scheduleLabel(r: Pick<RunSummary, 'phases'>): string {
  const weight = r.phases
    .filter((p) => p.kind === 'weight')
    .map((p) => {
      const perStep = p.planned?.epochsPerStep;
      const ran = p.epochs !== undefined ? `E ${fmtNum(p.epochs)}` : `${p.steps ?? 0} steps`;
      const max = p.planned?.steps?.max;
      const fixed = !p.adaptive && max !== null && max !== undefined && p.planned?.steps?.min === max;
      return fixed && (p.steps ?? 0) < max ? `${ran} of ${perStep !== undefined ? fmtNum(max * perStep) : `${max} steps`}` : ran;
    });
  const harness = r.phases
    .filter((p) => p.kind === 'harness')
    .map((p) => {
      const ran = `I ${p.iterations ?? 0}`;
      const max = p.planned?.iterations?.max;
      return !p.adaptive && max !== undefined && (p.iterations ?? 0) < max ? `${ran} of ${max}` : ran;
    });
  const compact = (xs: string[]) => {
    const out: string[] = [];
    for (const x of xs) {
      const last = out[out.length - 1];
      const m = last ? /^(.*?)(?: ×(\d+))?$/.exec(last)! : undefined;
      if (m && m[1] === x) out[out.length - 1] = `${x} ×${Number(m[2] ?? 1) + 1}`;
      else out.push(x);
    }
    return out.join(', ');
  };
  const label = [compact(weight), compact(harness)].filter((s) => s !== '').join(' · ') || '—';
  return r.phases[0]?.kind === 'harness' && weight.length > 0 ? `harness first: ${label}` : label;
}

/** Mean and spread of a sample: sd is the sample standard deviation, se = sd/√n (NaN when n < 2). */
export interface Spread {
  mean: number;
  sd: number;
  se: number;
  n: number;
}

export function spread(xs: readonly number[]): Spread {
  const n = xs.length;
  if (n === 0) return { mean: NaN, sd: NaN, se: NaN, n: 0 };
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  if (n < 2) return { mean, sd: NaN, se: NaN, n };
  const sd = Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1));
  return { mean, sd, se: sd / Math.sqrt(n), n };
}

/** A run's best-so-far validation value after `x` cumulative rollouts; undefined before its first evaluation. */
export function bestSoFarAt(curve: readonly Pick<CurvePoint, 'cumulativeRollouts' | 'bestSoFar'>[], x: number): number | undefined {
  let v: number | undefined;
  for (const p of curve) {
    if (p.cumulativeRollouts > x) break;
    v = p.bestSoFar;
  }
  return v;
}

export interface MeanCurvePoint {
  /** Cumulative training + search rollouts. */
  x: number;
  mean: number;
  sd: number;
  se: number;
  /** Seeds with a value at x. */
  n: number;
  /** Seeds whose run had not yet ended at x (the others contribute their final best-so-far). */
  active: number;
}

/**
 * Best-so-far curves averaged over seeds. Each run's best-so-far is a step function of cumulative
 * rollouts; the mean is taken at every x where any run evaluated. A run that has ended keeps its
 * final best-so-far (it would not have improved without more budget); `active` says how many had not.
 */
export function meanCurve(curves: readonly (readonly Pick<CurvePoint, 'cumulativeRollouts' | 'bestSoFar'>[])[]): MeanCurvePoint[] {
  const nonEmpty = curves.filter((c) => c.length > 0);
  const xs = [...new Set(nonEmpty.flatMap((c) => c.map((p) => p.cumulativeRollouts)))].sort((a, b) => a - b);
  return xs.map((x) => {
    const values = nonEmpty.map((c) => bestSoFarAt(c, x)).filter((v): v is number => v !== undefined);
    const s = spread(values);
    return { x, mean: s.mean, sd: s.sd, se: s.se, n: s.n, active: nonEmpty.filter((c) => c[c.length - 1].cumulativeRollouts > x).length };
  });
}

/** The first x at which a curve reaches `target` (within 1e-9), or undefined when it never does. */
export function rolloutsToReach(curve: readonly { x: number; y: number }[], target: number): number | undefined {
  for (const p of curve) if (p.y >= target - 1e-9) return p.x;
  return undefined;
}

export interface MethodRow {
  domain: string;
  method: string;
  /** The method, with its (E, I) when the method's runs in this domain and budget mode were configured with several. */
  label: string;
  /** The configured (E, I) shared by the row's runs (undefined when they differ or lack a snapshot). */
  cell?: ScheduleCell;
  budgetMode: string;
  runs: string[];
  /** Seeds (runs) in the row. */
  n: number;
  k: number | undefined;
  /** Best validation mean@k per run (the validation-selected pair's score), over seeds. */
  bestValidation: Spread;
  /** Sealed test mean@k of each run's validation-selected pair, over the runs that have one. */
  test: Spread;
  testK: number | undefined;
  /** RSFT steps taken: what 'matched-steps' matches across methods. */
  rsftSteps: Spread;
  trainingRollouts: Spread;
  searchRollouts: Spread;
  /** Training + search: what the curves' x-axis counts (and 'equal-total' caps). */
  rollouts: Spread;
  evalRollouts: Spread;
  dollars: Spread;
  /** Weight + harness cycles completed (cyclesRun), over seeds. */
  cycles: Spread;
  /** Wall minutes per run (the journal's sessions), over seeds. */
  wallMinutes: Spread;
  /** The proposers that wrote the row's candidates (union over its runs). */
  proposers: string[];
  /** Where this method's mean best-so-far curve first reaches weight-only's peak; undefined: never, or no weight-only run. */
  toReachWeightOnlyPeak?: number;
  curve: MeanCurvePoint[];
  /** The schedule as run (scheduleLabel), one entry per distinct label among the row's runs. */
  schedules: string[];
  /** Runs in the row that have not completed (non-zero only when none of the method's runs has). */
  unfinished: number;
  /** Unfinished runs left out of the row because completed ones exist. */
  excluded: string[];
}

/** One (domain, budget mode) pair: its methods share a chart and a weight-only peak. */
export interface DomainSummary {
  domain: string;
  budgetMode: string;
  methods: string[];
  /** Peak (= final value: best-so-far never falls) of the weight-only mean best-so-far curve; undefined without a weight-only run. */
  weightOnlyPeak?: number;
  /** Training + search rollouts at which weight-only's mean curve first reached that peak. */
  weightOnlyPeakAt?: number;
  k: number | undefined;
}

export interface MethodTable {
  rows: MethodRow[];
  domains: DomainSummary[];
}

/** Methods in the documented order, unknown ones after them alphabetically. */
export function methodOrder(a: string, b: string): number {
  const ia = (METHODS as readonly string[]).indexOf(a);
  const ib = (METHODS as readonly string[]).indexOf(b);
  if (ia !== ib) return (ia < 0 ? Infinity : ia) - (ib < 0 ? Infinity : ib) || a.localeCompare(b);
  return a.localeCompare(b);
}

/** The peak of a mean curve (undefined when empty). */
export function curvePeak(curve: readonly MeanCurvePoint[]): number | undefined {
  return curve.length === 0 ? undefined : Math.max(...curve.map((p) => p.mean));
}

/**
 * Weight + harness cycles a run completed: completed pairs of a weight phase and a harness phase in
 * the order the schedule ran them (weight first, or harness first with `schedule.start: "harness"`).
 */
export function cyclesRun(r: Pick<RunSummary, 'phases'>): number {
  let open: string | undefined;
  let cycles = 0;
  for (const p of r.phases) {
    if (!p.completed || (p.kind !== 'weight' && p.kind !== 'harness')) continue;
    if (open !== undefined && p.kind !== open) {
      cycles++;
      open = undefined;
    } else open = p.kind;
  }
  return cycles;
}

const cellKey = (c: ScheduleCell | undefined) => (c ? `${c.epochs}/${c.iterations}` : '');
const cellOrder = (a: ScheduleCell | undefined, b: ScheduleCell | undefined) =>
  (a?.epochs ?? -1) - (b?.epochs ?? -1) || (a?.iterations ?? -1) - (b?.iterations ?? -1);

/** A group's completed runs; only when none has completed, the unfinished ones (so a half-done run never drags a finished comparison). */
function reportable(rs: readonly RunSummary[]): { used: RunSummary[]; excluded: RunSummary[] } {
  const completed = rs.filter((r) => r.status === 'completed');
  const used = completed.length > 0 ? completed : [...rs];
  return { used, excluded: rs.filter((r) => !used.includes(r)) };
}

/** One method's runs in one (domain, budget mode), split by configured (E, I) when they differ. */
interface RowGroup {
  method: string;
  label: string;
  cell?: ScheduleCell;
  all: RunSummary[];
}

function rowGroups(inDomain: readonly RunSummary[]): RowGroup[] {
  const methods = [...new Set(inDomain.map((r) => r.method))].sort(methodOrder);
  const bySeed = (a: RunSummary, b: RunSummary) => (a.seed ?? 0) - (b.seed ?? 0) || a.id.localeCompare(b.id);
  return methods.flatMap((method) => {
    const rs = inDomain.filter((r) => r.method === method).sort(bySeed);
    const cells = [...new Map(rs.map((r) => [cellKey(r.cell), r.cell])).values()].sort(cellOrder);
    if (cells.length <= 1) return [{ method, label: method, cell: cells[0], all: rs }];
    return cells.map((cell) => ({
      method,
      label: cell ? `${method} (${cellLabel(cell)})` : `${method} (no schedule)`,
      cell,
      all: rs.filter((r) => cellKey(r.cell) === cellKey(cell)),
    }));
  });
}

/**
 * One row per (domain, budget mode, method), aggregated over seeds, with rollouts-to-reach-weight-only's-peak.
 * A method whose runs there were configured with different (E, I) gets one row per (E, I) (labelled so):
 * seeds of different schedules are never averaged together.
 */
export function methodTable(runs: readonly RunSummary[]): MethodTable {
  const domains = [...new Set(runs.map((r) => r.domain))].sort();
  const rows: MethodRow[] = [];
  const summaries: DomainSummary[] = [];
  const pairs = domains.flatMap((domain) =>
    [...new Set(runs.filter((r) => r.domain === domain).map((r) => r.budgetMode))].sort().map((budgetMode) => ({ domain, budgetMode })),
  );
  for (const { domain, budgetMode } of pairs) {
    const inDomain = runs.filter((r) => r.domain === domain && r.budgetMode === budgetMode);
    const groups = rowGroups(inDomain).map((g) => {
      const { used, excluded } = reportable(g.all);
      return { ...g, used, excluded, curve: meanCurve(used.map((r) => r.curve)) };
    });
    // Several weight-only schedules: the highest of their peaks is the bar the others must reach.
    const weightOnly = groups.filter((g) => g.method === 'weight-only' && g.curve.length > 0);
    const peaks = weightOnly.map((g) => ({ peak: curvePeak(g.curve)!, curve: g.curve }));
    const top = peaks.reduce<(typeof peaks)[number] | undefined>((a, b) => (a === undefined || b.peak > a.peak ? b : a), undefined);
    const weightOnlyPeak = top?.peak;
    const reach = (curve: readonly MeanCurvePoint[]) =>
      weightOnlyPeak === undefined
        ? undefined
        : rolloutsToReach(
            curve.map((p) => ({ x: p.x, y: p.mean })),
            weightOnlyPeak,
          );
    const ks = [...new Set(inDomain.map((r) => r.k).filter((k): k is number => k !== undefined))];
    summaries.push({
      domain,
      budgetMode,
      methods: [...new Set(groups.map((g) => g.method))],
      weightOnlyPeak,
      weightOnlyPeakAt: top ? reach(top.curve) : undefined,
      k: ks.length === 1 ? ks[0] : undefined,
    });
    for (const g of groups) {
      const rs = g.used;
      const withBest = rs.filter((r) => r.best);
      const withTest = rs.filter((r) => r.test);
      const testKs = [...new Set(withTest.map((r) => r.test!.k))];
      const mk = [...new Set(rs.map((r) => r.k).filter((k): k is number => k !== undefined))];
      rows.push({
        domain,
        method: g.method,
        label: g.label,
        cell: g.cell,
        budgetMode,
        runs: rs.map((r) => r.id),
        n: rs.length,
        k: mk.length === 1 ? mk[0] : undefined,
        bestValidation: spread(withBest.map((r) => r.best!.mean)),
        test: spread(withTest.map((r) => r.test!.mean)),
        testK: testKs.length === 1 ? testKs[0] : undefined,
        rsftSteps: spread(rs.map((r) => r.training.length)),
        trainingRollouts: spread(rs.map((r) => r.ledger.trainingRollouts)),
        searchRollouts: spread(rs.map((r) => r.ledger.searchRollouts)),
        rollouts: spread(rs.map((r) => r.ledger.trainingRollouts + r.ledger.searchRollouts)),
        evalRollouts: spread(rs.map((r) => r.ledger.evalRollouts)),
        dollars: spread(rs.map((r) => r.ledger.proposerDollars)),
        cycles: spread(rs.map(cyclesRun)),
        wallMinutes: spread(rs.map((r) => r.ledger.wallMs / 60_000)),
        proposers: [...new Set(rs.flatMap((r) => r.proposers ?? []))].sort(),
        toReachWeightOnlyPeak: reach(g.curve),
        curve: g.curve,
        schedules: [...new Set(rs.map(scheduleLabel))],
        unfinished: rs.filter((r) => r.status !== 'completed').length,
        excluded: g.excluded.map((r) => r.id),
      });
    }
  }
  return { rows, domains: summaries };
}

/** One cell of an (E, I) grid: a fixed schedule's runs, over seeds. */
export interface GridCell extends ScheduleCell {
  runs: string[];
  n: number;
  unfinished: number;
  bestValidation: Spread;
  test: Spread;
  rollouts: Spread;
  cycles: Spread;
}

/** The (E, I) grid of one method on one (domain, budget mode): its cells sorted by E then I. */
export interface ScheduleGrid {
  domain: string;
  budgetMode: string;
  method: string;
  k: number | undefined;
  epochs: number[];
  iterations: number[];
  cells: GridCell[];
}

/**
 * The (E, I) grids: for each (domain, budget mode), the runs of `method` (a fixed-schedule method:
 * whale by default) grouped by their configured (E, I), when there are at least two cells. Each cell
 * aggregates its completed runs (its unfinished ones only when none has completed, counted).
 */
export function scheduleGrids(runs: readonly RunSummary[], method = 'whale'): ScheduleGrid[] {
  const mine = runs.filter((r) => r.method === method && r.cell !== undefined);
  const pairs = [...new Set(mine.map((r) => `${r.domain}\u0000${r.budgetMode}`))].sort();
  const grids: ScheduleGrid[] = [];
  for (const pair of pairs) {
    const [domain, budgetMode] = pair.split('\u0000');
    const rs = mine.filter((r) => r.domain === domain && r.budgetMode === budgetMode);
    const cells = [...new Map(rs.map((r) => [cellKey(r.cell), r.cell!])).values()].sort(cellOrder);
    if (cells.length < 2) continue;
    const ks = [...new Set(rs.map((r) => r.k).filter((k): k is number => k !== undefined))];
    grids.push({
      domain,
      budgetMode,
      method,
      k: ks.length === 1 ? ks[0] : undefined,
      epochs: [...new Set(cells.map((c) => c.epochs))].sort((a, b) => a - b),
      iterations: [...new Set(cells.map((c) => c.iterations))].sort((a, b) => a - b),
      cells: cells.map((cell) => {
        const { used } = reportable(rs.filter((r) => cellKey(r.cell) === cellKey(cell)));
        return {
          epochs: cell.epochs,
          iterations: cell.iterations,
          runs: used.map((r) => r.id),
          n: used.length,
          unfinished: used.filter((r) => r.status !== 'completed').length,
          bestValidation: spread(used.filter((r) => r.best).map((r) => r.best!.mean)),
          test: spread(used.filter((r) => r.test).map((r) => r.test!.mean)),
          rollouts: spread(used.map((r) => r.ledger.trainingRollouts + r.ledger.searchRollouts)),
          cycles: spread(used.map(cyclesRun)),
        };
      }),
    });
  }
  return grids;
}

/** Per run: where its own best-so-far curve first reaches its domain's weight-only peak. */
export function runToReach(run: RunSummary, table: MethodTable): number | undefined {
  const peak = table.domains.find((d) => d.domain === run.domain && d.budgetMode === run.budgetMode)?.weightOnlyPeak;
  if (peak === undefined) return undefined;
  return rolloutsToReach(
    run.curve.map((p) => ({ x: p.cumulativeRollouts, y: p.bestSoFar })),
    peak,
  );
}

const short = (h: string | undefined) => (h ? h.slice(0, 8) : '—');

/** "incumbent → archive best: accepted (why)" for a harness phase's acceptance. */
export function acceptanceText(a: AcceptanceInfo | undefined): string {
  if (!a) return '—';
  const notes: string[] = [];
  if (a.incumbent !== undefined && a.chosen === a.incumbent) notes.push('kept the incumbent');
  if (a.olderCandidate) notes.push('returned to an older candidate');
  if (a.changedChoice) notes.push(`paired rule overrode the archive best \`${short(a.archiveBest)}\``);
  else if (a.pairedUsed) notes.push('paired rule agreed');
  return `${a.rule}: \`${short(a.chosen)}\`${notes.length > 0 ? ` (${notes.join('; ')})` : ''}`;
}

/** "W(4) H W(4) H*": the run's phases in order. */
export function phaseSequence(r: RunSummary): string {
  if (r.phases.length === 0) return '—';
  return r.phases
    .map(
      (p) =>
        `${p.kind === 'weight' ? `W(${p.steps ?? 0})` : p.kind === 'harness' ? (p.iterations !== undefined ? `H(${p.iterations})` : 'H') : '?'}${p.completed ? '' : '*'}`,
    )
    .join(' ');
}
