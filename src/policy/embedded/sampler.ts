/**
 * Continuous-batching sampler with a KV cache.
 *
 * Many `generate()` calls in flight at once (a harness evaluation runs dozens of rollouts) are
 * decoded together: each loop iteration admits waiting requests — their prompts prefilled in one
 * parallel forward pass (prompt tokens are forced, never sampled) — then advances every active
 * sequence by one token in a single batched step. A finished sequence leaves a hole that the next
 * admission fills; the cache is compacted when holes pile up.
 *
 * The cache lives in wasm-heap tensors that are written in place (through `heapView`): per layer,
 * keys and values [slots·H, L, dh]; scores are K·q (this orientation runs ~12% faster than q·Kᵀ
 * in the wasm backend's batched matMul loop). In-place writes are safe because the
 * cache is only ever read by batched matMuls with more than one batch entry, which the wasm backend
 * runs without its packed-weight cache (that cache is keyed by tensor id and would go stale).
 *
 * Sampling semantics (per request): temperature 0 is greedy (ties → lowest id); otherwise softmax of
 * logits/temperature restricted to the top-p nucleus. `logprobs` are the chosen tokens' log
 * probabilities under the unmodified model (temperature 1, no top-p), which is what the training
 * objective scores. Generation stops at `<|end|>` (its id is included in completionTokenIds and
 * logprobs, not in the text, so training teaches the model to stop), at a stop string (text cut
 * before it, as OpenAI does; the token ids that produced it are kept), at max_tokens, or when the
 * sequence fills the context ('length'). A prompt that leaves no room for one generated token is
 * refused with ContextLengthError (no silent truncation: a cut prompt would lose the instructions).
 */
import { randomInt } from 'node:crypto';
import { Rng } from '../../core/rng.js';
import type { TransformerModel } from './model.js';
import { NO_PREVIOUS_TOKEN, readInTidy } from './model.js';
import { heapView, tf, type Tensor } from './tf.js';
import type { WordTokenizer } from './tokenizer.js';

export interface GenerateRequest {
  promptIds: number[];
  /** 0 = greedy. Default 1. */
  temperature?: number;
  /** Nucleus mass in (0, 1]. Default 1. */
  topP?: number;
  /** Default: until the context is full. */
  maxTokens?: number;
  stop?: string[];
  seed?: number;
  signal?: AbortSignal;
}

export interface GenerateResult {
  text: string;
  finishReason: 'stop' | 'length';
  promptTokenIds: number[];
  completionTokenIds: number[];
  /** Per completion token, log p(token) under the temperature-1 model distribution. */
  logprobs: number[];
  usage: { promptTokens: number; completionTokens: number };
}

/**
 * A chat prompt that does not fit the context keeps its first token (<bos>) and its tail, leaving
 * room for min(max_tokens, context/2) new tokens (context/4 without max_tokens) — as the trainer cuts
 * long sequences, and as vLLM's truncate_prompt_tokens keeps the tail. Used for in-process chat: a
 * harness whose prompts outgrow the tiny model's context loses the head of the prompt (instructions
 * first), not the rollout. A prompt that fits is returned unchanged.
 */
export function keepPromptTail(ids: number[], contextLength: number, maxTokens?: number): number[] {
  if (ids.length < contextLength) return ids;
  const room = Math.max(1, Math.min(maxTokens ?? Math.floor(contextLength / 4), Math.floor(contextLength / 2)));
  const keep = contextLength - room;
  return [ids[0], ...ids.slice(ids.length - (keep - 1))];
}

export class ContextLengthError extends Error {
  readonly code = 'context_length_exceeded';
  constructor(promptTokens: number, contextLength: number) {
    super(`prompt is ${promptTokens} tokens but the model's context is ${contextLength}: at most ${contextLength - 1} prompt tokens leave room to generate`);
    this.name = 'ContextLengthError';
  }
}

export class SamplerClosedError extends Error {
  constructor() {
    super('the sampler was closed (its policy version was unloaded or the backend shut down)');
    this.name = 'SamplerClosedError';
  }
}

export interface SamplerStats {
  /** Batched decode steps run. */
  steps: number;
  /** Sum of active sequences over steps (mean batch = batchSum / steps). */
  batchSum: number;
  /** Largest number of sequences decoded together in one step. */
  maxBatch: number;
  prefillPasses: number;
  /** Largest number of prompts prefilled in one forward pass. */
  maxPrefillBatch: number;
  generatedTokens: number;
  promptTokens: number;
}

