// Kill the engine (SIGKILL) at random moments, resume it each time, and compare the finished run
// with an uninterrupted run of the same seed: same policy, same harness, same ledger, same journal
// of completed work. Real parts throughout: the embedded policy, the sandboxed runtime, git.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RunStore } from '../../src/archive/runStore.js';
import { Journal } from '../../src/archive/journal.js';
import { foldRun } from '../../src/archive/runState.js';
import { Rng } from '../../src/core/rng.js';
import { smallProject } from '../support/smallProject.js';

const dev = fileURLToPath(new URL('../../src/cli/dev.ts', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/tsx/dist/esm/index.mjs', import.meta.url));

function project(): string {
  return smallProject('resume', {
    name: 'resume-test',
    domain: { id: 'ramble', options: { sizes: { weight: 64, harness: 12, val: 12, test: 12 } } },
    evaluation: { k: 1, concurrency: 8 },
    rsft: { batchPrompts: 8, groupSize: 2, learningRate: 1e-3, minibatch: 8 },
    search: { candidatesPerRound: 2 },
    schedule: { epochs: 0.5, iterations: 3, cycles: 2 },
    seed: 3,
  }).dir;
}

function completedWork(dir: string) {
  const runs = new RunStore(join(dir, '.whale'));
  const id = runs.current()!;
  const entries = Journal.read(runs.journalFile(id));
  const state = foldRun(entries);
  const work = entries
    .filter((e) => !['session_started', 'run_stopped'].includes(e.type))
    .map((e) => {
      const {
        at: _at,
        runId: _r,
        pid: _p,
        wallMs: _w,
        rolloutMs: _rm,
        trainMs: _tm,
        fromRecord: _f,
        newRollouts: _n,
        cacheHit: _c,
        proposer: _pr,
        ...rest
      } = e as Record<string, unknown>;
      return JSON.stringify({ ...rest, candidates: undefined });
    });
  return { state, work };
}

test('a run killed at random moments and resumed ends exactly like an uninterrupted run', { timeout: 900_000 }, async () => {
  const straight = project();
  const t0 = Date.now();
  const r = spawnSync(process.execPath, ['--import', tsx, dev, 'run'], { cwd: straight, encoding: 'utf8', timeout: 300_000 });
  assert.equal(r.status, 0, r.stderr);
  const took = Date.now() - t0;
  const want = completedWork(straight);
  assert.equal(want.state.finished?.reason, 'schedule complete');

  const killed = project();
  // The same project: generated tasks depend on the project's secret (archive/projectSecret.ts).
  mkdirSync(join(killed, '.whale'), { recursive: true });
  copyFileSync(join(straight, '.whale', 'secret'), join(killed, '.whale', 'secret'));
  const rng = new Rng(42);
  let kills = 0;
  for (let attempt = 0; attempt < 40; attempt++) {
    const args = ['--import', tsx, dev, 'run', ...(attempt === 0 ? [] : ['--resume'])];
    const child = spawn(process.execPath, args, { cwd: killed, stdio: 'ignore' });
    // Random moments across the run's length (start-up included), so kills land in every kind of unit.
    const delay = 800 + rng.int(Math.max(1000, Math.floor(took * 0.3)));
    const exited = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        kills++;
      }, delay);
      child.on('exit', (code) => {
        clearTimeout(timer);
        resolve(code);
      });
    });
    if (exited === 0) break;
  }
  assert.ok(kills >= 3, `only ${kills} kills happened; the run finished too fast to test resume`);
  const got = completedWork(killed);
  assert.equal(got.state.finished?.reason, 'schedule complete');
  assert.equal(got.state.version, want.state.version, 'same final policy version');
  assert.equal(got.state.harness, want.state.harness, 'same accepted harness');
  assert.deepEqual({ ...got.state.ledger, wallMs: 0 }, { ...want.state.ledger, wallMs: 0 }, 'same ledger');
  assert.deepEqual(got.work, want.work, 'same journal of completed work');
});
