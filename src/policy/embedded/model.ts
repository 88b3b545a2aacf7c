/**
 * A small decoder-only transformer on tfjs-wasm: pre-LayerNorm blocks, learned positions, a
 * previous-token embedding added to the input ("token shift"), untied output head, GELU MLP, no
 * linear biases.
 *
 * The training/full-sequence forward pass runs attention as per-(sequence, head) 2-D matMuls
 * (XNNPACK at ~30-40 GFLOP/s) rather than one batched matMul (a naive loop at ~3 GFLOP/s on wasm);
 * the sampler (sampler.ts) keeps batched attention over its KV cache. See REFERENCE.md §5.
 */
import { createHash } from 'node:crypto';
import { Rng } from '../../core/rng.js';
import { parameterCount, paramSpecs, validateConfig, type ModelConfig, type ParamSpec } from './config.js';
import { gatherRows, gelu, layerNorm, oneHotRows } from './ops.js';
import { tf, type Tensor, type Variable } from './tf.js';

export type EmbeddingMode = 'gather' | 'onehot';

/** Per layer and head, the keys (transposed, [dh, B·T]) and values ([B·T, dh]) of a full forward pass. */
export type KvSink = (layer: number, head: number, kT: Tensor, v: Tensor) => void;

export interface ForwardOptions {
  /** Receives each head's keys and values (for filling the sampler's cache); tensors are only valid during the call. */
  onKv?: KvSink;
  embedding?: EmbeddingMode;
}

const causalMasks = new Map<number, Tensor>();

/** [T, T] additive mask: 0 on and below the diagonal, −1e9 above. Cached per T for the process lifetime. */
function causalMask(T: number): Tensor {
  let m = causalMasks.get(T);
  if (!m) {
    const a = new Float32Array(T * T);
    for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) a[i * T + j] = -1e9;
    m = tf().keep(tf().tensor2d(a, [T, T]));
    causalMasks.set(T, m);
  }
  return m;
}

let nameCounter = 0;
/** tfjs variable names are global: make each one unique. */
function uniqueName(param: string): string {
  return `whale/${++nameCounter}/${param}`;
}

/** The id fed as "previous token" at position 0, where there is none. */
export const NO_PREVIOUS_TOKEN = 0;

export class TransformerModel {
  readonly config: ModelConfig;
  readonly specs: ParamSpec[];
  /** Trainable parameters by name, in canonical (weights.bin) order. */
  readonly params: Map<string, Variable>;
  private disposed = false;

  private constructor(config: ModelConfig, params: Map<string, Variable>) {
    this.config = config;
    this.specs = paramSpecs(config);
    this.params = params;
  }

  /** Fresh weights, reproducible from `seed` (drawn in JS, independent of tfjs's own RNG). */
  static create(config: ModelConfig, seed: number): TransformerModel {
    validateConfig(config);
    const t = tf();
    const rng = new Rng(seed);
    const params = new Map<string, Variable>();
    for (const s of paramSpecs(config)) {
      const n = s.shape.reduce((a, b) => a * b, 1);
      const a = new Float32Array(n);
      if (s.init === 'ones') a.fill(1);
      else if (s.init === 'normal') fillNormal(a, rng, s.std ?? 0.02);
      params.set(s.name, t.variable(t.tensor(a, s.shape), true, uniqueName(s.name)));
    }
    return new TransformerModel(config, params);
  }

  /** Weights from the canonical little-endian float32 layout written by `toBytes`. */
  static fromBytes(config: ModelConfig, bytes: Uint8Array, source = 'weights'): TransformerModel {
    validateConfig(config, source);
    const t = tf();
    const specs = paramSpecs(config);
    const expected = parameterCount(config) * 4;
    if (bytes.byteLength !== expected) {
      throw new Error(`${source}: ${bytes.byteLength} bytes, but the model config needs ${expected} (${expected / 4} float32 parameters)`);
    }
    // Copy into an aligned buffer: a Buffer from readFileSync may start at any byte offset.
    const all = new Float32Array(bytes.byteLength / 4);
    new Uint8Array(all.buffer).set(bytes);
    const params = new Map<string, Variable>();
    let o = 0;
    for (const s of specs) {
      const n = s.shape.reduce((a, b) => a * b, 1);
      params.set(s.name, t.variable(t.tensor(all.subarray(o, o + n), s.shape), true, uniqueName(s.name)));
      o += n;
    }
    return new TransformerModel(config, params);
  }

  /** All weights as one little-endian float32 buffer in canonical order (what versions hash). */
  toBytes(): Uint8Array {
    const n = parameterCount(this.config);
    const all = new Float32Array(n);
    let o = 0;
    for (const s of this.specs) {
      const d = this.p(s.name).dataSync() as Float32Array;
      all.set(d, o);
      o += d.length;
    }
    return new Uint8Array(all.buffer);
  }

  /** Content address: the first 16 hex digits of sha256(weights.bin). */
  versionId(): string {
    return weightsVersionId(this.toBytes());
  }

  parameterCount(): number {
    return parameterCount(this.config);
  }

  /** A deep copy (for a trainer that must not touch a model the sampler is using). */
  clone(): TransformerModel {
    return TransformerModel.fromBytes(this.config, this.toBytes());
  }