export interface SamplerOptions {
  /** Sequences decoded together at most (default 64). */
  maxBatch?: number;
  /** Padded tokens per prefill forward pass at most (default 4096). */
  prefillTokens?: number;
}

interface Seq {
  req: GenerateRequest;
  tokens: number[];
  promptLen: number;
  maxNew: number;
  temperature: number;
  topP: number;
  stop: string[];
  maxStopLen: number;
  rng: Rng;
  logprobs: number[];
  resolve: (r: GenerateResult) => void;
  reject: (e: unknown) => void;
  searchedTextLen: number;
}

/** Attention weights fused across heads for the batched step; the rest are the model's own tensors. */
interface FusedLayer {
  wqkv: Tensor; // [d, 3d], q columns pre-scaled by 1/√dh
  wo: Tensor; // [d, d]
}

const KV_BLOCK = 32;
/**
 * A prefill pass pads its prompts to a multiple of this many positions. Padded only to the longest
 * prompt of whatever else shares the pass, a prompt's attention rows had another length on each
 * pass and rounded differently, by ~1e-7, so a sampled token could tip: a request's result depended
 * on what else was in flight. Measured on the shipped model, 54 prompt pairs: padded to 1 or 2,
 * 22–23 differ; to 4, 8, 16 or 32, none (so the wasm kernels seem to reduce these rows in groups of
 * four; 8 leaves a margin). Decoding needs nothing of the kind: its cache length is a multiple of KV_BLOCK.
 */
const PREFILL_ALIGN = 8;

export class BatchSampler {
  readonly stats: SamplerStats = { steps: 0, batchSum: 0, maxBatch: 0, prefillPasses: 0, maxPrefillBatch: 0, generatedTokens: 0, promptTokens: 0 };
  private readonly pending: Seq[] = [];
  /** Cache slots; null = hole. */
  private slots: (Seq | null)[] = [];
  private k: Tensor[] = [];
  private v: Tensor[] = [];
  private cacheLen = 0;
  private running = false;
  private closed = false;
  private readonly fused: FusedLayer[];
  private readonly maxBatch: number;
  private readonly prefillTokens: number;
  private readonly stopIds: Set<number>;
  private maskBuf = new Float32Array(0);
  private probBuf = new Float64Array(0);

  constructor(
    readonly model: TransformerModel,
    readonly tokenizer: WordTokenizer,
    opts: SamplerOptions = {},
  ) {
    if (tokenizer.size !== model.config.vocabSize) {
      throw new Error(`tokenizer has ${tokenizer.size} tokens but the model was built for ${model.config.vocabSize}`);
    }
    this.maxBatch = opts.maxBatch ?? 64;
    this.prefillTokens = opts.prefillTokens ?? 4096;
    this.stopIds = new Set([tokenizer.endId]);
    this.fused = this.fuseWeights();
  }

  /** True while requests are queued or being decoded. */
  get busy(): boolean {
    return this.pending.length > 0 || this.slots.some((s) => s !== null);
  }

  generate(req: GenerateRequest): Promise<GenerateResult> {
    if (this.closed) return Promise.reject(new SamplerClosedError());
    const C = this.model.config.contextLength;
    const V = this.model.config.vocabSize;
    if (req.promptIds.length === 0) return Promise.reject(new Error('empty prompt: encode it with the chat template (it starts with <bos>)'));
    if (req.promptIds.length >= C) return Promise.reject(new ContextLengthError(req.promptIds.length, C));
    for (const id of req.promptIds) {
      if (!Number.isInteger(id) || id < 0 || id >= V) return Promise.reject(new Error(`prompt token id ${id} is outside the vocabulary (size ${V})`));
    }
    const temperature = req.temperature ?? 1;
    const topP = req.topP ?? 1;
    if (!(temperature >= 0) || !Number.isFinite(temperature)) return Promise.reject(new RangeError(`temperature must be ≥ 0, got ${req.temperature}`));
    if (!(topP > 0 && topP <= 1)) return Promise.reject(new RangeError(`top_p must be in (0, 1], got ${req.topP}`));
    if (req.maxTokens !== undefined && !(Number.isInteger(req.maxTokens) && req.maxTokens >= 1)) {
      return Promise.reject(new RangeError(`max_tokens must be a positive integer, got ${req.maxTokens}`));
    }
    if (req.signal?.aborted) return Promise.reject(abortError(req.signal));
    const stop = (req.stop ?? []).filter((s) => s.length > 0);
    return new Promise<GenerateResult>((resolve, reject) => {
      this.pending.push({
        req,
        tokens: req.promptIds.slice(),
        promptLen: req.promptIds.length,
        maxNew: Math.min(req.maxTokens ?? Infinity, C - req.promptIds.length),
        temperature,
        topP,
        stop,
        maxStopLen: stop.reduce((m, s) => Math.max(m, s.length), 0),
        rng: new Rng(req.seed ?? randomInt(2 ** 31)),
        logprobs: [],
        resolve,
        reject,
        searchedTextLen: 0,
      });
      this.kick();
    });
  }

