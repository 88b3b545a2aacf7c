// The engine process as the extension starts it (vscode-free part): detached, output to a file that
// is relayed line by line, stopped through the run store's STOP file, then SIGTERM, then SIGKILL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RunStore } from '../../src/archive/runStore.js';
import { DetachedProcess, splitLines } from '../../src/extension/detachedEngine.js';
import { RunsFeed } from '../../src/extension/model/runsModel.js';
import { until } from '../support/until.js';
import { smallProject } from '../support/smallProject.js';

const dev = fileURLToPath(new URL('../../src/cli/dev.ts', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/tsx/dist/esm/index.mjs', import.meta.url));

test('splitLines: carriage-return redraws become lines; an unfinished line is kept', () => {
  assert.deepEqual(splitLines('a: 1/4\r\x1b[Ka: 4/4\nrest'), { lines: ['a: 1/4', 'a: 4/4'], rest: 'rest' });
});

test('a detached `whale run` relays its output, stops at the next safe point on STOP, and the run store says stopped', { timeout: 600_000 }, async () => {
  const { dir } = smallProject('detached', {
    name: 'detached',
    domain: { id: 'ramble', options: { sizes: { weight: 64, harness: 8, val: 8, test: 8 } } },
    evaluation: { k: 1, concurrency: 8 },
    rsft: { batchPrompts: 8, groupSize: 2 },
    schedule: { epochs: 1, iterations: 2, cycles: 3 },
  });
  const lines: string[] = [];
  const logFile = join(dir, '.whale', 'logs', 'engine.log');
  const p = new DetachedProcess(process.execPath, ['--import', tsx, dev, 'run'], {
    cwd: dir,
    env: process.env,
    logFile,
    onLine: (l) => lines.push(l),
    pollMs: 100,
  });
  const feed = new RunsFeed(join(dir, '.whale'));
  const run = await until('a running weight phase', () => feed.refresh().runs.find((r) => r.status === 'running' && r.current?.kind === 'weight'));
  assert.equal(run.pid, p.pid);
  new RunStore(join(dir, '.whale')).requestStop(run.id);
  assert.equal(await p.stop(300_000), 'exited', 'the engine stopped by itself at a safe point');
  assert.deepEqual(await p.exited, { code: 0, signal: null });
  const after = feed.refresh().runs[0];
  assert.equal(after.status, 'stopped');
  assert.equal(after.detail, 'stop requested');
  assert.ok(
    lines.some((l) => l.startsWith(`whale run: ${run.id}`)),
    lines.join('\n'),
  );
  assert.ok(
    lines.some((l) => l === `run ${run.id}: stop requested`),
    'the last lines are relayed after the exit',
  );
  assert.equal(readFileSync(logFile, 'utf8').includes('stop requested'), true);
});

test('a process that ignores the stop request and SIGTERM is killed after the grace periods', { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'whale-detached-'));
  const warnings: string[] = [];
  const lines: string[] = [];
  const script = "process.on('SIGTERM', () => console.log('ignoring SIGTERM')); console.log('up'); setInterval(() => {}, 1000);";
  const p = new DetachedProcess(process.execPath, ['-e', script], {
    cwd: dir,
    env: process.env,
    logFile: join(dir, 'out.log'),
    onLine: (l) => lines.push(l),
    onWarn: (w) => warnings.push(w),
    pollMs: 50,
  });
  await until('the process to start', () => (lines.includes('up') ? true : undefined), 30_000);
  assert.equal(await p.stop(500), 'killed');
  assert.deepEqual(await p.exited, { code: null, signal: 'SIGKILL' });
  assert.ok(lines.includes('ignoring SIGTERM'), 'SIGTERM reached it first');
  assert.equal(warnings.length, 2);
  assert.throws(() => process.kill(p.pid!, 0), 'the process is gone');
});