  p(name: string): Variable {
    const v = this.params.get(name);
    if (!v) throw new Error(`model has no parameter ${name}`);
    return v;
  }

  variables(): Variable[] {
    return this.specs.map((s) => this.p(s.name));
  }

  /**
   * Final hidden states [B·T, d] (after the last LayerNorm) for token ids laid out row-major
   * [B, T]. Differentiable; call inside tf.tidy / variableGrads.
   */
  hidden(ids: Int32Array, B: number, T: number, opts: ForwardOptions = {}): Tensor {
    const t = tf();
    const c = this.config;
    if (ids.length !== B * T) throw new Error(`hidden: ${ids.length} ids for B=${B}, T=${T}`);
    if (T > c.contextLength) throw new Error(`hidden: sequence length ${T} exceeds the context ${c.contextLength}`);
    const d = c.dModel;
    const H = c.nHeads;
    const dh = d / H;
    const embed = opts.embedding === 'onehot' ? oneHotRows : gatherRows;
    let x = embed(this.p('tokEmb'), ids);
    if (c.tokenShift) {
      const prev = new Int32Array(B * T);
      for (let b = 0; b < B; b++) {
        prev[b * T] = NO_PREVIOUS_TOKEN;
        for (let i = 1; i < T; i++) prev[b * T + i] = ids[b * T + i - 1];
      }
      x = t.add(x, embed(this.p('prevEmb'), prev));
    }
    const pos = t.slice(this.p('posEmb'), [0, 0], [T, d]);
    x = t.reshape(t.add(t.reshape(x, [B, T, d]), pos), [B * T, d]);
    const mask = causalMask(T);
    const scale = 1 / Math.sqrt(dh);
    for (let l = 0; l < c.nLayers; l++) {
      const pre = `layer${l}.`;
      const hN = layerNorm(x, this.p(pre + 'ln1.g'), this.p(pre + 'ln1.b'), c.lnEps);
      const hT = t.transpose(hN);
      let attn: Tensor | undefined;
      for (let h = 0; h < H; h++) {
        const hp = `${pre}head${h}.`;
        const q = t.mul(t.matMul(hN, this.p(hp + 'q')), scale);
        const kT = t.matMul(this.p(hp + 'kT'), hT);
        const v = t.matMul(hN, this.p(hp + 'v'));
        opts.onKv?.(l, h, kT, v);
        const qs = B === 1 ? [q] : t.split(q, B, 0);
        const ks = B === 1 ? [kT] : t.split(kT, B, 1);
        const vs = B === 1 ? [v] : t.split(v, B, 0);
        const outs: Tensor[] = [];
        for (let b = 0; b < B; b++) {
          const p = t.softmax(t.add(t.matMul(qs[b], ks[b]), mask));
          outs.push(t.matMul(p, vs[b]));
        }
        const o = B === 1 ? outs[0] : t.concat(outs, 0);
        const contrib = t.matMul(o, this.p(hp + 'o'));
        attn = attn ? t.add(attn, contrib) : contrib;
      }
      x = t.add(x, attn!);
      const h2 = layerNorm(x, this.p(pre + 'ln2.g'), this.p(pre + 'ln2.b'), c.lnEps);
      x = t.add(x, t.matMul(gelu(t.matMul(h2, this.p(pre + 'mlp.up'))), this.p(pre + 'mlp.down')));
    }
    return layerNorm(x, this.p('lnf.g'), this.p('lnf.b'), c.lnEps);
  }

  /** Logits [rows.length, V] for the given rows of a hidden-state matrix. */
  logitsAt(hidden: Tensor, rows: Int32Array): Tensor {
    return tf().matMul(gatherRows(hidden, rows), this.p('head'));
  }

  /** All logits [B·T, V] for a batch, without gradients (tests, evaluation). */
  logits(ids: Int32Array, B: number, T: number): Float32Array {
    const t = tf();
    return readInTidy(() => t.matMul(this.hidden(ids, B, T), this.p('head')));
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const v of this.params.values()) v.dispose();
  }
}

/**
 * Runs `f` in a tf.tidy and returns its tensor's data. The data must not be tidy's return value:
 * tidy walks whatever it returns looking for tensors, element by element for a typed array.
 */
export function readInTidy(f: () => Tensor): Float32Array {
  let out: Float32Array | undefined;
  tf().tidy(() => {
    out = f().dataSync() as Float32Array;
  });
  return out!;
}

export function weightsVersionId(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex').slice(0, 16);
}

/** `createModel(config, seed)`: needs `await loadTf()` first. */
export function createModel(config: ModelConfig, seed: number): TransformerModel {
  return TransformerModel.create(config, seed);
}

function fillNormal(a: Float32Array, rng: Rng, std: number): void {
  for (let i = 0; i < a.length; i += 2) {
    // Box–Muller; 1 − u keeps log's argument in (0, 1].
    const u = 1 - rng.next();
    const v = rng.next();
    const r = Math.sqrt(-2 * Math.log(u)) * std;
    a[i] = r * Math.cos(2 * Math.PI * v);
    if (i + 1 < a.length) a[i + 1] = r * Math.sin(2 * Math.PI * v);
  }
}
