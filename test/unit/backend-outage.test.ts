// A backend that disappears mid-phase (killed with SIGKILL, restarted on the same port a moment
// later): the phase waits for it and goes on; the run completes with nothing lost.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunStore } from '../../src/archive/runStore.js';
import { ResultStore } from '../../src/archive/resultStore.js';
import { Journal, type JournalEntry } from '../../src/archive/journal.js';
import { startServe, tinyProject, whaleAsync, type Served } from './serve-helpers.js';

function journal(dir: string): JournalEntry[] {
  const runs = new RunStore(join(dir, '.whale'));
  const id = runs.current();
  return id ? [...new Journal(runs.journalFile(id)).all()] : [];
}

async function until(what: string, ok: () => boolean, ms = 600_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Kills the server once `when` holds, waits a moment, starts it again on the same port and store. */
async function outage(served: Served, store: string, when: () => boolean, run: Promise<{ code: number | null; stderr: string }>): Promise<Served> {
  let ended: { code: number | null; stderr: string } | undefined;
  void run.then((r) => (ended = r));
  await until('the moment to kill the backend', () => {
    if (ended) throw new Error(`the run ended (exit ${ended.code}) before the backend was killed:\n${ended.stderr.slice(-3000)}`);
    return when();
  });
  await served.kill();
  await new Promise((r) => setTimeout(r, 1_500));
  return startServe(store, served.port);
}

test('openai-compatible: a harness-only search survives its backend being killed and restarted mid-phase', { timeout: 900_000 }, async () => {
  const store = join(mkdtempSync(join(tmpdir(), 'whale-outage-')), 'server');
  let served = await startServe(store);
  try {
    const listed = (await (await fetch(`${served.url}/v1/models`)).json()) as { data: { id: string }[] };
    const dir = tinyProject(
      { kind: 'openai-compatible', baseUrl: `${served.url}/v1`, model: listed.data[0].id },
      { sandbox: { wallMs: 300_000, cpuMs: 60_000 } },
    );
    const run = whaleAsync(['run', '--method', 'harness-only'], dir);
    served = await outage(served, store, () => journal(dir).some((e) => e.type === 'candidate_scored'), run);
    const r = await run;
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /backend: unreachable \(ECONNREFUSED\) — retrying/);
    const j = journal(dir);
    assert.ok(j.some((e) => e.type === 'phase_completed' && e.kind === 'harness'));
    const results = new ResultStore(join(dir, '.whale'));
    for (const s of j.filter((e) => e.type === 'candidate_scored')) {
      const ts = results.loadTrajectories(String(s.keyHash));
      assert.equal(ts.length, 6, 'every rollout of every candidate is there');
      assert.ok(
        ts.every((t) => !/policy backend failed/.test(t.terminationDetail ?? '')),
        'no rollout failed for the outage',
      );
    }
  } finally {
    await served.stop();
  }
});

test(
  'tinker: a weight phase survives its backend being killed and restarted mid-phase (the training model is rebuilt from the last saved version)',
  { timeout: 900_000 },
  async () => {
    const store = join(mkdtempSync(join(tmpdir(), 'whale-outage-')), 'server');
    let served = await startServe(store);
    try {
      const dir = tinyProject(
        { kind: 'tinker', baseUrl: served.url, baseModel: 'embedded', tokenizer: 'embedded' },
        { method: 'weight-only', schedule: { epochs: 0.75, iterations: 2, cycles: 1 }, sandbox: { wallMs: 300_000, cpuMs: 60_000 } },
      );
      const run = whaleAsync(['run'], dir);
      served = await outage(served, store, () => journal(dir).some((e) => e.type === 'weight_step'), run);
      const r = await run;
      assert.equal(r.code, 0, r.stderr);
      const j = journal(dir);
      const steps = j.filter((e) => e.type === 'weight_step');
      assert.equal(steps.length, 4, 'two weight phases of two steps');
      const trained = steps.filter((s) => s.trained);
      assert.ok(trained.length >= 1, 'some step trained');
      for (let i = 1; i < steps.length; i++)
        assert.equal(steps[i].versionBefore, steps[i - 1].versionAfter, 'each step starts from the version the previous one made');
      assert.ok(trained.every((s) => String(s.versionAfter).startsWith('tinker://')));
      assert.equal(j.filter((e) => e.type === 'phase_completed').length, 2);
      const results = new ResultStore(join(dir, '.whale'));
      for (const s of steps) {
        const ts = results.loadTrajectories(String(s.evalKeyHash));
        assert.equal(ts.length, 12, 'B·G rollouts per step');
        assert.ok(
          ts.every((t) => !/policy backend failed/.test(t.terminationDetail ?? '')),
          'no rollout failed for the outage',
        );
      }
    } finally {
      await served.stop();
    }
  },
);
