/**
 * The weight phase: online rejection-sampling fine-tuning (RSFT), REFERENCE.md §1.
 *
 * A persistent sampler walks the weight split in seeded epoch permutations; step s takes the next
 * B tasks of that stream (`batchForStep`, a pure function of the global step, so a resumed run needs
 * no sampler state). One step (`runWeightStep`): with the CURRENT policy version θ_old — frozen for
 * the whole sampling, because every rollout pins the version current when it starts and nothing is
 * published until training ends — and under the current harness, G rollouts for each of the B tasks
 * through the same harness runtime the search uses, as one evaluation (k = G) over the batch (so the
 * rollouts are cached in the ResultStore, resumable per rollout and counted); keep the trajectories
 * the verifier passes (S⁺); train on the model-generated tokens of every model call in them
 * (`trajectoriesToExamples`); one pass, minibatches, a seeded order; publish the new version before
 * the next step samples.
 *
 * When no trajectory passes there is nothing to train on: no training happens, no new version, the
 * policy stays (the step still counts — its rollouts were paid for — and the sampler moves on).
 *
 * Idempotence (resume). A step is keyed by (versionBefore, the rollouts' evaluation key, the
 * hyper-parameters, the training seed). Its outcome is written to `<store>/rsft-steps/…/<key>.json`
 * after `publish`; a repeated call with the same key is answered from that record — the rollouts
 * are a cache hit anyway — and publishes the recorded version instead of training again, so the
 * step is idempotent on any backend, deterministic or not. The examples are built in a canonical
 * order (batch order, then sample index), not the order rollouts finished in. With the embedded
 * backend, training is also bit-exact: the same version, rollouts and seed give the same version id
 * (Adam moments are saved beside each version, so a fresh process continues them); measured: a
 * 3-step ramble run and the same run killed after step 1 and resumed in a new process produced the
 * same chain of version ids.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ResultStore } from '../archive/resultStore.js';
import { canonicalJson } from '../archive/resultStore.js';
import { writeJsonAtomic } from '../core/atomic.js';
import type { Sampling, SandboxLimits } from '../core/config.js';
import { Rng, hashSeed } from '../core/rng.js';
import { mean } from '../core/stats.js';
import { sha256 } from '../core/treeHash.js';
import type { Trajectory } from '../core/trajectory.js';
import type { Domain, Task } from '../domains/types.js';
import { RSFT_LOSSES, type PolicyBackend, type RsftLoss, type TrainExample } from '../policy/types.js';
import { evaluate, type RolloutRunner } from './evaluate.js';
import { trajectoriesToExamples, type TokenizerFallback } from './rsftExamples.js';

// ---------------------------------------------------------------------------------------------
// Hyper-parameters

export interface RsftHyper {
  /** Prompts per step (B). */
  batchSize: number;
  /** Rollouts per prompt (G). */
  groupSize: number;
  learningRate: number;
  /** Trajectories per optimizer step (the examples of one trajectory stay together). */
  minibatchSize: number;
  /** Minibatch normalisation of the NLL (default 'token-mean', as the public code). */
  loss?: RsftLoss;
}

/**
 * The paper's RSFT settings (REFERENCE.md §1): full-parameter training of a 2B model on GPUs. The
 * documented defaults for real (remote) backends.
 */
export const PAPER_RSFT_DEFAULTS: Readonly<RsftHyper> = Object.freeze({ batchSize: 256, groupSize: 8, learningRate: 1e-7, minibatchSize: 64 });

/**
 * The embedded default (the shipped 3-layer d128 word-level model, 2 CPU cores), chosen by experiment
 * with scripts/exp-rsft.ts on the final base model (7c040ffb6b24f212; its header has every number).
 * Held-out val, 128 tasks × 4 samples, paired difference ± se:
 *   ramble-h0, 3 steps:  lr 3e-5 +7.6 ± 1.4 (truncation 56.6% → 40.0%) · 1e-4 +25.4 ± 2.6 (→ 7.0%)
 *                        3e-4 +26.6 ± 3.3 (→ 0%) · 1e-3 +17.2 ± 3.7 (mb 8) / +23.6 ± 3.4 (mb 32) (→ 0%)
 *   kbqa-good, 2 steps (base 71.7%): 3e-5 +1.8 ± 1.2 · 1e-4 −0.6 ± 2.0 · 3e-4 −8.8 ± 3.1 · 1e-3 −15.6 ± 3.6
 * lr 1e-4 is the largest rate that moves ramble fully without damaging kbqa: Adam's first updates
 * are ≈ lr·sign(g) on every parameter, which at 3e-4–1e-3 perturbs a model this small enough to cost
 * the harness-dominated domain its skill (the paper's 1e-7 does nothing here). Minibatch 8 gives
 * 5–25 optimizer steps per RSFT step (40–190 accepted examples), about what B 256 × G 8 at
 * minibatch 64 gives in the paper. B 32 × G 8 = 256 rollouts a step ≈ 10–20 s of sampling plus
 * ≈ 1–8 s of training here; an epoch of the default 4096-task weight split is 128 steps (shrink the
 * split or use a fractional E for a demo). G = 8 needs diversity inside a group: at temperature 0
 * (greedy) the G samples are one sample G times and RSFT degenerates to self-distillation of the
 * greedy reply — which is why sampling is the run config's (`sampling`, temperature 1 by default),
 * enforced by the gateway, and never a harness knob.
 */
