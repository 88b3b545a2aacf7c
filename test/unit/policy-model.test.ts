import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTf, tf, withStockMatMulGradient, type Tensor } from '../../src/policy/embedded/tf.js';
import { createModel, TransformerModel, type EmbeddingMode } from '../../src/policy/embedded/model.js';
import { paramSpecs, parameterCount, modelConfig, type ModelConfig } from '../../src/policy/embedded/config.js';
import { weightedNll } from '../../src/policy/embedded/ops.js';
import { loadModelFolder, saveModelFolder, VersionStore } from '../../src/policy/embedded/store.js';
import { Trainer } from '../../src/policy/embedded/trainer.js';
import { tinyConfig, tinyTokenizer } from './policy-fixtures.js';

before(async () => {
  await loadTf();
});

/**
 * The same network written the textbook way with stock tfjs ops only: gather embeddings, fused
 * q/k/v, 4-D attention with matMul's transpose flag, logSoftmax cross-entropy. Used as the reference.
 */
function referenceLoss(
  P: Record<string, Tensor>,
  c: ModelConfig,
  ids: Int32Array,
  B: number,
  T: number,
  rows: Int32Array,
  targets: Int32Array,
  w: Float32Array,
): Tensor {
  const t = tf();
  const d = c.dModel;
  const H = c.nHeads;
  const dh = d / H;
  const ln = (x: Tensor, g: Tensor, b: Tensor) => {
    const { mean, variance } = t.moments(x, -1, true);
    return t.add(t.mul(t.div(t.sub(x, mean), t.sqrt(t.add(variance, c.lnEps))), g), b);
  };
  const prev = new Int32Array(B * T);
  for (let b = 0; b < B; b++) for (let i = 1; i < T; i++) prev[b * T + i] = ids[b * T + i - 1];
  let x = t.add(t.gather(P.tokEmb, t.tensor1d(ids, 'int32')), t.gather(P.prevEmb, t.tensor1d(prev, 'int32')));
  x = t.reshape(t.add(t.reshape(x, [B, T, d]), t.slice(P.posEmb, [0, 0], [T, d])), [B * T, d]);
  const mask = t.mul(t.sub(1, t.linalg.bandPart(t.ones([T, T]), -1, 0)), -1e9);
  const heads = [...Array(H).keys()];
  const toHeads = (m: Tensor) => t.transpose(t.reshape(m, [B, T, H, dh]), [0, 2, 1, 3]);
  for (let l = 0; l < c.nLayers; l++) {
    const p = `layer${l}.`;
    const h = ln(x, P[p + 'ln1.g'], P[p + 'ln1.b']);
    const wq = t.concat(
      heads.map((i) => P[`${p}head${i}.q`]),
      1,
    );
    const wk = t.concat(
      heads.map((i) => t.transpose(P[`${p}head${i}.kT`])),
      1,
    );
    const wv = t.concat(
      heads.map((i) => P[`${p}head${i}.v`]),
      1,
    );
    const wo = t.concat(
      heads.map((i) => P[`${p}head${i}.o`]),
      0,
    );
    const q = toHeads(t.matMul(h, wq));
    const k = toHeads(t.matMul(h, wk));
    const v = toHeads(t.matMul(h, wv));
    const att = t.softmax(t.add(t.mul(t.matMul(q, k, false, true), 1 / Math.sqrt(dh)), mask));
    const o = t.reshape(t.transpose(t.matMul(att, v), [0, 2, 1, 3]), [B * T, d]);
    x = t.add(x, t.matMul(o, wo));
    const u = t.matMul(ln(x, P[p + 'ln2.g'], P[p + 'ln2.b']), P[p + 'mlp.up']);
    x = t.add(x, t.matMul(t.mul(u, t.sigmoid(t.mul(u, 1.702))), P[p + 'mlp.down']));
  }
  const hf = t.gather(ln(x, P['lnf.g'], P['lnf.b']), t.tensor1d(rows, 'int32'));
  const lp = t.logSoftmax(t.matMul(hf, P.head));
  const picked = t.sum(t.mul(lp, t.oneHot(t.tensor1d(targets, 'int32'), c.vocabSize)), -1);
  return t.neg(t.sum(t.mul(picked, t.tensor1d(w))));
}

