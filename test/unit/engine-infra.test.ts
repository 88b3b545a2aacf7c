// Infrastructure failures engine-wide (issue 12/13): a tool service that is down, a verifier that
// throws, a backend (`whale serve`) killed mid-eval. None of it is a verdict: never scored, never
// cached, never trained on; retried a bounded number of times, then the unit fails loudly with what
// was already paid for kept, and a rerun resumes.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ResultStore } from '../../src/archive/resultStore.js';
import { InfraError } from '../../src/core/errors.js';
import type { Trajectory } from '../../src/core/trajectory.js';
import { getDomain } from '../../src/domains/index.js';
import type { Domain, Task } from '../../src/domains/types.js';
import { evaluate, type EvaluateOptions } from '../../src/engine/evaluate.js';
import { stepExamples } from '../../src/engine/weightPhase.js';
import type { PreparedHarness } from '../../src/harness/runtime.js';
import { createBackend } from '../../src/policy/index.js';
import type { PolicyBackend } from '../../src/policy/types.js';
import { defaultRuntime, h0EvalOptions } from '../support/evalRig.js';
import { startServe, tinyProject, whaleAsync, whale } from './serve-helpers.js';

const root = mkdtempSync(join(tmpdir(), 'whale-infra-'));
const kbqa = getDomain('kbqa');
let backend: PolicyBackend;
/** kbqa's better harness: it searches before it answers, so every rollout calls the tool. */
const searching = fileURLToPath(new URL('../../resources/harnesses/kbqa-good', import.meta.url));

before(async () => {
  backend = await createBackend({ kind: 'embedded', model: 'base', maxBatch: 64 }, { storeDir: root });
});
after(async () => {
  await backend.close();
  rmSync(root, { recursive: true, force: true });
});

/** kbqa whose search service is down for the tasks `down` names (while it returns true). */
function withFlakyTool(down: (task: Task) => boolean): Domain {
  return {
    ...kbqa,
    tools: kbqa.tools.map((t) => ({
      ...t,
      call: (args: unknown, task: Task) => {
        if (down(task)) throw new InfraError('tool', 'search service unreachable (ECONNREFUSED)');
        return t.call(args, task);
      },
    })),
  };
}

async function evalWith(domain: Domain, storeDir: string, over: Partial<EvaluateOptions<PreparedHarness>> = {}) {
  const runtime = defaultRuntime(domain, backend, join(root, 'cache'), 4);
  try {
    return await evaluate(h0EvalOptions(storeDir, runtime, domain, backend, { k: 1, seed: 3, concurrency: 4, limit: 4, infraBackoffMs: 10, ...over }));
  } finally {
    await runtime.close();
  }
}

/** The evaluation keys a store holds. */
function keyHashes(store: string): string[] {
  const results = join(store, 'results');
  return existsSync(results) ? readdirSync(results).flatMap((a) => readdirSync(join(results, a))) : [];
}

function storedLines(file: string): Trajectory[] {
  return existsSync(file)
    ? readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Trajectory)
    : [];
}

test('a tool whose service stays down fails the evaluation loudly; nothing is scored or cached; the completed rollouts are kept and a rerun resumes', async () => {
  const store = join(root, 'down');
  const broken = kbqa.tasks('val')[1].id;
  let infraSeen = 0;
  await assert.rejects(
    evalWith(
      withFlakyTool((t) => t.id === broken),
      store,
      { harnessDir: searching, infraRetries: 2, onInfra: () => infraSeen++ },
    ),
    (e: unknown) =>
      e instanceof InfraError && /infrastructure failure \(tool\).*after 2 retries.*search service unreachable.*rerun resumes/s.test((e as Error).message),
  );
  assert.equal(infraSeen, 3, 'the first attempt and two retries');
  const rs = new ResultStore(store);
  // The one key's folder: no summary, no infra_error line, the three healthy rollouts kept.
  const [keyHash] = keyHashes(store);
  assert.equal(rs.summary(keyHash), undefined, 'no summary: nothing was scored');
  const lines = storedLines(rs.trajectoriesFile(keyHash));
  assert.equal(lines.length, 3);
  assert.ok(lines.every((t) => t.termination !== 'infra_error' && t.taskId !== broken));

  // The service is back: the rerun runs only the missing rollout.
  const r = await evalWith(
    withFlakyTool(() => false),
    store,
    { harnessDir: searching },
  );
  assert.equal(r.cacheHit, false);
  assert.equal(r.newRollouts, 1);
  assert.equal(r.summary.rollouts, 4);
  assert.equal(r.summary.terminations.infra_error, undefined);
});

test('a transient tool failure is retried; the evaluation completes with every rollout a verdict', async () => {
  let failures = 2;
  const r = await evalWith(
    withFlakyTool(() => failures-- > 0),
    join(root, 'flaky'),
    { harnessDir: searching },
  );
  assert.equal(r.summary.rollouts, 4);
  assert.equal(r.summary.terminations.infra_error, undefined);
  assert.ok((r.summary.infraRetried ?? 0) >= 1, 'the retried rollouts are counted');
  assert.ok(storedLines(r.trajectoriesFile).every((t) => t.termination !== 'infra_error'));
});

