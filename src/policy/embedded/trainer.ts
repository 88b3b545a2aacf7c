/**
 * Training for the embedded model: RSFT steps and pretraining share one code path — a weighted
 * next-token NLL over packed sequences, AdamW, gradient accumulation over microbatches.
 *
 * The RSFT objective, with the trained completion tokens I(τ) of a trajectory τ (lossMask = 1, over
 * all the examples of τ: a trajectory whose calls could not merge gives several, one `group`), in
 * one of two normalisations (`TrainHyper.loss`):
 *   'token-mean' (default; the public WHALE code's dp_actor.update_sft_policy): a minibatch's loss is
 *     −Σ_τ Σ_{t∈I(τ)} log p_θ(τ_t | τ_<t) / Σ_τ |I(τ)| — every accepted token weighs the same;
 *   'sequence-mean' (the paper's formula): the mean over the minibatch's M trajectories of
 *     (1/|I(τ)|) Σ_{t∈I(τ)} −log p_θ(τ_t | τ_<t) — every trajectory weighs the same.
 * Minibatches are cut by trajectory (a group never straddles two). Prompt tokens and masked
 * completion tokens (tool output) get weight 0 and contribute nothing to the loss or the gradient; a
 * trajectory with no trained token is skipped (it would otherwise dilute the mean with a zero).
 * Implemented as per-token weights (1/N_tokens, or 1/(|I(τ)|·M)) summed, so microbatching changes nothing.
 *
 * Pretraining: next-token loss on every token after the first (`<bos>`), optionally weighted per
 * token, as a token mean over the minibatch: Σ wₜ·nllₜ / Σ wₜ.
 *
 * Sequences longer than the context keep their first token and their last contextLength−1 tokens
 * (the same sequence the sampler would refuse to extend); targets cut off are not trained.
 */
import { Rng } from '../../core/rng.js';
import type { ChatMessage } from '../../core/trajectory.js';
import type { RsftLoss, TrainExample } from '../types.js';
import type { TransformerModel } from './model.js';
import { weightedNll } from './ops.js';
import { tf, type Tensor, type Variable } from './tf.js';
import type { WordTokenizer } from './tokenizer.js';

export interface AdamOptions {
  beta1: number;
  beta2: number;
  eps: number;
  /** Decoupled (AdamW) weight decay, applied to matrices only (not LayerNorm gains and biases). */
  weightDecay: number;
}

export const DEFAULT_ADAM: AdamOptions = { beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0 };

export interface TrainerOptions {
  learningRate: number;
  adam?: Partial<AdamOptions>;
  /** Clip the global gradient norm to this (default 1.0, as verl does); null = no clipping. */
  clipNorm?: number | null;
  /** Padded tokens per forward/backward pass at most (default 4096); larger minibatches accumulate. */
  microbatchTokens?: number;
}

/** A sequence with a loss weight per target: `weights[t]` scales the loss of predicting tokens[t] from tokens[<t]. */
export interface WeightedSequence {
  tokens: ArrayLike<number>;
  weights: ArrayLike<number>;
}

export interface StepResult {
  /** The weighted NLL (with RSFT/pretraining normalisation, the token-normalised NLL). */
  loss: number;
  /** Targets with non-zero weight. */
  tokens: number;
  /** Global gradient norm before clipping. */
  gradNorm: number;
}

/** Adam moments by parameter name, carried from one Trainer to the next (so RSFT steps keep momentum). */
export interface AdamState {
  step: number;
  m: Map<string, Variable>;
  v: Map<string, Variable>;
}

export class Trainer {
  readonly model: TransformerModel;
  learningRate: number;
  readonly adam: AdamOptions;
  readonly clipNorm: number | null;
  readonly microbatchTokens: number;
  private state: AdamState;

  constructor(model: TransformerModel, opts: TrainerOptions, state?: AdamState) {
    this.model = model;
    this.learningRate = opts.learningRate;
    this.adam = { ...DEFAULT_ADAM, ...opts.adam };
    this.clipNorm = opts.clipNorm === undefined ? 1 : opts.clipNorm;
    this.microbatchTokens = opts.microbatchTokens ?? 4096;
    if (!(this.learningRate >= 0)) throw new RangeError(`learning rate must be ≥ 0, got ${opts.learningRate}`);
    const t = tf();
    this.state = state ?? { step: 0, m: new Map(), v: new Map() };
    for (const s of model.specs) {
      if (!this.state.m.has(s.name)) this.state.m.set(s.name, t.variable(t.zeros(s.shape), false));
      if (!this.state.v.has(s.name)) this.state.v.set(s.name, t.variable(t.zeros(s.shape), false));
    }
  }