  /** Rejects everything queued or running and frees the cache and fused weights. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const err = new SamplerClosedError();
    for (const s of this.pending.splice(0)) s.reject(err);
    for (const s of this.slots) s?.reject(err);
    this.slots = [];
    this.freeCache();
    for (const f of this.fused) {
      f.wqkv.dispose();
      f.wo.dispose();
    }
  }

  private kick(): void {
    if (this.running) return;
    this.running = true;
    // setImmediate, not a microtask: requests arriving in the same tick (or the same I/O batch)
    // queue up first and are admitted together.
    setImmediate(() => void this.loop());
  }

  private async loop(): Promise<void> {
    try {
      while (!this.closed && (this.pending.length > 0 || this.slots.some((s) => s !== null))) {
        this.dropAborted();
        if (this.pending.length > 0 && this.activeCount() < this.maxBatch) this.admit();
        if (this.activeCount() > 0) this.decodeStep();
        await new Promise<void>((r) => setImmediate(r));
      }
    } catch (e) {
      for (const s of this.pending.splice(0)) s.reject(e);
      for (const s of this.slots) s?.reject(e);
      this.slots = [];
    } finally {
      this.running = false;
      if (!this.closed) {
        this.freeCache();
        this.slots = [];
      }
    }
    if (!this.closed && this.pending.length > 0) this.kick();
  }

  private activeCount(): number {
    let n = 0;
    for (const s of this.slots) if (s) n++;
    return n;
  }

  private dropAborted(): void {
    for (let i = this.pending.length - 1; i >= 0; i--) {
      const s = this.pending[i];
      if (s.req.signal?.aborted) {
        this.pending.splice(i, 1);
        s.reject(abortError(s.req.signal));
      }
    }
    this.slots.forEach((s, i) => {
      if (s?.req.signal?.aborted) {
        this.slots[i] = null;
        s.reject(abortError(s.req.signal));
      }
    });
  }

  // ---- cache layout ----------------------------------------------------------------------------

  private freeCache(): void {
    for (const x of [...this.k, ...this.v]) x.dispose();
    this.k = [];
    this.v = [];
    this.cacheLen = 0;
  }

  /**
   * Rebuilds the cache for the slot list `order` (existing sequences carry their cached keys and
   * values over; new ones get empty rows) with room for `len` positions.
   */
  private relayout(order: (Seq | null)[], len: number): void {
    const t = tf();
    const { nLayers, nHeads: H, dModel } = this.model.config;
    const dh = dModel / H;
    const n = order.length;
    const oldIndex = new Map<Seq, number>();
    this.slots.forEach((s, i) => s && oldIndex.set(s, i));
    const newK: Tensor[] = [];
    const newV: Tensor[] = [];
    for (let l = 0; l < nLayers; l++) {
      newK.push(t.zeros([n * H, len, dh]));
      newV.push(t.zeros([n * H, len, dh]));
    }
    const oldLen = this.cacheLen;
    const keep = Math.min(oldLen, len);
    for (let l = 0; l < nLayers && oldLen > 0; l++) {
      for (const [from, to] of [
        [heapView(this.k[l]), heapView(newK[l])],
        [heapView(this.v[l]), heapView(newV[l])],
      ]) {
        order.forEach((s, ns) => {
          const os = s ? oldIndex.get(s) : undefined;
          if (os === undefined) return;
          for (let h = 0; h < H; h++) {
            const o = (os * H + h) * oldLen * dh;
            to.set(from.subarray(o, o + keep * dh), (ns * H + h) * len * dh);
          }
        });
      }
    }
    this.freeCache();
    this.k = newK;
    this.v = newV;
    this.cacheLen = len;
    this.slots = order;
  }

