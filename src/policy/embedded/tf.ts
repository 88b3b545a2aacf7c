/**
 * Lazy access to tfjs on the wasm backend.
 *
 * tfjs takes about a second to import, so nothing in this folder imports it at module load: callers
 * `await loadTf()` once, after which `tf()` hands back the module synchronously (model code runs
 * inside `tf.tidy`, which cannot await).
 */
import type * as TF from '@tensorflow/tfjs';

export type Tf = typeof TF;
export type Tensor = TF.Tensor;
export type Tensor1D = TF.Tensor1D;
export type Tensor2D = TF.Tensor2D;
export type Variable = TF.Variable;

let loaded: Tf | undefined;
let loading: Promise<Tf> | undefined;
let stockBatchMatMulGrad: TF.GradConfig | undefined;

/** The loaded tfjs module; throws when `loadTf()` has not finished yet (a bug in the caller). */
export function tf(): Tf {
  if (!loaded) throw new Error('tfjs is not loaded yet: await loadTf() before using the embedded model');
  return loaded;
}

export function loadTf(): Promise<Tf> {
  if (loaded) return Promise.resolve(loaded);
  loading ??= (async () => {
    const mod = (await import('@tensorflow/tfjs')) as Tf;
    await import('@tensorflow/tfjs-backend-wasm');
    const ok = await mod.setBackend('wasm');
    if (!ok) throw new Error('tfjs could not start its wasm backend (@tensorflow/tfjs-backend-wasm)');
    await mod.ready();
    installFastMatMulGradient(mod);
    loaded = mod;
    return mod;
  })();
  return loading;
}

/**
 * The stock BatchMatMul gradient uses matMul's transpose flags, which the wasm backend runs through a
 * naive loop at ~3 GFLOP/s instead of XNNPACK at ~40 (REFERENCE.md §5, re-measured here). Transposing
 * explicitly and multiplying plain is ~10x faster. The registry is global, so this affects every
 * tfjs user in the process; the result is the same up to float rounding.
 */
function installFastMatMulGradient(t: Tf): void {
  if (stockBatchMatMulGrad) return;
  stockBatchMatMulGrad = t.getGradient('BatchMatMul');
  t.registerGradient({
    kernelName: 'BatchMatMul',
    inputsToSave: ['a', 'b'],
    gradFunc: (dy, saved, attrs) => {
      const [a, b] = saved;
      const { transposeA, transposeB } = attrs as unknown as { transposeA: boolean; transposeB: boolean };
      const g = Array.isArray(dy) ? dy[0] : dy;
      const T = (x: TF.Tensor) => transposeLast2(t, x);
      const mm = (x: TF.Tensor, y: TF.Tensor) => t.matMul(x, y);
      if (!transposeA && !transposeB) return { a: () => mm(g, T(b)), b: () => mm(T(a), g) };
      if (!transposeA && transposeB) return { a: () => mm(g, b), b: () => mm(T(g), a) };
      if (transposeA && !transposeB) return { a: () => mm(b, T(g)), b: () => mm(a, g) };
      return { a: () => mm(T(b), T(g)), b: () => mm(T(g), T(a)) };
    },
  });
}

function transposeLast2(t: Tf, x: TF.Tensor): TF.Tensor {
  const r = x.rank;
  if (r === 2) return t.transpose(x);
  const perm = [...Array(r).keys()];
  [perm[r - 2], perm[r - 1]] = [perm[r - 1], perm[r - 2]];
  return t.transpose(x, perm);
}

/**
 * Runs `fn` with tfjs's stock BatchMatMul gradient, for tests that check ours against it.
 * Not re-entrant and not for production use.
 */
export function withStockMatMulGradient<T>(fn: () => T): T {
  const t = tf();
  const ours = t.getGradient('BatchMatMul');
  if (!stockBatchMatMulGrad || !ours) throw new Error('fast matMul gradient not installed');
  t.registerGradient(stockBatchMatMulGrad);
  try {
    return fn();
  } finally {
    t.registerGradient(ours);
  }
}

/** A view of a wasm tensor's memory, for the KV cache's in-place writes (see sampler.ts). */
export function heapView(x: TF.Tensor): Float32Array {
  const backend = tf().backend() as unknown as {
    typedArrayFromHeap?: (t: { shape: number[]; dtype: string; dataId: object }) => Float32Array;
  };
  if (typeof backend.typedArrayFromHeap !== 'function') {
    throw new Error('the embedded sampler needs the tfjs wasm backend (typedArrayFromHeap missing)');
  }
  return backend.typedArrayFromHeap({ shape: x.shape, dtype: x.dtype, dataId: x.dataId });
}
