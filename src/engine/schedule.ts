import type { BudgetMode, Method, ScheduleConfig, RsftConfig, SearchConfig, BudgetConfig } from '../core/config.js';
import { InputError } from '../core/errors.js';
import { mean } from '../core/stats.js';
import { epochsForSteps, stepsForEpochs } from './weightPhase.js';

export type PhaseKind = 'weight' | 'harness';

/** What one phase is to do. Weight phases count optimizer steps; harness phases count iterations (the seed evaluation is iteration 1). */
export interface PhasePlan {
  index: number;
  cycle: number;
  kind: PhaseKind;
  /** Search space of a harness phase: whole programs, or the declared prompt strings only (FST). */
  mode: 'full' | 'fst';
  /** Weight phase: the step count, or for adaptive phases the bounds within which the rule decides (max may be Infinity). */
  steps?: { min: number; max: number };
  /** Adaptive weight phase: W and P_w converted from epochs to steps. */
  rule?: { window: number; patience: number };
  /** Epochs of the weight split one step covers (B / N), to report phases in the paper's unit. */
  epochsPerStep?: number;
  /** Harness phase: iterations including the seed evaluation (adaptive: min and max). */
  iterations?: { min: number; max: number };
  adaptive: boolean;
}

export { stepsForEpochs };

/**
 * The phase sequence of each method. Every method shares the same phase code; they differ only in
 * which phases run, how long, and the harness search space:
 * - whale: weight (E) then harness (I), for `cycles` cycles;  fst: the same with a prompt-only search;
 *   `start: 'harness'` swaps the order within every cycle of the alternating methods and stagewise;
 * - adaptive: alternating, each phase ended by the adaptive rules (training signals only);
 * - stagewise: one weight phase of E* then one harness phase of I* (default: WHALE's totals);
 * - weight-only / harness-only: `2 × cycles` phases of one kind (matched phase count; a budget
 *   cuts any method short). Under `budget.mode: 'matched-steps'` weight-only runs `cycles` weight
 *   phases instead: WHALE's number of RSFT steps (matchedSteps), as in the paper.
 */
export function phasePlan(
  method: Method,
  s: ScheduleConfig,
  index: number,
  weightTasks: number,
  batchPrompts: number,
  budgetMode: BudgetMode = 'equal-total',
): PhasePlan | null {
  const fixedW = stepsForEpochs(s.epochs, weightTasks, batchPrompts);
  const epochsPerStep = epochsForSteps(1, weightTasks, batchPrompts);
  const weight = (cycle: number, steps: number): PhasePlan => ({
    index,
    cycle,
    kind: 'weight',
    mode: 'full',
    steps: { min: steps, max: steps },
    adaptive: false,
    epochsPerStep,
  });
  const harness = (cycle: number, iters: number, mode: 'full' | 'fst' = 'full'): PhasePlan => ({
    index,
    cycle,
    kind: 'harness',
    mode,
    iterations: { min: iters, max: iters },
    adaptive: false,
  });
  const cycle = Math.floor(index / 2);
  // Which phase of a cycle trains: the first unless the schedule starts with a search.
  const weightAt = s.start === 'harness' ? 1 : 0;
  switch (method) {
    case 'whale':
    case 'fst':
      if (index >= 2 * s.cycles) return null;
      return index % 2 === weightAt ? weight(cycle, fixedW) : harness(cycle, s.iterations, method === 'fst' ? 'fst' : 'full');
    case 'adaptive': {
      if (index >= 2 * s.cycles) return null;
      const a = s.adaptive;
      if (index % 2 === weightAt) {
        // T_min, W and P_w are in epochs as in the paper; no cap unless maxEpochs is set (the budget ends the run).
        const steps = (epochs: number) => stepsForEpochs(epochs, weightTasks, batchPrompts);
        const max = a.maxEpochs === undefined ? Number.POSITIVE_INFINITY : steps(a.maxEpochs);
        return {
          index,
          cycle,
          kind: 'weight',
          mode: 'full',
          adaptive: true,
          steps: { min: steps(a.minEpochs), max },
          rule: { window: steps(a.windowEpochs), patience: steps(a.patienceEpochs) },
          epochsPerStep,
        };
      }
      return { index, cycle, kind: 'harness', mode: 'full', adaptive: true, iterations: { min: a.minIterations, max: a.maxIterations } };
    }
    case 'stagewise': {
      const st = stagewiseSchedule(s);
      if (index > 1) return null;
      if (index === weightAt)
        return weight(0, s.stagewise.epochs === undefined ? matchedSteps(s, weightTasks, batchPrompts) : stepsForEpochs(st.epochs, weightTasks, batchPrompts));
      return harness(0, st.iterations);
    }
    case 'weight-only':
      return index < (budgetMode === 'matched-steps' ? 1 : 2) * s.cycles ? weight(index, fixedW) : null;
    case 'harness-only':
      return index < 2 * s.cycles ? harness(index, s.iterations) : null;
  }
}

/** WHALE's number of RSFT steps under the fixed schedule: cycles × the steps of E (what 'matched-steps' gives every method). */
export function matchedSteps(s: ScheduleConfig, weightTasks: number, batchPrompts: number): number {
  return s.cycles * stepsForEpochs(s.epochs, weightTasks, batchPrompts);
}

