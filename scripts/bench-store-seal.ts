// What sealing the trajectory files costs (resultStore.ts: the signed summary covers their SHA-256):
// a store whose trajectory file is ~530 MiB (a few real-shaped rollouts, the rest blank lines, as
// in test/unit/engine-large-resume.test.ts), then, each in a fresh process, (1) resume: scan the
// file, append one rollout, complete; (2) cache hit: summary + task table + rollouts of a run.
// Standalone:
//   node --import tsx scripts/bench-store-seal.ts [MiB]
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ResultStore, type EvalKey, type EvalSummary } from '../src/archive/resultStore.js';
import { synthetic } from '../test/support/syntheticTrajectory.js';

const key: EvalKey = { domain: 'bench', taskSet: 't', split: 'val', harnessHash: 'h', policyVersion: 'p', sampling: {}, limits: {}, k: 1, seed: 1 };

function timed(label: string, f: () => void): void {
  const cpu = process.cpuUsage();
  const t = performance.now();
  f();
  const used = process.cpuUsage(cpu);
  console.log(`${label}: ${(performance.now() - t).toFixed(0)} ms wall, ${((used.user + used.system) / 1000).toFixed(0)} ms CPU`);
}

const [mode, root, mib] = process.argv.slice(2);
if (mode === 'resume' || mode === 'hit') {
  const store = new ResultStore(root);
  const keyHash = store.begin(key);
  if (mode === 'resume')
    timed('resume (scan, append 1, complete)', () => {
      let n = 0;
      store.scanTrajectories(keyHash, () => void n++);
      store.appendTrajectory(keyHash, { ...synthetic(n), runId: 'r' });
      const summary = {
        key,
        keyHash,
        meanAtK: 0,
        standardError: 0,
        tasks: 1,
        k: 1,
        rollouts: n + 1,
        terminations: {},
        meanTurns: 1,
        runRollouts: { r: n + 1 },
        completedAt: '',
        wallMs: 0,
      } as EvalSummary;
      store.complete(keyHash, [], summary);
    });
  else
    timed('cache hit (summary, tasks, run rollouts)', () => {
      if (!store.summary(keyHash)) throw new Error('no summary');
      store.taskResults(keyHash);
      store.countRunRollouts(keyHash, 'r');
    });
} else {
  const dir = mkdtempSync(join(tmpdir(), 'whale-bench-seal-'));
  try {
    const store = new ResultStore(dir);
    const keyHash = store.begin(key);
    const fd = openSync(store.trajectoriesFile(keyHash), 'a');
    for (let i = 0; i < 3; i++) writeSync(fd, JSON.stringify({ ...synthetic(i), runId: 'r' }) + '\n');
    const blank = Buffer.from(' '.repeat(1024 * 1024 - 1) + '\n');
    for (let i = 0; i < Number(mode ?? 530); i++) writeSync(fd, blank);
    closeSync(fd);
    const self = fileURLToPath(import.meta.url);
    for (const step of ['resume', 'hit', 'hit']) {
      const r = spawnSync(process.execPath, ['--import', 'tsx', self, step, dir, mib ?? ''], { encoding: 'utf8' });
      process.stdout.write(r.stdout + r.stderr);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
