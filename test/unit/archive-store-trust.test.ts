// Issue 12 §8: what the run store gives back is checked (an edited summary is not served), and
// storage failures are clear messages naming the file, with nothing paid for lost.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ResultStore } from '../../src/archive/resultStore.js';
import { getDomain } from '../../src/domains/index.js';
import { evaluate } from '../../src/engine/evaluate.js';
import { HarnessRuntime } from '../../src/harness/runtime.js';
import { createBackend } from '../../src/policy/index.js';
import type { PolicyBackend } from '../../src/policy/types.js';
import { defaultRuntime, h0EvalOptions } from '../support/evalRig.js';
import { main } from '../../src/cli/main.js';

const root = mkdtempSync(join(tmpdir(), 'whale-trust-'));
const domain = getDomain('kbqa');
let backend: PolicyBackend;
let runtime: HarnessRuntime;
before(async () => {
  backend = await createBackend({ kind: 'embedded', model: 'base', maxBatch: 64 }, { storeDir: root });
  runtime = defaultRuntime(domain, backend, join(root, 'cache'), 4);
});
after(async () => {
  await runtime.close();
  await backend.close();
  rmSync(root, { recursive: true, force: true });
});

const run = (store: string) => evaluate(h0EvalOptions(store, runtime, domain, backend, { k: 1, seed: 5, concurrency: 4, limit: 4 }));

test('an edited summary.json is not served: the result is recomputed from the stored rollouts (no new rollouts)', async () => {
  const store = join(root, 'edited');
  const first = await run(store);
  const file = join(new ResultStore(store).dirFor(first.summary.keyHash), 'summary.json');
  const forged = { ...JSON.parse(readFileSync(file, 'utf8')), meanAtK: 1 };
  writeFileSync(file, JSON.stringify(forged));
  const again = await run(store);
  assert.equal(again.summary.meanAtK, first.summary.meanAtK, 'the forged 100% was served');
  assert.equal(again.newRollouts, 0, 'nothing paid for again');
});

test('a same-size edit of a completed trajectory file (one byte flipped) is refused on read, naming the file', async () => {
  const store = join(root, 'flipped');
  const first = await run(store);
  const file = first.trajectoriesFile;
  const bytes = readFileSync(file);
  // Flip one character of the first task id (same size, still valid JSON).
  const at = bytes.indexOf('"taskId"') + 12;
  const was = bytes[at];
  bytes[at] = was === 0x61 ? 0x62 : 0x61;
  writeFileSync(file, bytes);
  assert.equal(statSync(file).size, bytes.length);
  await assert.rejects(run(store), (e: Error) => {
    assert.match(e.message, /does not match its signed summary/);
    assert.ok(e.message.includes(file), e.message);
    return true;
  });
  // Also through the CLI-facing reads of the store (a cache hit's summary, the proposer's task table).
  assert.throws(() => new ResultStore(store).summary(first.summary.keyHash), /does not match its signed summary/);
  // Restored, it is a cache hit again.
  bytes[at] = was;
  writeFileSync(file, bytes);
  const again = await run(store);
  assert.equal(again.cacheHit, true);
});

test('an empty tasks.json is recomputed, not an internal error', async () => {
  const store = join(root, 'empty');
  const first = await run(store);
  writeFileSync(join(new ResultStore(store).dirFor(first.summary.keyHash), 'tasks.json'), '');
  const again = await run(store);
  assert.deepEqual(again.tasks, first.tasks);
  assert.equal(again.newRollouts, 0);
});

test('a store the engine cannot write is a clear message naming the file (exit 1, no stack trace)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'whale-trust-cli-'));
  const store = join(dir, '.whale');
  const lines: string[] = [];
  const orig = console.error;
  console.error = (...a: unknown[]) => void lines.push(a.join(' '));
  try {
    mkdirSync(store);
    // Where the results folder should be there is a file (as root, permissions would not stop us).
    writeFileSync(join(store, 'results'), 'not a folder');
    const code = await main(['eval', '--domain', 'kbqa', '--limit', '1', '--k', '1', '--store', store]);
    assert.equal(code, 1);
    const text = lines.join('\n');
    assert.match(text, /storage error/);
    assert.match(text, /ENOTDIR|EEXIST|not a directory/i);
    assert.ok(text.includes(join(store, 'results')), text);
    assert.doesNotMatch(text, /internal error|\n\s+at /);
  } finally {
    console.error = orig;
    rmSync(dir, { recursive: true, force: true });
  }
});