  get optimizerSteps(): number {
    return this.state.step;
  }

  /** Hands the Adam moments over (to a Trainer on the next version); this Trainer must not be used after. */
  takeState(): AdamState {
    const s = this.state;
    this.state = { step: 0, m: new Map(), v: new Map() };
    return s;
  }

  dispose(): void {
    for (const x of [...this.state.m.values(), ...this.state.v.values()]) x.dispose();
    this.state.m.clear();
    this.state.v.clear();
  }

  /** One RSFT optimizer step on a minibatch of examples (see the file comment for the loss). */
  rsftStep(examples: readonly TrainExample[], loss: RsftLoss = 'token-mean'): StepResult {
    return this.step(rsftSequences(examples, this.model.config.vocabSize, loss));
  }

  /**
   * One pretraining step: next-token loss on all tokens after the first of each sequence, token mean
   * over the minibatch. `weights[i][t]` (optional; 1 by default) weights the target tokens[i][t].
   */
  pretrainStep(sequences: readonly ArrayLike<number>[], weights?: readonly ArrayLike<number>[]): StepResult {
    return this.step(pretrainSequences(sequences, weights));
  }

  /** One optimizer step on weighted sequences (the weights are used as given, not renormalised). */
  step(seqs: readonly WeightedSequence[]): StepResult {
    const { loss, tokens, grads } = computeGradients(this.model, seqs, this.microbatchTokens);
    const gradNorm = this.applyAdam(grads);
    for (const g of grads.values()) g.dispose();
    return { loss, tokens, gradNorm };
  }

  /**
   * One Adam step on gradients accumulated elsewhere (Tinker's forward_backward … optim_step), with
   * the step's own settings; returns the global gradient norm before clipping. The caller keeps
   * ownership of `grads`.
   */
  applyGradients(grads: Map<string, Tensor>, settings: { learningRate: number } & Partial<AdamOptions>): number {
    this.learningRate = settings.learningRate;
    for (const k of ['beta1', 'beta2', 'eps', 'weightDecay'] as const) if (settings[k] !== undefined) this.adam[k] = settings[k];
    return this.applyAdam(grads);
  }

  private applyAdam(grads: Map<string, Tensor>): number {
    const t = tf();
    if (grads.size === 0) return 0;
    let sq = 0;
    t.tidy(() => {
      sq = t.addN([...grads.values()].map((g) => t.sum(t.square(g)))).dataSync()[0];
    });
    const norm = Math.sqrt(sq);
    const clip = this.clipNorm !== null && norm > this.clipNorm ? this.clipNorm / norm : 1;
    const { beta1, beta2, eps, weightDecay } = this.adam;
    const step = ++this.state.step;
    const lr = this.learningRate;
    const c1 = 1 - beta1 ** step;
    const c2 = 1 - beta2 ** step;
    t.tidy(() => {
      for (const [name, g0] of grads) {
        const p = this.model.p(name);
        const m = this.state.m.get(name)!;
        const v = this.state.v.get(name)!;
        const g = clip === 1 ? g0 : t.mul(g0, clip);
        const m2 = t.add(t.mul(m, beta1), t.mul(g, 1 - beta1));
        const v2 = t.add(t.mul(v, beta2), t.mul(t.square(g), 1 - beta2));
        let upd = t.div(t.div(m2, c1), t.add(t.sqrt(t.div(v2, c2)), eps));
        if (weightDecay > 0 && p.rank >= 2) upd = t.add(upd, t.mul(p, weightDecay));
        m.assign(m2);
        v.assign(v2);
        p.assign(t.sub(p, t.mul(upd, lr)));
      }
    });
    return norm;
  }
}

/**
 * Σ wₜ·nllₜ over `seqs` and its gradient by parameter name (the caller disposes the tensors),
 * accumulated over microbatches of at most `microbatchTokens` padded tokens. Parameters that do not
 * affect the loss (e.g. all weights are zero) get no entry.
 */