  private lenFor(maxTokens: number): number {
    const C = this.model.config.contextLength;
    return Math.min(C, Math.ceil((maxTokens + 1) / KV_BLOCK) * KV_BLOCK);
  }

  // ---- admission and prefill -------------------------------------------------------------------

  private admit(): void {
    const room = this.maxBatch - this.activeCount();
    const batch = this.pending.splice(0, room);
    const longest = Math.max(...batch.map((s) => s.tokens.length), ...this.slots.map((s) => (s ? s.tokens.length : 0)));
    const holes = this.slots.filter((s) => s === null).length;
    if (batch.length <= holes && longest < this.cacheLen) {
      // Fill holes in place: no copy of the cache.
      let k = 0;
      this.slots = this.slots.map((s) => (s === null && k < batch.length ? batch[k++] : s));
    } else {
      const order = [...this.slots.filter((s): s is Seq => s !== null), ...batch];
      this.relayout(order, this.lenFor(longest));
    }
    // Similar lengths share a prefill pass, so little of it is padding.
    const byLen = batch.slice().sort((a, b) => a.tokens.length - b.tokens.length);
    let i = 0;
    while (i < byLen.length) {
      let j = i + 1;
      while (j < byLen.length && (j + 1 - i) * byLen[j].tokens.length <= this.prefillTokens) j++;
      this.prefill(byLen.slice(i, j));
      i = j;
    }
  }

  private prefill(group: Seq[]): void {
    const m = this.model;
    const { nHeads: H, dModel, vocabSize: V } = m.config;
    const dh = dModel / H;
    const B = group.length;
    const T = Math.min(this.model.config.contextLength, Math.ceil(Math.max(...group.map((s) => s.tokens.length)) / PREFILL_ALIGN) * PREFILL_ALIGN);
    const ids = new Int32Array(B * T).fill(this.tokenizer.padId);
    group.forEach((s, b) => ids.set(s.tokens, b * T));
    const slotOf = group.map((s) => this.slots.indexOf(s));
    const L = this.cacheLen;
    const lastRows = new Int32Array(group.map((s, b) => b * T + s.tokens.length - 1));
    const logits = readInTidy(() => {
      const h = m.hidden(ids, B, T, {
        onKv: (layer, head, kT, v) => {
          const kd = kT.dataSync() as Float32Array; // [dh, B·T]
          const vd = v.dataSync() as Float32Array; // [B·T, dh]
          const K = heapView(this.k[layer]);
          const Vc = heapView(this.v[layer]);
          group.forEach((s, b) => {
            const row = slotOf[b] * H + head;
            const n = s.tokens.length;
            for (let p = 0; p < n; p++) {
              const o = (row * L + p) * dh;
              for (let i = 0; i < dh; i++) K[o + i] = kd[i * B * T + b * T + p];
            }
            Vc.set(vd.subarray(b * T * dh, (b * T + n) * dh), row * L * dh);
          });
        },
      });
      return m.logitsAt(h, lastRows);
    });
    this.stats.prefillPasses++;
    this.stats.maxPrefillBatch = Math.max(this.stats.maxPrefillBatch, B);
    group.forEach((s, b) => {
      this.stats.promptTokens += s.promptLen;
      this.accept(s, logits, b * V);
    });
  }

  // ---- the batched decode step -----------------------------------------------------------------