test('a verifier that throws is not a verdict: the evaluation fails, nothing is cached', async () => {
  const domain: Domain = { ...kbqa, verify: () => Promise.reject(new Error('judge service returned 503')) };
  const store = join(root, 'verifier');
  await assert.rejects(evalWith(domain, store, { infraRetries: 1 }), /infrastructure failure \(verifier\).*503/s);
  await assert.rejects(evalWith(domain, store, { infraRetries: 0 }), /infrastructure failure \(verifier\)/, 'a rerun is not served from a cache');
});

test('a store written before infra failures were excluded is not served from the cache, and its infra rollouts are never trained on', async () => {
  const store = join(root, 'legacy');
  const r = await evalWith(kbqa, store);
  const rs = new ResultStore(store);
  // Forge what an older engine wrote: one rollout recorded as an infra failure and scored.
  const lines = storedLines(r.trajectoriesFile);
  const forged: Trajectory = {
    ...lines[0],
    termination: 'infra_error',
    infra: { source: 'backend', message: 'engine down' },
    verdict: { ...lines[0].verdict, pass: true },
  };
  writeFileSync(r.trajectoriesFile, [forged, ...lines.slice(1)].map((t) => JSON.stringify(t)).join('\n') + '\n');
  const summaryFile = join(rs.dirFor(r.summary.keyHash), 'summary.json');
  writeFileSync(summaryFile, JSON.stringify({ ...r.summary, terminations: { ...r.summary.terminations, infra_error: 1 } }));
  assert.equal(stepExamples([forged], kbqa.tasks('val').slice(0, 4)).length, 0, 'never trained on');
  const again = await evalWith(kbqa, store);
  assert.equal(again.cacheHit, false);
  assert.equal(again.newRollouts, 1, 'the infra rollout is run again');
  assert.equal(again.summary.terminations.infra_error, undefined);
});

test(
  '`whale eval` against a `whale serve` killed mid-eval exits non-zero with a clear message, scores nothing, and resumes once it is back',
  { timeout: 600_000 },
  async () => {
    const serverStore = join(root, 'server');
    let served = await startServe(serverStore);
    try {
      const listed = (await (await fetch(`${served.url}/v1/models`)).json()) as { data: { id: string }[] };
      const dir = tinyProject(
        { kind: 'openai-compatible', baseUrl: `${served.url}/v1`, model: listed.data[0].id, outageMs: 0, retries: 0 },
        { evaluation: { k: 6, concurrency: 2 } },
      );
      const run = whaleAsync(['eval', '--split', 'val'], dir);
      const trajFiles = () => keyHashes(join(dir, '.whale')).map((k) => new ResultStore(join(dir, '.whale')).trajectoriesFile(k));
      const end = Date.now() + 300_000;
      while (!trajFiles().some((f) => storedLines(f).length >= 2)) {
        if (Date.now() > end) throw new Error('no rollouts stored in 300 s');
        await new Promise((r) => setTimeout(r, 100));
      }
      await served.kill();
      const first = await run;
      assert.equal(first.code, 1, first.stdout + first.stderr);
      assert.match(first.stderr, /infrastructure failure \(backend\).*rerun resumes/s);
      assert.doesNotMatch(first.stderr + first.stdout, /internal error|mean@6 =|\n\s+at /);
      const [file] = trajFiles();
      const kept = storedLines(file);
      assert.ok(kept.length >= 2 && kept.length < 36, `${kept.length} rollouts kept`);
      assert.ok(kept.every((t) => t.termination !== 'infra_error'));

      served = await startServe(serverStore, served.port);
      const second = whale(['eval', '--split', 'val', '--json'], dir);
      assert.equal(second.code, 0, second.stderr);
      const s = JSON.parse(second.stdout) as { rollouts: number; newRollouts: number; terminations: Record<string, number> };
      assert.equal(s.rollouts, 36);
      assert.equal(s.newRollouts, 36 - kept.length, 'only the missing rollouts were run');
      assert.equal(s.terminations.infra_error, undefined);
    } finally {
      await served.stop();
    }
  },
);

test(
  '`whale run` whose backend dies mid-phase stops with a clear error, journals the failure, and `whale status` counts it',
  { timeout: 600_000 },
  async () => {
    const serverStore = join(root, 'server-run');
    const served = await startServe(serverStore);
    try {
      const listed = (await (await fetch(`${served.url}/v1/models`)).json()) as { data: { id: string }[] };
      const dir = tinyProject(
        { kind: 'openai-compatible', baseUrl: `${served.url}/v1`, model: listed.data[0].id, outageMs: 0, retries: 0 },
        { evaluation: { k: 4, concurrency: 2 } },
      );
      const run = whaleAsync(['run', '--method', 'harness-only'], dir);
      const end = Date.now() + 300_000;
      while (!keyHashes(join(dir, '.whale')).some((k) => storedLines(new ResultStore(join(dir, '.whale')).trajectoriesFile(k)).length >= 1)) {
        if (Date.now() > end) throw new Error('no rollouts stored in 300 s');
        await new Promise((r) => setTimeout(r, 100));
      }
      await served.kill();
      const r = await run;
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.match(r.stderr, /infrastructure failure \(backend\)/);
      assert.doesNotMatch(r.stderr, /internal error/);
      const status = whale(['status'], dir);
      assert.match(status.stdout, /infrastructure failures: 1 unit/);
    } finally {
      await served.stop();
    }
  },
);
