/** The embedded transformer's shape, its parameter list and the defaults the benchmarks were run on. */

export interface ModelConfig {
  /** Token count of the vocabulary the model was built for (vocab.json must match). */
  vocabSize: number;
  /** Longest sequence (prompt + completion) the model can see; also the learned-position table size. */
  contextLength: number;
  dModel: number;
  nLayers: number;
  nHeads: number;
  /** MLP hidden width = mlpRatio × dModel. */
  mlpRatio: number;
  /** Add an embedding of the previous token to each input ("token shift"): speeds up learning to copy. */
  tokenShift: boolean;
  /** LayerNorm epsilon. */
  lnEps: number;
}

/**
 * Chosen so the default model trains ≥ 1,500 tokens/s and samples ≥ 4,000 tokens/s (32 streams)
 * on a 2-core laptop at full context: see scripts/bench-policy.ts. 3 layers rather than 2 because
 * REFERENCE.md §5 found the copying behaviour the toy domains need wants depth.
 */
export const DEFAULT_MODEL_CONFIG: Omit<ModelConfig, 'vocabSize'> = {
  contextLength: 256,
  dModel: 128,
  nLayers: 3,
  nHeads: 4,
  mlpRatio: 4,
  tokenShift: true,
  lnEps: 1e-5,
};

export function modelConfig(vocabSize: number, overrides: Partial<ModelConfig> = {}): ModelConfig {
  return validateConfig({ ...DEFAULT_MODEL_CONFIG, vocabSize, ...overrides });
}

export function validateConfig(c: ModelConfig, source = 'model config'): ModelConfig {
  const ints: (keyof ModelConfig)[] = ['vocabSize', 'contextLength', 'dModel', 'nLayers', 'nHeads', 'mlpRatio'];
  for (const k of ints) {
    const v = c[k];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw new Error(`${source}: ${k} must be a positive integer, got ${JSON.stringify(v)}`);
  }
  if (c.dModel % c.nHeads !== 0) throw new Error(`${source}: dModel ${c.dModel} is not divisible by nHeads ${c.nHeads}`);
  if (typeof c.tokenShift !== 'boolean') throw new Error(`${source}: tokenShift must be true or false`);
  if (typeof c.lnEps !== 'number' || !(c.lnEps > 0)) throw new Error(`${source}: lnEps must be a positive number`);
  return c;
}

export interface ParamSpec {
  name: string;
  shape: number[];
  init: 'normal' | 'ones' | 'zeros';
  /** Standard deviation for 'normal'. */
  std?: number;
}

/**
 * The parameters in their canonical order (the order of weights.bin). Attention weights are stored
 * per head — q, v: [d, dh]; k already transposed, [dh, d]; output [dh, d] — because the training
 * path runs attention as per-(sequence, head) 2-D matMuls, and this layout gives it each head's
 * q, kᵀ and v without transposing or slicing a fused weight (REFERENCE.md §5, change 3). Linear
 * layers have no biases: a broadcast bias's gradient is a column reduction that the wasm backend
 * runs through a transpose.
 */
export function paramSpecs(c: ModelConfig): ParamSpec[] {
  const d = c.dModel;
  const dh = d / c.nHeads;
  const std = 0.02;
  // GPT-2's scaling of residual-branch outputs keeps the residual stream's variance flat with depth.
  const outStd = std / Math.sqrt(2 * c.nLayers);
  const specs: ParamSpec[] = [{ name: 'tokEmb', shape: [c.vocabSize, d], init: 'normal', std }];
  if (c.tokenShift) specs.push({ name: 'prevEmb', shape: [c.vocabSize, d], init: 'normal', std });
  specs.push({ name: 'posEmb', shape: [c.contextLength, d], init: 'normal', std: 0.01 });
  for (let l = 0; l < c.nLayers; l++) {
    const p = `layer${l}.`;
    specs.push({ name: p + 'ln1.g', shape: [d], init: 'ones' }, { name: p + 'ln1.b', shape: [d], init: 'zeros' });
    for (let h = 0; h < c.nHeads; h++) {
      specs.push(
        { name: `${p}head${h}.q`, shape: [d, dh], init: 'normal', std },
        { name: `${p}head${h}.kT`, shape: [dh, d], init: 'normal', std },
        { name: `${p}head${h}.v`, shape: [d, dh], init: 'normal', std },
        { name: `${p}head${h}.o`, shape: [dh, d], init: 'normal', std: outStd },
      );
    }
    specs.push(
      { name: p + 'ln2.g', shape: [d], init: 'ones' },
      { name: p + 'ln2.b', shape: [d], init: 'zeros' },
      { name: p + 'mlp.up', shape: [d, c.mlpRatio * d], init: 'normal', std },
      { name: p + 'mlp.down', shape: [c.mlpRatio * d, d], init: 'normal', std: outStd },
    );
  }
  specs.push(
    { name: 'lnf.g', shape: [d], init: 'ones' },
    { name: 'lnf.b', shape: [d], init: 'zeros' },
    { name: 'head', shape: [d, c.vocabSize], init: 'normal', std },
  );
  return specs;
}

export function parameterCount(c: ModelConfig): number {
  return paramSpecs(c).reduce((n, s) => n + s.shape.reduce((a, b) => a * b, 1), 0);
}