export function computeGradients(
  model: TransformerModel,
  seqs: readonly WeightedSequence[],
  microbatchTokens = 4096,
): { loss: number; tokens: number; grads: Map<string, Tensor> } {
  const t = tf();
  const C = model.config.contextLength;
  const V = model.config.vocabSize;
  const prepared = seqs.map((s) => fitContext(s, C)).filter((s) => s.tokens.length >= 2 && hasWeight(s));
  for (const s of prepared) {
    for (let i = 0; i < s.tokens.length; i++) {
      const id = s.tokens[i];
      if (!(Number.isInteger(id) && id >= 0 && id < V)) throw new Error(`token id ${id} is outside the vocabulary (size ${V})`);
    }
  }
  const names = model.specs.map((s) => s.name);
  const vars = model.variables();
  let loss = 0;
  let tokens = 0;
  const acc = new Map<string, Tensor>();
  // Shortest first so each microbatch pads little.
  prepared.sort((a, b) => a.tokens.length - b.tokens.length);
  for (const mb of microbatches(prepared, microbatchTokens)) {
    const packed = pack(mb);
    tokens += packed.rows.length;
    const { value, grads } = t.variableGrads(() => {
      const h = model.hidden(packed.ids, packed.B, packed.T);
      return weightedNll(model.logitsAt(h, packed.rows), packed.targets, packed.weights) as never;
    }, vars);
    loss += value.dataSync()[0];
    value.dispose();
    for (let i = 0; i < vars.length; i++) {
      const g = grads[vars[i].name];
      if (!g) continue;
      const prev = acc.get(names[i]);
      if (prev) {
        acc.set(names[i], t.add(prev, g));
        prev.dispose();
        g.dispose();
      } else acc.set(names[i], g);
    }
  }
  return { loss, tokens, grads: acc };
}

/**
 * RSFT examples → weighted sequences with the loss's per-token weights (rsftTokenWeights).
 * Checks each example and names the bad one.
 */
export function rsftSequences(examples: readonly TrainExample[], vocabSize: number, loss: RsftLoss = 'token-mean'): WeightedSequence[] {
  const trained = examples.map((e, i) => {
    const where = `training example ${i}`;
    if (e.lossMask.length !== e.completionTokenIds.length) {
      throw new Error(`${where}: lossMask has ${e.lossMask.length} entries for ${e.completionTokenIds.length} completion tokens`);
    }
    if (e.promptTokenIds.length === 0) throw new Error(`${where}: empty prompt (it should start with <bos>)`);
    for (const id of [...e.promptTokenIds, ...e.completionTokenIds]) {
      if (!Number.isInteger(id) || id < 0 || id >= vocabSize) throw new Error(`${where}: token id ${id} is outside the vocabulary (size ${vocabSize})`);
    }
    return e.lossMask.reduce((n, w) => n + (w ? 1 : 0), 0);
  });
  const perToken = rsftTokenWeights(
    trained,
    examples.map((e) => e.group),
    loss,
  );
  const out: WeightedSequence[] = [];
  examples.forEach((e, i) => {
    if (trained[i] === 0) return;
    const P = e.promptTokenIds.length;
    const tokens = [...e.promptTokenIds, ...e.completionTokenIds];
    const weights = new Float32Array(tokens.length);
    const w = perToken[i];
    e.lossMask.forEach((mk, j) => {
      if (mk) weights[P + j] = w;
    });
    out.push({ tokens, weights });
  });
  return out;
}

/**
 * The RSFT loss weight of each trained token of each example of a minibatch, given how many tokens
 * each example trains and the trajectory (group) each came from: 'token-mean' 1/N with N the
 * minibatch's trained tokens; 'sequence-mean' 1/(|I(τ)|·M) with |I(τ)| the trained tokens of the
 * example's whole trajectory and M the trajectories with a trained token. Shared by local training
 * and the Tinker client (whose server sums w·nll as given), so both optimise the same objective.
 */
export function rsftTokenWeights(trainedTokens: readonly number[], groups: readonly (string | undefined)[] = [], loss: RsftLoss = 'token-mean'): number[] {
  if (loss === 'token-mean') {
    const N = trainedTokens.reduce((a, n) => a + n, 0);
    return trainedTokens.map((n) => (n > 0 ? 1 / N : 0));
  }
  const key = (i: number) => groups[i] ?? `#${i}`;
  const perGroup = new Map<string, number>();
  trainedTokens.forEach((n, i) => perGroup.set(key(i), (perGroup.get(key(i)) ?? 0) + n));
  const M = [...perGroup.values()].filter((n) => n > 0).length;
  return trainedTokens.map((n, i) => (n > 0 ? 1 / (perGroup.get(key(i))! * M) : 0));
}

/** Pretraining sequences → weighted sequences normalised to a token mean over the whole minibatch. */
export function pretrainSequences(sequences: readonly ArrayLike<number>[], weights?: readonly ArrayLike<number>[]): WeightedSequence[] {
  if (weights && weights.length !== sequences.length) throw new Error(`pretrainStep: ${sequences.length} sequences but ${weights.length} weight rows`);
  let total = 0;
  const raw = sequences.map((s, i) => {
    if (weights && weights[i].length !== s.length) throw new Error(`pretrainStep: sequence ${i} has ${s.length} tokens but ${weights[i].length} weights`);
    const w = new Float32Array(s.length);
    for (let j = 1; j < s.length; j++) w[j] = weights ? weights[i][j] : 1;
    for (let j = 1; j < s.length; j++) total += w[j];
    return { tokens: s, weights: w };
  });
  if (total > 0) for (const r of raw) for (let j = 0; j < r.weights.length; j++) r.weights[j] /= total;
  return raw;
}

