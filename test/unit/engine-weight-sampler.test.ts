// The persistent RSFT sampler: batches are a pure function of the global step, epochs are seeded
// permutations of the whole weight split, batches cross epoch boundaries without repeating a task,
// and a phase of E (possibly fractional) epochs takes ceil(E·N/B) steps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { batchForStep, epochPermutation, epochsForSteps, samplerSeed, stepSeed, stepsForEpochs } from '../../src/engine/weightPhase.js';

const range = (n: number) => [...Array(n).keys()];

test('deterministic: the same (tasks, B, step, seed) give the same batch; another seed another order', () => {
  const tasks = range(100).map((i) => `t${i}`);
  for (const s of [0, 1, 7, 30]) assert.deepEqual(batchForStep(tasks, 16, s, 5), batchForStep(tasks, 16, s, 5));
  assert.notDeepEqual(batchForStep(tasks, 16, 0, 5), batchForStep(tasks, 16, 0, 6));
  assert.notDeepEqual(batchForStep(tasks, 16, 0, 5), tasks.slice(0, 16), 'shuffled, not the split order');
  // Pure in the step: asking for step 9 first or after steps 0..8 gives the same batch (no hidden state).
  const fresh = batchForStep(range(100), 16, 9, 77);
  for (let s = 0; s < 9; s++) batchForStep(range(100), 16, s, 77);
  assert.deepEqual(batchForStep(range(100), 16, 9, 77), fresh);
});

test('each epoch covers the split exactly once; batches cross epoch boundaries; no task twice in a batch', () => {
  for (const [n, B] of [
    [100, 16],
    [64, 16],
    [10, 10],
    [37, 5],
    [20, 13],
    [4096, 256],
    [33, 32],
  ]) {
    const steps = stepsForEpochs(5, n, B) + 1;
    const stream: number[] = [];
    for (let s = 0; s < steps; s++) {
      const b = batchForStep(range(n), B, s, 3);
      assert.equal(b.length, B);
      assert.equal(new Set(b).size, B, `n=${n} B=${B} step ${s}: a task repeats inside the batch`);
      stream.push(...b);
    }
    for (let e = 0; (e + 1) * n <= stream.length; e++) {
      const epoch = stream.slice(e * n, (e + 1) * n);
      assert.deepEqual(
        [...epoch].sort((a, b) => a - b),
        range(n),
        `n=${n} B=${B}: epoch ${e} is not a permutation of the split`,
      );
      assert.deepEqual(epoch, epochPermutation(n, B, e, 3));
    }
    if (n % B !== 0) {
      // The batch at the first boundary holds the end of epoch 0 and the start of epoch 1.
      const s = Math.floor(n / B);
      const b = batchForStep(range(n), B, s, 3);
      assert.deepEqual(b.slice(0, n - s * B), epochPermutation(n, B, 0, 3).slice(s * B));
      assert.deepEqual(b.slice(n - s * B), epochPermutation(n, B, 1, 3).slice(0, B - (n - s * B)));
    }
  }
  // Epochs differ from each other.
  assert.notDeepEqual(epochPermutation(100, 16, 0, 3), epochPermutation(100, 16, 1, 3));
});

test('fractional epochs: ceil(E·N/B) steps, rounded up, without floating-point extra steps', () => {
  assert.equal(stepsForEpochs(0.6, 4096, 256), 10); // 9.6 → 10
  assert.equal(stepsForEpochs(0.2, 4096, 256), 4); // 3.2 → 4
  assert.equal(stepsForEpochs(1.0, 4096, 256), 16);
  assert.equal(stepsForEpochs(0.1 + 0.2, 1000, 100), 3); // 0.30000000000000004 epochs: still 3
  assert.equal(stepsForEpochs(2.7, 4096, 256), 44); // 43.2 → 44
  assert.equal(stepsForEpochs(0.001, 4096, 32), 1); // at least one step
  assert.equal(epochsForSteps(10, 4096, 256), 0.625);
  assert.throws(() => stepsForEpochs(0, 4096, 256), /epochs must be > 0/);
  assert.throws(() => stepsForEpochs(-1, 4096, 256), /epochs must be > 0/);
});

test('bad input is refused: B larger than the split, negative or fractional steps, empty split', () => {
  assert.throws(() => batchForStep(range(10), 11, 0, 1), /larger than the weight split/);
  assert.throws(() => batchForStep(range(10), 4, -1, 1), /globalStep/);
  assert.throws(() => batchForStep(range(10), 4, 1.5, 1), /globalStep/);
  assert.throws(() => batchForStep([], 4, 0, 1), /empty/);
  assert.throws(() => batchForStep(range(10), 0, 0, 1), /batchSize/);
});

test('seeds: the sampler and each step get their own, stable seeds', () => {
  assert.equal(samplerSeed(1), samplerSeed(1));
  assert.notEqual(samplerSeed(1), samplerSeed(2));
  assert.notEqual(stepSeed(1, 0), stepSeed(1, 1));
  assert.notEqual(stepSeed(1, 0), stepSeed(2, 0));
  assert.equal(stepSeed(3, 4), stepSeed(3, 4));
});
