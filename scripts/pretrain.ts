// `npm run pretrain`: reproduces the shipped base model in resources/model/base from scratch.
// The corpus is the toy domains' noisy-expert transcripts (src/domains/corpus.ts), each with a fresh
// knowledge base; the tokenizer makes every domain word one token (REFERENCE.md §5: a byte-level
// tiny model cannot read a value out of its context, a word-level one can).
//
//   npm run pretrain -- [--steps N] [--batch 8] [--lr 2e-3] [--seed 1] [--out resources/model/base]
//
// Continued pretraining (the vocabulary of --init is kept: frozen), e.g. resources/model/kbchain:
//   npm run pretrain -- --init resources/model/base --mix kbchain --steps 250 --lr 5e-4 --seed 2 --save-every 125 --out resources/model/kbchain
//
// Time on the 2-core development machine is printed at the end and recorded in meta.json.
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { ChatMessage } from '../src/core/trajectory.js';
import { CORPUS_MIX, KBCHAIN_CORPUS_MIX, pretrainingTranscripts, requiredWords } from '../src/domains/corpus.js';
import {
  Trainer,
  buildVocabulary,
  createModel,
  loadModelFolder,
  loadTf,
  modelConfig,
  parameterCount,
  saveModelFolder,
  transcriptToSequence,
} from '../src/policy/embedded/index.js';

const { values } = parseArgs({
  options: {
    steps: { type: 'string', default: '7000' },
    batch: { type: 'string', default: '8' },
    lr: { type: 'string', default: '2e-3' },
    seed: { type: 'string', default: '1' },
    out: { type: 'string', default: 'resources/model/base' },
    'vocab-size': { type: 'string', default: '1150' },
    'save-every': { type: 'string', default: '500' },
    /** A model folder to continue from (its tokenizer is kept as is). */
    init: { type: 'string' },
    /** The corpus mixture: 'base' (kbqa + ramble, the shipped base model's) or 'kbchain' (all three domains). */
    mix: { type: 'string', default: 'base' },
  },
});
const MIXES = { base: CORPUS_MIX, kbchain: KBCHAIN_CORPUS_MIX } as const;
if (!(values.mix! in MIXES)) {
  console.error(`--mix must be one of ${Object.keys(MIXES).join(', ')} (got '${values.mix}')`);
  process.exit(2);
}
const mix = MIXES[values.mix as keyof typeof MIXES];
const steps = Number(values.steps);
const batch = Number(values.batch);
const peakLr = Number(values.lr);
const seed = Number(values.seed);
const out = resolve(values.out!);
const warmup = Math.min(200, Math.floor(steps / 10));

await loadTf();
const corpusText = (function* () {
  const gen = pretrainingTranscripts(seed + 1000);
  for (let i = 0; i < 20_000; i++) yield (gen.next().value as ChatMessage[]).map((m) => m.content).join('\n');
})();
const init = values.init ? loadModelFolder(resolve(values.init)) : undefined;
const tokenizer =
  init?.tokenizer ?? buildVocabulary({ requiredWords: requiredWords(), corpus: corpusText, maxSize: Number(values['vocab-size']), minCount: 20 });
const config = init?.model.config ?? modelConfig(tokenizer.size);
const model = init?.model ?? createModel(config, seed);
if (init) {
  const missing = requiredWords().filter((w) => tokenizer.encode(w).length !== 1);
  if (missing.length > 0)
    throw new Error(`--init ${values.init}: its frozen vocabulary lacks ${missing.length} required words (${missing.slice(0, 5).join(', ')}…)`);
}
console.log(`vocabulary ${tokenizer.size} tokens; model ${JSON.stringify(config)}; ${parameterCount(config)} parameters`);

const trainer = new Trainer(model, { learningRate: peakLr, adam: { beta1: 0.9, beta2: 0.98, eps: 1e-8, weightDecay: 0.01 }, clipNorm: 1 });
const transcripts = pretrainingTranscripts(seed, mix);
const started = Date.now();
let tokens = 0;
let emaLoss = NaN;

function lrAt(step: number): number {
  if (step < warmup) return (peakLr * (step + 1)) / warmup;
  const p = (step - warmup) / Math.max(1, steps - warmup);
  return 0.05 * peakLr + 0.95 * peakLr * 0.5 * (1 + Math.cos(Math.PI * p));
}

function save(step: number): void {
  // Write a sibling folder, then swap, so an interrupted save never leaves mixed files.
  const tmp = `${out}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(dirname(out), { recursive: true });
  const version = saveModelFolder(tmp, model, tokenizer, {
    parent: init?.version ?? null,
    train: {
      kind: init ? 'continued-pretrain' : 'pretrain',
      mix: values.mix,
      steps: step,
      batch,
      peakLr,
      seed,
      tokens,
      minutes: +((Date.now() - started) / 60000).toFixed(1),
      finalLoss: +emaLoss.toFixed(4),
      script: ['npm run pretrain --', ...process.argv.slice(2)].join(' '),
    },
  });
  if (existsSync(out)) rmSync(out, { recursive: true, force: true });
  renameSync(tmp, out);
  console.log(`saved ${out} (version ${version}) at step ${step}`);
}

for (let step = 0; step < steps; step++) {
  const seqs: number[][] = [];
  const weights: number[][] = [];
  for (let i = 0; i < batch; i++) {
    const s = transcriptToSequence(tokenizer, transcripts.next().value as ChatMessage[]);
    seqs.push(s.tokens);
    weights.push(s.weights);
  }
  trainer.learningRate = lrAt(step);
  const r = trainer.pretrainStep(seqs, weights);
  tokens += r.tokens;
  emaLoss = Number.isNaN(emaLoss) ? r.loss : 0.98 * emaLoss + 0.02 * r.loss;
  if (step % 50 === 0 || step === steps - 1) {
    const secs = (Date.now() - started) / 1000;
    console.log(
      `step ${step}/${steps} loss ${emaLoss.toFixed(3)} lr ${trainer.learningRate.toExponential(2)} ${Math.round(tokens / secs)} tok/s ${(secs / 60).toFixed(1)} min`,
    );
  }
  if ((step + 1) % Number(values['save-every']) === 0 && step + 1 < steps) save(step + 1);
}
save(steps);
console.log(`pretraining done: ${steps} steps, ${tokens} tokens, ${((Date.now() - started) / 60000).toFixed(1)} minutes`);
