/**
 * Embedded-policy benchmark: plain matMul throughput, training tokens/s of the default model at its
 * default context, and sampling tokens/s with one stream and with 32 concurrent streams (KV cache,
 * continuous batching). Run: `npx tsx scripts/bench-policy.ts [repeats]`.
 *
 * Each figure is the median of `repeats` measurements (the machine may be shared, so single
 * measurements are noisy). The vocabulary is synthetic, 1,024 tokens: a typical domain vocabulary.
 */
import { pathToFileURL } from 'node:url';
import { modelConfig, parameterCount } from '../src/policy/embedded/config.js';
import { createModel } from '../src/policy/embedded/model.js';
import { BatchSampler } from '../src/policy/embedded/sampler.js';
import { loadTf, tf } from '../src/policy/embedded/tf.js';
import { buildVocabulary } from '../src/policy/embedded/tokenizer.js';
import { Trainer } from '../src/policy/embedded/trainer.js';

const VOCAB = 1024;
export const TARGETS = { trainTokensPerSec: 1500, batchedSampleTokensPerSec: 4000 };

function median(xs: number[]): number {
  const s = xs.slice().sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function matMulGflops(n: number, iters: number): number {
  const t = tf();
  const a = t.randomNormal([n, n]);
  const b = t.randomNormal([n, n]);
  const run = () => t.tidy(() => void t.matMul(a, b).dataSync());
  run();
  const t0 = performance.now();
  for (let i = 0; i < iters; i++) run();
  const s = (performance.now() - t0) / 1000;
  a.dispose();
  b.dispose();
  return (2 * n ** 3 * iters) / s / 1e9;
}

export async function benchPolicy(opts: { repeats?: number; log?: (line: string) => void } = {}): Promise<Record<string, number>> {
  const repeats = opts.repeats ?? 3;
  const log = opts.log ?? ((l: string) => console.log(l));
  await loadTf();
  const out: Record<string, number> = {};

  out.matmul256Gflops = median(Array.from({ length: repeats }, () => matMulGflops(256, 50)));
  out.matmul512Gflops = median(Array.from({ length: repeats }, () => matMulGflops(512, 10)));

  const words = Array.from({ length: VOCAB }, (_, i) => `w${i}`);
  // Fixed tokens (specials, characters, bytes) take 264 places; required words fill the rest in pairs.
  const tok = buildVocabulary({ requiredWords: words.slice(0, (VOCAB - 264) / 2), corpus: [], maxSize: VOCAB });
  const cfg = modelConfig(tok.size);
  const C = cfg.contextLength;
  out.vocabSize = tok.size;
  out.parameters = parameterCount(cfg);
  out.contextLength = C;
  out.layers = cfg.nLayers;
  out.dModel = cfg.dModel;

  // Training: batches of 8 full-context sequences, a full optimizer step each (forward, backward, AdamW).
  const model = createModel(cfg, 1);
  const trainer = new Trainer(model, { learningRate: 1e-4 });
  const B = 8;
  let seed = 1;
  const seq = () => [tok.bosId, ...Array.from({ length: C - 1 }, () => 7 + ((seed = (seed * 48271) % 2147483647) % (tok.size - 7)))];
  trainer.pretrainStep(Array.from({ length: B }, seq)); // warm-up
  const trainRates: number[] = [];
  for (let r = 0; r < repeats; r++) {
    const batch = Array.from({ length: B }, seq);
    const t0 = performance.now();
    trainer.pretrainStep(batch);
    trainRates.push((B * C) / ((performance.now() - t0) / 1000));
  }
  out.trainTokensPerSec = median(trainRates);
  trainer.dispose();

  // Sampling: prompts of 16 tokens, 200 new tokens each (stop tokens ignored by banning none: the
  // random model may emit <|end|> early, so we count the tokens actually generated).
  const sampler = new BatchSampler(model, tok);
  const prompt = (i: number) => [tok.bosId, ...Array.from({ length: 15 }, (_, k) => 7 + ((i * 31 + k * 17) % (tok.size - 7)))];
  const sampleRate = async (streams: number) => {
    const t0 = performance.now();
    const res = await Promise.all(
      Array.from({ length: streams }, (_, i) => sampler.generate({ promptIds: prompt(i), temperature: 1, seed: i, maxTokens: 200 })),
    );
    const n = res.reduce((a, r) => a + r.completionTokenIds.length, 0);
    return n / ((performance.now() - t0) / 1000);
  };
  await sampleRate(4); // warm-up
  const single: number[] = [];
  const batched: number[] = [];
  for (let r = 0; r < repeats; r++) {
    single.push(await sampleRate(1));
    batched.push(await sampleRate(32));
  }
  out.sampleTokensPerSec1 = median(single);
  out.sampleTokensPerSec32 = median(batched);
  out.batchedOverSingle = out.sampleTokensPerSec32 / out.sampleTokensPerSec1;
  out.maxBatchSeen = sampler.stats.maxBatch;
  sampler.close();
  model.dispose();

  out.trainVsTarget = out.trainTokensPerSec / TARGETS.trainTokensPerSec;
  out.batchedSampleVsTarget = out.sampleTokensPerSec32 / TARGETS.batchedSampleTokensPerSec;

  const f = (x: number) => (x >= 100 ? Math.round(x).toLocaleString('en-US') : x.toFixed(2));
  log(
    `embedded policy bench — default model: ${cfg.nLayers} layers, d ${cfg.dModel}, ${cfg.nHeads} heads, context ${C}, vocab ${tok.size}, ${f(out.parameters)} parameters (median of ${repeats})`,
  );
  log(`  matMul 256×256           ${f(out.matmul256Gflops).padStart(10)} GFLOP/s`);
  log(`  matMul 512×512           ${f(out.matmul512Gflops).padStart(10)} GFLOP/s`);
  log(
    `  training (8×${C})        ${f(out.trainTokensPerSec).padStart(10)} tokens/s   target ${f(TARGETS.trainTokensPerSec)}  (×${out.trainVsTarget.toFixed(2)})`,
  );
  log(`  sampling, 1 stream       ${f(out.sampleTokensPerSec1).padStart(10)} tokens/s`);
  log(
    `  sampling, 32 streams     ${f(out.sampleTokensPerSec32).padStart(10)} tokens/s   target ${f(TARGETS.batchedSampleTokensPerSec)}  (×${out.batchedSampleVsTarget.toFixed(2)}); ${out.batchedOverSingle.toFixed(1)}× one stream`,
  );
  return out;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const repeats = Number(process.argv[2] ?? 3);
  benchPolicy({ repeats }).catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