function batchFixture(c: ModelConfig, B: number, T: number, seed = 3) {
  let s = seed;
  const rnd = () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
  const ids = Int32Array.from({ length: B * T }, () => Math.floor(rnd() * c.vocabSize));
  const rows: number[] = [];
  const targets: number[] = [];
  const w: number[] = [];
  for (let b = 0; b < B; b++) {
    for (let i = 0; i < T - 1; i++) {
      if (rnd() < 0.3) continue; // some positions carry no loss
      rows.push(b * T + i);
      targets.push(ids[b * T + i + 1]);
      w.push(0.1 + rnd());
    }
  }
  return { ids, rows: Int32Array.from(rows), targets: Int32Array.from(targets), w: Float32Array.from(w) };
}

function ourGrads(m: TransformerModel, f: ReturnType<typeof batchFixture>, B: number, T: number, embedding: EmbeddingMode) {
  const t = tf();
  const { value, grads } = t.variableGrads(() => weightedNll(m.logitsAt(m.hidden(f.ids, B, T, { embedding }), f.rows), f.targets, f.w) as never, m.variables());
  const out = new Map<string, Float32Array>();
  m.specs.forEach((s) => out.set(s.name, grads[m.p(s.name).name].dataSync() as Float32Array));
  const loss = value.dataSync()[0];
  value.dispose();
  for (const g of Object.values(grads)) g.dispose();
  return { loss, grads: out };
}

test('the fast model (custom ops, explicit-transpose matMul gradient, per-head 2-D attention) matches stock tfjs gradients', () => {
  const t = tf();
  const tok = tinyTokenizer();
  const c = tinyConfig(tok.size, { contextLength: 16 });
  const m = createModel(c, 7);
  // Larger weights than the init so the check is not dominated by near-zero activations.
  for (const v of m.variables()) v.assign(t.mul(v, v.rank === 2 ? 10 : 1));
  const B = 3;
  const T = 12;
  const f = batchFixture(c, B, T);
  const ours = ourGrads(m, f, B, T, 'gather');
  const oneHot = ourGrads(m, f, B, T, 'onehot');
  // Reference on the pure-JS CPU backend with tfjs's own gather and BatchMatMul gradients.
  const weights = new Map(m.specs.map((s) => [s.name, Float32Array.from(m.p(s.name).dataSync() as Float32Array)]));
  let refLoss = 0;
  const refGrads = new Map<string, Float32Array>();
  t.setBackend('cpu');
  try {
    withStockMatMulGradient(() => {
      t.tidy(() => {
        const names = m.specs.map((s) => s.name);
        const P: Record<string, Tensor> = {};
        m.specs.forEach((s) => (P[s.name] = t.tensor(weights.get(s.name)!, s.shape)));
        const g = t.grads((...xs: Tensor[]) => {
          const Q: Record<string, Tensor> = {};
          names.forEach((n, i) => (Q[n] = xs[i]));
          return referenceLoss(Q, c, f.ids, B, T, f.rows, f.targets, f.w);
        });
        const gs = g(names.map((n) => P[n]));
        names.forEach((n, i) => refGrads.set(n, gs[i].dataSync() as Float32Array));
        refLoss = referenceLoss(P, c, f.ids, B, T, f.rows, f.targets, f.w).dataSync()[0];
      });
    });
  } finally {
    t.setBackend('wasm');
  }
  assert.ok(Math.abs(ours.loss - refLoss) < 1e-4 * Math.max(1, Math.abs(refLoss)), `loss ${ours.loss} vs ${refLoss}`);
  let worst = 0;
  let worstName = '';
  for (const [name, ref] of refGrads) {
    const scale = Math.max(1e-3, ...ref.map(Math.abs));
    for (const [label, mine] of [
      ['gather', ours.grads.get(name)!],
      ['onehot', oneHot.grads.get(name)!],
    ] as const) {
      assert.equal(mine.length, ref.length, name);
      for (let i = 0; i < ref.length; i++) {
        const err = Math.abs(mine[i] - ref[i]) / scale;
        if (err > worst) {
          worst = err;
          worstName = `${label} ${name}[${i}] ${mine[i]} vs ${ref[i]}`;
        }
      }
    }
  }
  assert.ok(worst < 1e-4, `largest relative gradient difference ${worst.toExponential(2)} at ${worstName}`);
  m.dispose();
});