  private decodeStep(): void {
    const t = tf();
    const m = this.model;
    const c = m.config;
    const H = c.nHeads;
    const d = c.dModel;
    const dh = d / H;
    // Grow the cache, or compact it when at least a quarter of it is holes.
    const live = this.slots.filter((s): s is Seq => s !== null);
    const longest = Math.max(...live.map((s) => s.tokens.length));
    if (longest > this.cacheLen || live.length * 4 <= this.slots.length * 3) {
      this.relayout(live, this.lenFor(longest));
    }
    const n = this.slots.length;
    const L = this.cacheLen;
    const ids = new Int32Array(n).fill(this.tokenizer.padId);
    const prev = new Int32Array(n).fill(NO_PREVIOUS_TOKEN);
    const pos = new Int32Array(n);
    if (this.maskBuf.length !== n * H * L) this.maskBuf = new Float32Array(n * H * L);
    const mask = this.maskBuf.fill(-1e9);
    this.slots.forEach((s, i) => {
      const p = s ? s.tokens.length - 1 : 0;
      if (s) {
        ids[i] = s.tokens[p];
        prev[i] = p > 0 ? s.tokens[p - 1] : NO_PREVIOUS_TOKEN;
      }
      pos[i] = p;
      for (let h = 0; h < H; h++) mask.fill(0, (i * H + h) * L, (i * H + h) * L + p + 1);
    });
    const logits = readInTidy(() => {
      const maskT = t.tensor3d(mask, [n * H, 1, L]);
      let x = t.gather(m.p('tokEmb'), t.tensor1d(ids, 'int32'));
      if (c.tokenShift) x = t.add(x, t.gather(m.p('prevEmb'), t.tensor1d(prev, 'int32')));
      x = t.add(x, t.gather(m.p('posEmb'), t.tensor1d(pos, 'int32')));
      for (let l = 0; l < c.nLayers; l++) {
        const pre = `layer${l}.`;
        const f = this.fused[l];
        const qkv = t.matMul(ln(x, m.p(pre + 'ln1.g'), m.p(pre + 'ln1.b'), c.lnEps), f.wqkv); // [n, 3d]
        const qkvData = qkv.dataSync() as Float32Array;
        const K = heapView(this.k[l]);
        const Vc = heapView(this.v[l]);
        for (let s = 0; s < n; s++) {
          const p = pos[s];
          const base = s * 3 * d;
          for (let h = 0; h < H; h++) {
            const row = s * H + h;
            K.set(qkvData.subarray(base + d + h * dh, base + d + (h + 1) * dh), (row * L + p) * dh);
            Vc.set(qkvData.subarray(base + 2 * d + h * dh, base + 2 * d + (h + 1) * dh), (row * L + p) * dh);
          }
        }
        const q = t.reshape(t.slice(qkv, [0, 0], [n, d]), [n * H, dh, 1]);
        const scores = t.reshape(t.matMul(this.k[l], q), [n * H, 1, L]);
        const att = t.softmax(t.add(scores, maskT)); // [nH, 1, L]
        const o = t.reshape(t.matMul(att, this.v[l]), [n, d]);
        x = t.add(x, t.matMul(o, f.wo));
        const h2 = ln(x, m.p(pre + 'ln2.g'), m.p(pre + 'ln2.b'), c.lnEps);
        const up = t.matMul(h2, m.p(pre + 'mlp.up'));
        x = t.add(x, t.matMul(t.mul(up, t.sigmoid(t.mul(up, 1.702))), m.p(pre + 'mlp.down')));
      }
      return t.matMul(ln(x, m.p('lnf.g'), m.p('lnf.b'), c.lnEps), m.p('head'));
    });
    const active = this.slots.filter((s) => s !== null).length;
    this.stats.steps++;
    this.stats.batchSum += active;
    this.stats.maxBatch = Math.max(this.stats.maxBatch, active);
    this.slots.forEach((s, i) => s && this.accept(s, logits, i * c.vocabSize));
  }

  // ---- choosing tokens and finishing -----------------------------------------------------------

  /** Samples the next token of `s` from the logits row at `offset`, and finishes `s` if it is done. */
  private accept(s: Seq, z: Float32Array, offset: number): void {
    const V = this.model.config.vocabSize;
    if (this.probBuf.length < V) this.probBuf = new Float64Array(V);
    const { id, logprob } = chooseToken(z, offset, V, s.temperature, s.topP, s.rng, this.probBuf);
    s.tokens.push(id);
    s.logprobs.push(logprob);
    this.stats.generatedTokens++;
    const generated = s.tokens.length - s.promptLen;
    if (this.stopIds.has(id)) return this.finish(s, 'stop');
    if (s.stop.length > 0) {
      const text = this.completionText(s);
      const from = Math.max(0, s.searchedTextLen - s.maxStopLen + 1);
      let cut = -1;
      for (const st of s.stop) {
        const k = text.indexOf(st, from);
        if (k >= 0 && (cut < 0 || k < cut)) cut = k;
      }
      s.searchedTextLen = text.length;
      if (cut >= 0) return this.finish(s, 'stop', text.slice(0, cut));
    }
    if (generated >= s.maxNew) this.finish(s, 'length');
  }