export const EMBEDDED_RSFT_DEFAULTS: Readonly<RsftHyper> = Object.freeze({ batchSize: 32, groupSize: 8, learningRate: 1e-4, minibatchSize: 8 });

export function validateRsftHyper(h: RsftHyper): void {
  const posInt = (name: string, v: number) => {
    if (!(Number.isInteger(v) && v >= 1)) throw new RangeError(`RSFT ${name} must be a positive integer, got ${v}`);
  };
  posInt('batchSize', h.batchSize);
  posInt('groupSize', h.groupSize);
  posInt('minibatchSize', h.minibatchSize);
  if (!(Number.isFinite(h.learningRate) && h.learningRate > 0)) throw new RangeError(`RSFT learningRate must be > 0, got ${h.learningRate}`);
  if (h.loss !== undefined && !RSFT_LOSSES.includes(h.loss)) throw new RangeError(`RSFT loss must be one of ${RSFT_LOSSES.join(', ')}, got ${String(h.loss)}`);
}

// ---------------------------------------------------------------------------------------------
// The persistent sampler

/**
 * Steps a phase of E epochs takes: ceil(E·N/B). Rounded UP, so a phase never sees less than E
 * epochs of prompts (0.6 epoch of 4096 at B 256 = 9.6 → 10 steps; 1.0 epoch = 16). A tolerance of
 * 1e-9 keeps floating error from adding a step (1.0·4096/256 is 16, not 17). A run of several phases
 * that should add up to a whole number of epochs may overshoot by up to one step per phase; a
 * schedule that wants no drift can end each phase at ceil(cumulativeEpochs·N/B) instead.
 */
export function stepsForEpochs(epochs: number, splitSize: number, batchSize: number): number {
  if (!(Number.isFinite(epochs) && epochs > 0)) throw new RangeError(`epochs must be > 0, got ${epochs}`);
  if (!(Number.isInteger(splitSize) && splitSize >= 1)) throw new RangeError(`the weight split must have at least one task, got ${splitSize}`);
  if (!(Number.isInteger(batchSize) && batchSize >= 1)) throw new RangeError(`batchSize must be a positive integer, got ${batchSize}`);
  return Math.max(1, Math.ceil((epochs * splitSize) / batchSize - 1e-9));
}

/** Epochs of the stream that `steps` steps of B cover (for the ledger and adaptive schedules). */
export function epochsForSteps(steps: number, splitSize: number, batchSize: number): number {
  return (steps * batchSize) / splitSize;
}

/** The seed of the sampler's stream, from the run seed. */
export function samplerSeed(runSeed: number): number {
  return hashSeed(`whale:rsft:sampler:${runSeed}`);
}

/** The rollout and training seed of one global step. */
export function stepSeed(runSeed: number, globalStep: number): number {
  return hashSeed(`whale:rsft:step:${runSeed}:${globalStep}`);
}

const permCache = new Map<string, number[][]>();

/**
 * The stream's permutation of epoch `epoch` (indices into the split). Epoch permutations are seeded
 * shuffles; so that a batch that straddles an epoch boundary never holds a task twice, the indices
 * of the new epoch's head that already occur in the old epoch's tail inside that batch are moved
 * just past the batch. Each epoch still visits every task exactly once. Needs B ≤ N.
 */
export function epochPermutation(n: number, batchSize: number, epoch: number, seed: number): number[] {
  const key = `${n}:${batchSize}:${seed}`;
  let perms = permCache.get(key);
  if (!perms) {
    perms = [];
    if (permCache.size > 16) permCache.clear();
    permCache.set(key, perms);
  }
  while (perms.length <= epoch) {
    const e = perms.length;
    const p = new Rng(hashSeed(`whale:rsft:epoch:${seed}:${e}`)).shuffle([...Array(n).keys()]);
    if (e > 0) {
      // The batch that straddles the boundary starts r positions before the end of the previous epoch.
      const r = (e * n) % batchSize;
      const head = batchSize - r;
      if (r > 0) {
        const prev = perms[e - 1];
        const tail = new Set(prev.slice(n - r));
        // Move each head index that repeats the tail to the first position ≥ head holding a fresh one.
        let j = head;
        for (let i = 0; i < head; i++) {
          if (!tail.has(p[i])) continue;
          while (j < n && tail.has(p[j])) j++;
          if (j >= n) break; // cannot happen when B ≤ N
          [p[i], p[j]] = [p[j], p[i]];
          j++;
        }
      }
    }
    perms.push(p);
  }
  return perms[epoch];
}