/**
 * A chat transcript as one pretraining sequence (`<bos>` + the template, no generation prompt), with
 * weight `roleWeights[role]` (default 1) on each message's content and closing `<|end|>`, and on
 * the role marker that opens it.
 */
export function transcriptToSequence(
  tokenizer: WordTokenizer,
  messages: readonly ChatMessage[],
  roleWeights: Partial<Record<ChatMessage['role'], number>> = {},
): { tokens: number[]; weights: number[] } {
  const tokens = [tokenizer.bosId];
  const weights = [0];
  for (const m of messages) {
    const w = roleWeights[m.role] ?? 1;
    const body = tokenizer.encodeChat([m]).slice(1); // drop its <bos>
    for (const id of body) {
      tokens.push(id);
      weights.push(w);
    }
  }
  return { tokens, weights };
}

function hasWeight(s: WeightedSequence): boolean {
  for (let i = 1; i < s.weights.length; i++) if (s.weights[i] !== 0) return true;
  return false;
}

function fitContext(s: WeightedSequence, C: number): WeightedSequence {
  if (s.weights.length !== s.tokens.length) throw new Error(`a training sequence has ${s.tokens.length} tokens but ${s.weights.length} weights`);
  if (s.tokens.length <= C) return s;
  const cut = s.tokens.length - (C - 1);
  const tokens = [s.tokens[0], ...Array.from(s.tokens).slice(cut)];
  const weights = [0, ...Array.from(s.weights).slice(cut)];
  return { tokens, weights };
}

function* microbatches(seqs: WeightedSequence[], budget: number): Generator<WeightedSequence[]> {
  let cur: WeightedSequence[] = [];
  for (const s of seqs) {
    // Sorted by length, so s is the longest so far: the padded size is (count) × s.length.
    if (cur.length > 0 && (cur.length + 1) * s.tokens.length > budget) {
      yield cur;
      cur = [];
    }
    cur.push(s);
  }
  if (cur.length > 0) yield cur;
}

interface Packed {
  ids: Int32Array;
  B: number;
  T: number;
  rows: Int32Array;
  targets: Int32Array;
  weights: Float32Array;
}

/** Right-pads to a [B, T] block and lists the (row, target, weight) of every weighted prediction. */
function pack(seqs: WeightedSequence[]): Packed {
  const B = seqs.length;
  const T = Math.max(...seqs.map((s) => s.tokens.length));
  const ids = new Int32Array(B * T);
  const rows: number[] = [];
  const targets: number[] = [];
  const weights: number[] = [];
  seqs.forEach((s, b) => {
    for (let j = 0; j < s.tokens.length; j++) ids[b * T + j] = s.tokens[j];
    for (let j = 1; j < s.tokens.length; j++) {
      if (s.weights[j] === 0) continue;
      rows.push(b * T + j - 1);
      targets.push(s.tokens[j]);
      weights.push(s.weights[j]);
    }
  });
  return { ids, B, T, rows: Int32Array.from(rows), targets: Int32Array.from(targets), weights: Float32Array.from(weights) };
}

export interface TrainRunHyper {
  learningRate: number;
  /** Trajectories per optimizer step (their examples stay together). */
  minibatchSize: number;
  epochs?: number;
  loss?: RsftLoss;
  adam?: Partial<AdamOptions>;
  seed?: number;
  clipNorm?: number | null;
}

export interface TrainRunResult {
  losses: number[];
  optimizerSteps: number;
  trainedTokens: number;
  wallMs: number;
}

/**
 * `epochs` passes of RSFT over `examples` in seeded-shuffled minibatches, one optimizer step each.
 * Fractional epochs run that fraction of the last pass's minibatches. Yields to the event loop
 * between steps (so a sampler and an HTTP server in the same process stay responsive).
 */