  private completionText(s: Seq): string {
    return this.tokenizer.decode(s.tokens.slice(s.promptLen));
  }

  private finish(s: Seq, reason: 'stop' | 'length', text?: string): void {
    const i = this.slots.indexOf(s);
    if (i >= 0) this.slots[i] = null;
    const completion = s.tokens.slice(s.promptLen);
    s.resolve({
      text: text ?? this.completionText(s),
      finishReason: reason,
      promptTokenIds: s.tokens.slice(0, s.promptLen),
      completionTokenIds: completion,
      logprobs: s.logprobs,
      usage: { promptTokens: s.promptLen, completionTokens: completion.length },
    });
  }

  private fuseWeights(): FusedLayer[] {
    const t = tf();
    const m = this.model;
    const { nLayers, nHeads: H, dModel } = m.config;
    const scale = 1 / Math.sqrt(dModel / H);
    const out: FusedLayer[] = [];
    for (let l = 0; l < nLayers; l++) {
      const heads = [...Array(H).keys()].map((h) => `layer${l}.head${h}.`);
      out.push(
        t.tidy(() => ({
          wqkv: t.keep(
            t.concat(
              [
                t.mul(
                  t.concat(
                    heads.map((p) => m.p(p + 'q')),
                    1,
                  ),
                  scale,
                ),
                t.concat(
                  heads.map((p) => t.transpose(m.p(p + 'kT'))),
                  1,
                ),
                t.concat(
                  heads.map((p) => m.p(p + 'v')),
                  1,
                ),
              ],
              1,
            ),
          ),
          wo: t.keep(
            t.concat(
              heads.map((p) => m.p(p + 'o')),
              0,
            ),
          ),
        })),
      );
    }
    return out;
  }
}

/** Forward-only LayerNorm (no custom gradient bookkeeping). */
function ln(x: Tensor, g: Tensor, b: Tensor, eps: number): Tensor {
  const t = tf();
  const { mean, variance } = t.moments(x, -1, true);
  return t.add(t.mul(t.mul(t.sub(x, mean), t.rsqrt(t.add(variance, eps))), g), b);
}

/**
 * Picks a token from the logits row at `o` and returns it with its temperature-1 log probability,
 * in as few passes over the row as the settings allow. `buf` is scratch space of at least V.
 */
function chooseToken(z: Float32Array, o: number, V: number, temperature: number, topP: number, rng: Rng, buf: Float64Array): { id: number; logprob: number } {
  let m = -Infinity;
  let best = 0;
  for (let j = 0; j < V; j++) {
    if (z[o + j] > m) {
      m = z[o + j];
      best = j;
    }
  }
  // Σ exp(z − m): the temperature-1 normaliser, and (at temperature 1) the sampling weights too.
  let sum1 = 0;
  const inv = temperature > 0 ? 1 / temperature : 0;
  let sumT = 0;
  for (let j = 0; j < V; j++) {
    const e = Math.exp(z[o + j] - m);
    sum1 += e;
    if (temperature === 1) buf[j] = e;
    else if (temperature > 0) {
      const w = Math.exp((z[o + j] - m) * inv);
      buf[j] = w;
      sumT += w;
    }
  }
  if (temperature === 1) sumT = sum1;
  const logprobOf = (id: number) => z[o + id] - m - Math.log(sum1);
  if (temperature === 0) return { id: best, logprob: logprobOf(best) };
  let id = best;
  if (topP >= 1) {
    let r = rng.next() * sumT;
    for (let j = 0; j < V; j++) {
      r -= buf[j];
      if (r < 0) {
        id = j;
        break;
      }
    }
  } else {
    const order = [...Array(V).keys()].sort((a, b) => buf[b] - buf[a] || a - b);
    let mass = 0;
    let k = 0;
    while (k < V && mass < topP * sumT) mass += buf[order[k++]];
    let r = rng.next() * mass;
    id = order[0];
    for (let i = 0; i < k; i++) {
      r -= buf[order[i]];
      if (r < 0) {
        id = order[i];
        break;
      }
    }
  }
  return { id, logprob: logprobOf(id) };
}

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  const e = new Error('the request was aborted');
  e.name = 'AbortError';
  return e;
}
