/**
 * Differentiable building blocks with hand-written gradients, each replacing a tfjs default that is
 * missing or slow on the wasm backend. All are exact (same maths as the stock ops, up to rounding);
 * the gradient test in test/unit/policy-model.test.ts checks the whole model against stock tfjs.
 */
import { tf, type Tensor, type Tf } from './tf.js';

type Save = (ts: Tensor[]) => void;
type OpBody = (inputs: Tensor[], save: Save) => { value: Tensor; gradFunc: (dy: Tensor, saved: Tensor[]) => Tensor[] };

/** tf.customGrad with positional inputs, typed: `body(inputs, save)`. */
function customOp(nInputs: number, body: OpBody): (...inputs: Tensor[]) => Tensor {
  const f = (...args: unknown[]) => body(args.slice(0, nInputs) as Tensor[], args[nInputs] as Save);
  return tf().customGrad(f as unknown as Parameters<Tf['customGrad']>[0]) as (...inputs: Tensor[]) => Tensor;
}

/**
 * Rows `idx` of `table` ([R, d] → [idx.length, d]). Forward is tfjs's gather; the backward pass
 * (missing on wasm: UnsortedSegmentSum is not registered) is a scatter-add done in plain JS, which
 * is cheaper than the one-hot matMul REFERENCE.md §5 used (that costs 2·N·V·d FLOPs each way).
 */
export function gatherRows(table: Tensor, idx: Int32Array): Tensor {
  const t = tf();
  const [R, d] = table.shape;
  const op = customOp(1, ([x]) => {
    const value = t.tidy(() => t.gather(x, t.tensor1d(idx, 'int32')));
    const gradFunc = (dy: Tensor) => {
      const g = dy.dataSync() as Float32Array;
      const out = new Float32Array(R * d);
      for (let i = 0; i < idx.length; i++) {
        const src = i * d;
        const dst = idx[i] * d;
        for (let j = 0; j < d; j++) out[dst + j] += g[src + j];
      }
      return [t.tensor2d(out, [R, d])];
    };
    return { value, gradFunc };
  });
  return op(table);
}

/**
 * The one-hot × matMul embedding of REFERENCE.md §5 (kept for comparison in the benchmark): forward
 * onehot(ids) · E, backward onehotᵀ · dy with the transposed one-hot built directly in JS.
 */
export function oneHotRows(table: Tensor, idx: Int32Array): Tensor {
  const t = tf();
  const V = table.shape[0];
  const N = idx.length;
  const op = customOp(1, ([x]) => {
    const oh = new Float32Array(N * V);
    for (let i = 0; i < N; i++) oh[i * V + idx[i]] = 1;
    const value = t.tidy(() => t.matMul(t.tensor2d(oh, [N, V]), x));
    const gradFunc = (dy: Tensor) =>
      t.tidy(() => {
        const ohT = new Float32Array(V * N);
        for (let i = 0; i < N; i++) ohT[idx[i] * N + i] = 1;
        return [t.matMul(t.tensor2d(ohT, [V, N]), dy)];
      });
    return { value, gradFunc };
  });
  return op(table);
}

/** Column sums of a 2-D tensor as a matMul with a ones row: tf.sum over axis 0 transposes first on wasm. */
function colSum(x: Tensor): Tensor {
  const t = tf();
  const [n, d] = x.shape;
  return t.reshape(t.matMul(t.ones([1, n]), x), [d]);
}

/** LayerNorm over the last axis of x [N, d] with gain g and bias b, with a fused backward pass. */
export function layerNorm(x: Tensor, g: Tensor, b: Tensor, eps: number): Tensor {
  const t = tf();
  const op = customOp(3, ([xi, gi, bi], save) => {
    const mean = t.mean(xi, -1, true);
    const xc = t.sub(xi, mean);
    const variance = t.mean(t.square(xc), -1, true);
    const rstd = t.rsqrt(t.add(variance, eps));
    const xhat = t.mul(xc, rstd);
    save([xhat, rstd, gi]);
    const value = t.add(t.mul(xhat, gi), bi);
    const gradFunc = (g0: Tensor, saved: Tensor[]) => {
      const [xh, rs, gg] = saved;
      const dxhat = t.mul(g0, gg);
      const dx = t.mul(rs, t.sub(t.sub(dxhat, t.mean(dxhat, -1, true)), t.mul(xh, t.mean(t.mul(dxhat, xh), -1, true))));
      return [dx, colSum(t.mul(g0, xh)), colSum(g0)];
    };
    return { value, gradFunc };
  });
  return op(x, g, b);
}

const GELU_K = 1.702;

/** GELU in its sigmoid form x·σ(1.702x): close to the erf GELU, and tanh is ~7x slower than sigmoid on wasm. */
export function gelu(x: Tensor): Tensor {
  const t = tf();
  const op = customOp(1, ([xi], save) => {
    const s = t.sigmoid(t.mul(xi, GELU_K));
    save([xi, s]);
    const gradFunc = (g0: Tensor, saved: Tensor[]) => {
      const [xs, ss] = saved;
      // d/dx x·σ(kx) = σ + k·x·σ·(1−σ)
      const deriv = t.add(ss, t.mul(t.mul(xs, GELU_K), t.mul(ss, t.sub(1, ss))));
      return [t.mul(g0, deriv)];
    };
    return { value: t.mul(xi, s), gradFunc };
  });
  return op(x);
}

/**
 * Σᵢ wᵢ · (−log softmax(logitsᵢ)[targetᵢ]) over rows of logits [N, V], computed in JS in one pass
 * that also leaves the gradient (softmax − onehot)·wᵢ ready for the backward pass. Rows with
 * wᵢ = 0 contribute exactly nothing, to the loss or to the gradient.
 */
export function weightedNll(logits: Tensor, targets: Int32Array, weights: Float32Array): Tensor {
  const t = tf();
  const [N, V] = logits.shape;
  if (targets.length !== N || weights.length !== N) throw new Error(`weightedNll: ${N} rows but ${targets.length} targets and ${weights.length} weights`);
  const op = customOp(1, ([x]) => {
    const z = x.dataSync() as Float32Array;
    const grad = new Float32Array(N * V);
    let loss = 0;
    for (let i = 0; i < N; i++) {
      const w = weights[i];
      if (w === 0) continue;
      const o = i * V;
      let m = -Infinity;
      for (let j = 0; j < V; j++) if (z[o + j] > m) m = z[o + j];
      let s = 0;
      for (let j = 0; j < V; j++) {
        const e = Math.exp(z[o + j] - m);
        grad[o + j] = e;
        s += e;
      }
      const lse = m + Math.log(s);
      loss += w * (lse - z[o + targets[i]]);
      const scale = w / s;
      for (let j = 0; j < V; j++) grad[o + j] *= scale;
      grad[o + targets[i]] -= w;
    }
    const gradFunc = (dy: Tensor) => [t.mul(t.tensor2d(grad, [N, V]), dy)];
    return { value: t.scalar(loss), gradFunc };
  });
  return op(logits);
}