export async function trainRsft(
  trainer: Trainer,
  examples: readonly TrainExample[],
  hyper: TrainRunHyper,
  opts: { signal?: AbortSignal; onStep?: (step: number, loss: number) => void } = {},
): Promise<TrainRunResult> {
  const t0 = performance.now();
  const plan = minibatchPlan(
    examples.length,
    hyper,
    examples.map((e) => e.group),
  );
  trainer.learningRate = hyper.learningRate;
  const losses: number[] = [];
  let trainedTokens = 0;
  let steps = 0;
  for (const idx of plan) {
    if (opts.signal?.aborted) throw opts.signal.reason instanceof Error ? opts.signal.reason : new Error('training was aborted');
    const r = trainer.rsftStep(
      idx.map((i) => examples[i]),
      hyper.loss,
    );
    if (r.tokens === 0) continue;
    losses.push(r.loss);
    trainedTokens += r.tokens;
    steps++;
    opts.onStep?.(steps, r.loss);
    await new Promise<void>((res) => setImmediate(res));
  }
  return { losses, optimizerSteps: steps, trainedTokens, wallMs: performance.now() - t0 };
}

/**
 * The minibatches of an RSFT run, as example indices: `epochs` seeded shuffles of the trajectories
 * (`groups[i]`: the trajectory of example i; an example without one is its own) cut into
 * `minibatchSize` trajectories each, so a trajectory's examples always share a minibatch (a
 * fractional last epoch takes that fraction of its minibatches). Every backend that trains RSFT uses
 * this plan, so the same examples and seed give the same steps. Without groups it is the plain
 * per-example plan (the same as before groups existed).
 */
export function minibatchPlan(
  count: number,
  hyper: { minibatchSize: number; epochs?: number; seed?: number },
  groups: readonly (string | undefined)[] = [],
): number[][] {
  if (!(Number.isInteger(hyper.minibatchSize) && hyper.minibatchSize >= 1))
    throw new RangeError(`minibatchSize must be a positive integer, got ${hyper.minibatchSize}`);
  const epochs = hyper.epochs ?? 1;
  if (!(epochs > 0)) throw new RangeError(`epochs must be > 0, got ${hyper.epochs}`);
  const rng = new Rng(hyper.seed ?? 0);
  const units: number[][] = [];
  const unitOf = new Map<string, number[]>();
  for (let i = 0; i < count; i++) {
    const g = groups[i];
    const have = g === undefined ? undefined : unitOf.get(g);
    if (have) have.push(i);
    else {
      const u = [i];
      units.push(u);
      if (g !== undefined) unitOf.set(g, u);
    }
  }
  const plan: number[][] = [];
  for (let e = 0; e < Math.ceil(epochs); e++) {
    const order = rng.shuffle([...units.keys()]);
    const batches: number[][] = [];
    for (let i = 0; i < order.length; i += hyper.minibatchSize) batches.push(order.slice(i, i + hyper.minibatchSize).flatMap((u) => units[u]));
    const take = e + 1 <= epochs ? batches.length : Math.max(1, Math.round(batches.length * (epochs - e)));
    plan.push(...batches.slice(0, take));
  }
  return plan;
}

/**
 * Adam moments as bytes: a JSON header line ({step, tensors: [name, size]…}) then float32 m and v
 * per tensor. Saved beside a trained version so that a resumed run continues with the optimizer
 * state an uninterrupted run would have had.
 */
export function adamStateToBytes(state: AdamState): Buffer {
  const names = [...state.m.keys()];
  const header = Buffer.from(JSON.stringify({ format: 'whale-adam', step: state.step, tensors: names.map((n) => [n, state.m.get(n)!.size]) }) + '\n');
  const parts: Buffer[] = [header];
  for (const n of names) {
    for (const x of [state.m.get(n)!, state.v.get(n)!]) {
      const data = x.dataSync() as Float32Array;
      parts.push(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    }
  }
  return Buffer.concat(parts);
}

export function adamStateFromBytes(buf: Buffer, model: TransformerModel, source: string): AdamState {
  const nl = buf.indexOf(10);
  const header = JSON.parse(buf.subarray(0, nl).toString('utf8')) as { format: string; step: number; tensors: [string, number][] };
  if (header.format !== 'whale-adam') throw new Error(`${source}: not a whale optimizer state`);
  const t = tf();
  const shapes = new Map(model.specs.map((s) => [s.name, s.shape]));
  const state: AdamState = { step: header.step, m: new Map(), v: new Map() };
  let off = nl + 1;
  for (const [name, size] of header.tensors) {
    const shape = shapes.get(name);
    if (!shape) throw new Error(`${source}: tensor ${name} is not in the model`);
    for (const target of [state.m, state.v]) {
      const data = new Float32Array(size);
      Buffer.from(data.buffer).set(buf.subarray(off, off + size * 4));
      off += size * 4;
      target.set(name, t.variable(t.tensor(data, shape), false));
    }
  }
  return state;
}