/**
 * The tasks of global step `globalStep`: positions [s·B, (s+1)·B) of the stream of epoch
 * permutations, crossing epoch boundaries. Pure: the same (tasks, B, step, seed) always give the same
 * batch, with no task twice in it. B must not exceed the split.
 */
export function batchForStep<T>(tasks: readonly T[], batchSize: number, globalStep: number, seed: number): T[] {
  const n = tasks.length;
  if (n === 0) throw new RangeError('the weight split is empty');
  if (!(Number.isInteger(batchSize) && batchSize >= 1)) throw new RangeError(`batchSize must be a positive integer, got ${batchSize}`);
  if (batchSize > n) throw new RangeError(`batchSize ${batchSize} is larger than the weight split (${n} tasks); a batch holds each task at most once`);
  if (!(Number.isInteger(globalStep) && globalStep >= 0)) throw new RangeError(`globalStep must be a non-negative integer, got ${globalStep}`);
  const out: T[] = [];
  const start = globalStep * batchSize;
  for (let i = start; i < start + batchSize; i++) {
    const epoch = Math.floor(i / n);
    out.push(tasks[epochPermutation(n, batchSize, epoch, seed)[i % n]]);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// One step

export interface WeightStepContext<P extends { treeHash: string }> {
  backend: PolicyBackend;
  /** The harness runtime (the same one the search uses). */
  runner: RolloutRunner<P>;
  store: ResultStore;
  domain: Domain;
  /** The current harness h_k. */
  harnessDir: string;
  /** The weight split D_weight; default `domain.tasks('weight')`. */
  tasks?: Task[];
  globalStep: number;
  runSeed: number;
  hyper: RsftHyper;
  /** The run's sampling (temperature, top_p enforced by the gateway; max_tokens where the harness gives none). */
  sampling: Sampling;
  limits: SandboxLimits;
  /** Rollouts in flight. */
  concurrency: number;
  /** Re-tokenises calls without token ids (see rsftExamples.ts); without it such a call is an error. */
  fallback?: TokenizerFallback;
  runId?: string;
  phase?: string;
  signal?: AbortSignal;
  onRollouts?: (done: number, total: number) => void;
  onTrainStep?: (step: number, loss: number) => void;
}

export interface WeightStepMetrics {
  globalStep: number;
  /** Prompts in the batch (B). */
  tasks: number;
  /** Rollouts of the step (B·G), and how many were run now (the rest came from the store). */
  rollouts: number;
  newRollouts: number;
  /** |S⁺| and |S⁺| / rollouts. */
  accepted: number;
  acceptedFraction: number;
  /** Mean verifier pass over all rollouts (= mean@G over the batch). */
  meanReward: number;
  /** Fraction of rollouts with a 'length' finish on any model call. */
  truncationRate: number;
  /** Examples trained on, optimizer steps, trained tokens, mean minibatch loss (NaN when none). */
  examples: number;
  optimizerSteps: number;
  trainedTokens: number;
  meanLoss: number;
  losses: number[];
  versionBefore: string;
  /** = versionBefore when nothing passed. */
  versionAfter: string;
  trained: boolean;
  /** True when the step's outcome came from its record (a resumed or repeated step: nothing trained). */
  fromRecord: boolean;
  /** The rollouts' evaluation key (their trajectories live under it in the ResultStore). */
  evalKeyHash: string;
  seed: number;
  wallMs: number;
  rolloutMs: number;
  trainMs: number;
}

/** True when a trajectory had a model call cut at its token limit. */
export function truncated(t: Trajectory): boolean {
  return t.modelCalls.some((c) => c.finishReason === 'length');
}

/**
 * The training examples of a step: the accepted trajectories (verifier pass) in a canonical order —
 * the batch's task order, then sample index — not the order the rollouts finished in (which depends
 * on concurrency), so the same rollouts always give the same examples in the same order, and with
 * the same seed the same minibatches.
 */
export function stepExamples(trajectories: readonly Trajectory[], batch: readonly Task[], fallback?: TokenizerFallback): TrainExample[] {
  const pos = new Map(batch.map((t, i) => [t.id, i]));
  const at = (t: Trajectory) => pos.get(t.taskId) ?? Number.MAX_SAFE_INTEGER;
  const accepted = trajectories.filter(trainable).sort((a, b) => at(a) - at(b) || a.sampleIndex - b.sampleIndex || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return trajectoriesToExamples(accepted, { fallback }).examples;
}

/** S⁺: passed by the verifier, and a verdict at all (an infrastructure failure never is, whatever it says). */
function trainable(t: Trajectory): boolean {
  return t.verdict.pass && t.termination !== 'infra_error';
}

function recordFile(store: ResultStore, key: string): string {
  return join(store.root, 'rsft-steps', key.slice(0, 2), `${key}.json`);
}

/** One online RSFT step (see the file comment). Publishes the new version before returning. */
export async function runWeightStep<P extends { treeHash: string }>(ctx: WeightStepContext<P>): Promise<WeightStepMetrics> {
  const t0 = performance.now();
  validateRsftHyper(ctx.hyper);
  const { backend, hyper } = ctx;
  const split = ctx.tasks ?? ctx.domain.tasks('weight');
  const batch = batchForStep(split, hyper.batchSize, ctx.globalStep, samplerSeed(ctx.runSeed));
  const seed = stepSeed(ctx.runSeed, ctx.globalStep);
  const versionBefore = backend.currentVersion();

  const ev = await evaluate({
    store: ctx.store,
    runner: ctx.runner,
    domain: ctx.domain,
    harnessDir: ctx.harnessDir,
    policyVersion: versionBefore,
    split: 'weight',
    k: hyper.groupSize,
    seed,
    sampling: ctx.sampling,
    limits: ctx.limits,
    concurrency: ctx.concurrency,
    tasks: batch,
    runId: ctx.runId,
    phase: ctx.phase,
    signal: ctx.signal,
    onProgress: ctx.onRollouts,
  });
  const rolloutMs = performance.now() - t0;
  const trajectories = ctx.store.loadTrajectories(ev.summary.keyHash);
  const stale = trajectories.find((t) => t.policyVersion !== versionBefore);
  if (stale)
    throw new Error(
      `RSFT step ${ctx.globalStep}: rollout ${stale.id} ran under policy ${stale.policyVersion}, not the frozen ${versionBefore} (was a version published during sampling?)`,
    );
  const accepted = trajectories.filter(trainable);
  const base = {
    globalStep: ctx.globalStep,
    tasks: batch.length,
    rollouts: trajectories.length,
    newRollouts: ev.newRollouts,
    accepted: accepted.length,
    acceptedFraction: trajectories.length ? accepted.length / trajectories.length : 0,
    meanReward: trajectories.length ? mean(trajectories.map((t) => (t.verdict.pass ? 1 : 0))) : 0,
    truncationRate: trajectories.length ? trajectories.filter(truncated).length / trajectories.length : 0,
    versionBefore,
    evalKeyHash: ev.summary.keyHash,
    seed,
    rolloutMs,
  };

  const train = { learningRate: hyper.learningRate, minibatchSize: hyper.minibatchSize, epochs: 1, seed, loss: hyper.loss ?? 'token-mean' };
  const key = sha256(canonicalJson({ v: 1, versionBefore, evalKeyHash: ev.summary.keyHash, train })).slice(0, 24);
  const file = recordFile(ctx.store, key);
  if (existsSync(file)) {
    const rec = JSON.parse(readFileSync(file, 'utf8')) as { metrics: WeightStepMetrics & { meanLoss: number | null } };
    rec.metrics.meanLoss ??= NaN;
    let ok = true;
    try {
      if (rec.metrics.versionAfter !== backend.currentVersion()) await backend.publish(rec.metrics.versionAfter);
    } catch {
      ok = false; // the recorded version is gone (another store?): train again
    }
    if (ok) return { ...rec.metrics, ...base, fromRecord: true, wallMs: performance.now() - t0, trainMs: 0 };
  }

  const examples = stepExamples(trajectories, batch, ctx.fallback);
  let metrics: WeightStepMetrics;
  if (examples.length === 0) {
    metrics = {
      ...base,
      examples: 0,
      optimizerSteps: 0,
      trainedTokens: 0,
      meanLoss: NaN,
      losses: [],
      versionAfter: versionBefore,
      trained: false,
      fromRecord: false,
      wallMs: 0,
      trainMs: 0,
    };
  } else {
    const t1 = performance.now();
    const r = await backend.train(examples, train, { signal: ctx.signal, onStep: ctx.onTrainStep });
    await backend.publish(r.version);
    metrics = {
      ...base,
      examples: examples.length,
      optimizerSteps: r.optimizerSteps,
      trainedTokens: r.trainedTokens,
      meanLoss: r.losses.length ? mean(r.losses) : NaN,
      losses: r.losses,
      versionAfter: r.version,
      trained: true,
      fromRecord: false,
      wallMs: 0,
      trainMs: performance.now() - t1,
    };
  }
  metrics.wallMs = performance.now() - t0;
  writeJsonAtomic(file, { key, metrics: { ...metrics, meanLoss: Number.isNaN(metrics.meanLoss) ? null : metrics.meanLoss } });
  return metrics;
}