/** Stagewise's (E*, I*): as configured, else WHALE's totals (cycles × E, and the same proposal rounds as cycles × (I − 1)). */
export function stagewiseSchedule(s: ScheduleConfig): { epochs: number; iterations: number } {
  return { epochs: s.stagewise.epochs ?? s.cycles * s.epochs, iterations: s.stagewise.iterations ?? 1 + s.cycles * (s.iterations - 1) };
}

/**
 * Adaptive weight rule: after at least `min` steps, stop when the sliding-window mean of the
 * training reward (window W) has not reached a new high for P_w steps; always stop at `max`.
 */
export function weightPhaseShouldStop(rewards: readonly number[], o: { min: number; max: number; window: number; patience: number }): boolean {
  const n = rewards.length;
  if (n >= o.max) return true;
  if (n < o.min) return false;
  let best = -Infinity;
  let bestAt = -1;
  for (let t = 0; t < n; t++) {
    const w = mean(rewards.slice(Math.max(0, t - o.window + 1), t + 1));
    if (w > best) {
      best = w;
      bestAt = t;
    }
  }
  return n - 1 - bestAt >= o.patience;
}

/**
 * Adaptive harness rule: run at least J_min iterations (the seed evaluation counts as the first);
 * stop when the archive's best training score has not improved for P_h iterations; stop at `max`.
 * `bestAfter[i]` is the archive's best score after iteration i.
 */
export function harnessPhaseShouldStop(bestAfter: readonly number[], o: { min: number; max: number; patience: number }): boolean {
  const n = bestAfter.length;
  if (n >= o.max) return true;
  if (n < o.min) return false;
  let lastImprovement = 0;
  for (let i = 1; i < n; i++) if (bestAfter[i] > bestAfter[lastImprovement]) lastImprovement = i;
  return n - 1 - lastImprovement >= o.patience;
}

/** Rollouts the first phase of a method needs at least (for refusing a budget that cannot buy one). */
export function firstPhaseCost(plan: PhasePlan, rsft: RsftConfig, search: SearchConfig, harnessTasks: number): { rollouts: number; arithmetic: string } {
  if (plan.kind === 'weight') {
    const steps = plan.steps!.min;
    return {
      rollouts: steps * rsft.batchPrompts * rsft.groupSize,
      arithmetic: `${steps} steps × B ${rsft.batchPrompts} prompts × G ${rsft.groupSize} samples = ${steps * rsft.batchPrompts * rsft.groupSize} rollouts`,
    };
  }
  const iters = plan.iterations!.min;
  const m = search.candidatesPerRound;
  const r = harnessTasks * (1 + (iters - 1) * m);
  return { rollouts: r, arithmetic: `${harnessTasks} harness tasks × (1 seed + ${iters - 1} rounds × M ${m} candidates) = ${r} rollouts` };
}

/** Refuses a schedule that cannot run, before anything is spent, showing the arithmetic. */
export function checkSchedule(
  method: Method,
  s: ScheduleConfig,
  rsft: RsftConfig,
  search: SearchConfig,
  budget: BudgetConfig,
  sizes: { weight: number; harness: number },
  file: string,
): void {
  const bad = (field: string, detail: string) => new InputError({ file, field }, detail);
  const errors: InputError[] = [];
  if (!(s.epochs > 0)) errors.push(bad('schedule.epochs', `E must be > 0, got ${s.epochs}`));
  if (!(s.iterations >= 1)) errors.push(bad('schedule.iterations', `I must be ≥ 1 (it counts the seed evaluation), got ${s.iterations}`));
  if (s.stagewise.epochs !== undefined && !(s.stagewise.epochs > 0)) errors.push(bad('schedule.stagewise.epochs', `E* must be > 0, got ${s.stagewise.epochs}`));
  if (s.stagewise.iterations !== undefined && !(s.stagewise.iterations >= 1))
    errors.push(bad('schedule.stagewise.iterations', `I* must be ≥ 1, got ${s.stagewise.iterations}`));
  if (s.adaptive.maxEpochs !== undefined && s.adaptive.minEpochs > s.adaptive.maxEpochs)
    errors.push(bad('schedule.adaptive.minEpochs', `T_min ${s.adaptive.minEpochs} exceeds maxEpochs ${s.adaptive.maxEpochs}`));
  if (s.adaptive.minIterations > s.adaptive.maxIterations)
    errors.push(bad('schedule.adaptive.minIterations', `J_min ${s.adaptive.minIterations} exceeds maxIterations ${s.adaptive.maxIterations}`));
  // A weight step's batch holds each task at most once (weightPhase.ts batchForStep).
  if (method !== 'harness-only' && rsft.batchPrompts > sizes.weight)
    errors.push(
      bad('rsft.batchPrompts', `B ${rsft.batchPrompts} is larger than the weight split (${sizes.weight} tasks); a batch holds each task at most once`),
    );
  if (errors.length) throw InputError.combine(errors);
  const first = phasePlan(method, s, 0, sizes.weight, rsft.batchPrompts, budget.mode);
  // Under 'matched-steps' the rollout budget caps training only: search is never refused by it.
  if (first && budget.rollouts !== undefined && !(budget.mode === 'matched-steps' && first.kind === 'harness')) {
    const cost = firstPhaseCost(first, rsft, search, sizes.harness);
    if (cost.rollouts > budget.rollouts) {
      throw bad('budget.rollouts', `a budget of ${budget.rollouts} rollouts cannot buy one ${first.kind} phase: ${cost.arithmetic}`);
    }
  }
}