test('default config has ~1 M parameters and builds', () => {
  const c = modelConfig(1024);
  assert.equal(c.contextLength, 256);
  assert.equal(c.dModel, 128);
  const n = parameterCount(c);
  assert.ok(n > 500_000 && n < 1_500_000, `${n}`);
  assert.equal(paramSpecs(c).length, new Set(paramSpecs(c).map((s) => s.name)).size);
});

test('weights are content-addressed: same seed → same id; save/load round-trips; bad files are named', () => {
  const tok = tinyTokenizer();
  const c = tinyConfig(tok.size);
  const a = createModel(c, 1);
  const b = createModel(c, 1);
  const other = createModel(c, 2);
  assert.equal(a.versionId(), b.versionId());
  assert.notEqual(a.versionId(), other.versionId());
  assert.match(a.versionId(), /^[0-9a-f]{16}$/);
  const dir = mkdtempSync(join(tmpdir(), 'whale-model-'));
  try {
    const id = saveModelFolder(join(dir, 'model', 'base'), a, tok, { parent: null });
    assert.equal(id, a.versionId());
    const loaded = loadModelFolder(join(dir, 'model', 'base'));
    assert.equal(loaded.version, id);
    assert.deepEqual(loaded.tokenizer.tokens, tok.tokens);
    const x = Int32Array.from([tok.bosId, 10, 11, 12]);
    assert.deepEqual(loaded.model.logits(x, 1, 4), a.logits(x, 1, 4));
    loaded.model.dispose();

    const store = new VersionStore(join(dir, 'versions'));
    assert.equal(store.save(a, tok, { parent: null }), id);
    assert.equal(store.save(b, tok, { parent: null }), id, 'same weights, same version');
    assert.equal(store.importFolder(join(dir, 'model', 'base')), id);
    assert.deepEqual(store.list(), [id]);
    const re = store.load(id);
    assert.equal(re.model.versionId(), id);
    re.model.dispose();

    rmSync(join(dir, 'model', 'base', 'weights.bin'));
    assert.throws(() => loadModelFolder(join(dir, 'model', 'base')), /missing .*base[/\\]weights\.bin.*npm run pretrain/);
    saveModelFolder(join(dir, 'bad'), a, tok, { parent: null });
    writeFileSync(join(dir, 'bad', 'weights.bin'), Buffer.alloc(8));
    assert.throws(() => loadModelFolder(join(dir, 'bad')), /weights\.bin/);
    assert.ok(!existsSync(join(dir, 'versions', '.tmp')), 'no temporary folders left');
  } finally {
    rmSync(dir, { recursive: true, force: true });
    for (const m of [a, b, other]) m.dispose();
  }
});

test('no tensors leak across many training steps', () => {
  const t = tf();
  const tok = tinyTokenizer();
  const m = createModel(tinyConfig(tok.size), 5);
  const trainer = new Trainer(m, { learningRate: 1e-3, adam: { weightDecay: 0.01 } });
  const seqs = [
    [tok.bosId, 20, 21, 22, 23, 24],
    [tok.bosId, 30, 31],
  ];
  trainer.pretrainStep(seqs);
  trainer.pretrainStep(seqs);
  const before = t.memory().numTensors;
  for (let i = 0; i < 200; i++) trainer.pretrainStep(seqs);
  assert.equal(t.memory().numTensors, before);
  trainer.dispose();
  m.dispose();
});
