// One writer per run (issue 12 §1) and a store lock that judges staleness by time (issue 15): the
// lock itself, then real `whale` processes racing for one run, and a SIGKILLed holder taken over.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { acquireLock, LockHeldError } from '../../src/archive/fileLock.js';
import { RunStore } from '../../src/archive/runStore.js';
import { tinyProject, whale, whaleAsync } from './serve-helpers.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'whale-lock-'));

test('a second taker is refused with a message naming the holder (host, pid, since)', () => {
  const dir = join(tmp(), 'x.lock');
  const held = acquireLock(dir, 'run R', { purpose: 'whale run --resume' });
  try {
    assert.throws(
      () => acquireLock(dir, 'run R'),
      (e: unknown) =>
        e instanceof LockHeldError &&
        e.message.includes(`pid ${process.pid} on host ${hostname()}, since ${held.holder.since}`) &&
        /run R is held by 'whale run --resume'/.test(e.message),
    );
  } finally {
    held.release();
  }
  acquireLock(dir, 'run R').release(); // free again once released
});

test('a holder on another node (another container: its pid means nothing here) is judged by its heartbeat alone', () => {
  const dir = join(tmp(), 'x.lock');
  mkdirSync(dir);
  // pid 999999 does not exist here, but it may in the other container: no pid shortcut.
  writeFileSync(
    join(dir, 'owner.json'),
    JSON.stringify({ host: 'other-box', pid: 999_999, since: '2026-01-01T00:00:00Z', node: 'other-box/boot/pid:[1]', token: 't' }),
  );
  assert.throws(() => acquireLock(dir, 'run R', { staleMs: 5_000 }), /pid 999999 on host other-box/);
  const old = new Date(Date.now() - 10_000);
  utimesSync(join(dir, 'owner.json'), old, old);
  utimesSync(dir, old, old);
  const held = acquireLock(dir, 'run R', { staleMs: 5_000 });
  assert.equal(JSON.parse(readFileSync(join(dir, 'owner.json'), 'utf8')).pid, process.pid);
  held.release();
});

test('a lock taken a moment ago whose owner is not yet written: the refusal waits for it and names the holder', async () => {
  const dir = join(tmp(), 'x.lock');
  mkdirSync(dir); // a taker has made the directory and not yet written its owner
  const owner = { host: 'h-taker', pid: 4242, since: '2026-12-08T00:00:00Z', purpose: 'whale step', node: 'elsewhere', token: 't' };
  // Another process writes it a little later, as a taker slowed by a loaded machine would.
  const writer = spawn(process.execPath, [
    '-e',
    `setTimeout(() => { const f = require('fs'); f.writeFileSync(${JSON.stringify(join(dir, 'o.tmp'))}, ${JSON.stringify(JSON.stringify(owner))}); f.renameSync(${JSON.stringify(join(dir, 'o.tmp'))}, ${JSON.stringify(join(dir, 'owner.json'))}); }, 300)`,
  ]);
  const exited = new Promise((r) => writer.once('exit', r));
  try {
    assert.throws(
      () => acquireLock(dir, 'run R'),
      (e: unknown) => e instanceof LockHeldError && /held by 'whale step', pid 4242 on host h-taker/.test(e.message),
    );
  } finally {
    await exited;
  }
});

test('the heartbeat keeps a live holder from looking stale', async () => {
  const dir = join(tmp(), 'x.lock');
  const held = acquireLock(dir, 'run R', { staleMs: 400 });
  await new Promise((r) => setTimeout(r, 1_000));
  assert.throws(() => acquireLock(dir, 'run R', { staleMs: 400 }), LockHeldError);
  held.release();
});

const dev = fileURLToPath(new URL('../../src/cli/dev.ts', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/tsx/dist/esm/index.mjs', import.meta.url));

function journalTypes(dir: string): string[] {
  const runs = new RunStore(join(dir, '.whale'));
  return readFileSync(runs.journalFile(runs.current()!), 'utf8')
    .trim()
    .split('\n')
    .map((l) => (JSON.parse(l) as { type: string }).type);
}

test('three `whale run --resume` and a `whale step` on one run: exactly one proceeds, the others are refused naming it', { timeout: 600_000 }, async () => {
  const dir = tinyProject({ kind: 'embedded' }, { schedule: { epochs: 0.4, iterations: 2, cycles: 2 } });
  const first = whale(['step'], dir); // creates the run and does one phase
  assert.equal(first.code, 0, first.stderr);
  const before = journalTypes(dir).filter((t) => t === 'session_started').length;
  const racers = await Promise.all([
    whaleAsync(['run', '--resume'], dir),
    whaleAsync(['run', '--resume'], dir),
    whaleAsync(['run', '--resume'], dir),
    whaleAsync(['step'], dir),
  ]);
  const ok = racers.filter((r) => r.code === 0);
  const refused = racers.filter((r) => /is held by '(whale run --resume|whale step)', pid \d+ on host \S+, since \S+/.test(r.stderr));
  assert.equal(ok.length, 1, racers.map((r) => `${r.code}: ${r.stderr.slice(-400)}`).join('\n---\n'));
  assert.equal(refused.length, 3);
  assert.ok(refused.every((r) => r.code !== 0 && !/internal error/.test(r.stderr)));
  const types = journalTypes(dir);
  assert.equal(types.filter((t) => t === 'session_started').length, before + 1, 'one engine opened the run');
  assert.ok(types.filter((t) => t === 'run_completed').length <= 1);
});

test('a SIGKILLed holder does not block the run: the next resume takes its lock over', { timeout: 600_000 }, async () => {
  const dir = tinyProject({ kind: 'embedded' });
  const first = whale(['step'], dir);
  assert.equal(first.code, 0, first.stderr);
  const runs = new RunStore(join(dir, '.whale'));
  const lockDir = join(runs.runDir(runs.current()!), 'engine.lock');
  const proc = spawn(process.execPath, ['--import', tsx, dev, 'run', '--resume'], { cwd: dir, stdio: 'ignore' });
  const end = Date.now() + 120_000;
  while (!existsSync(join(lockDir, 'owner.json'))) {
    if (Date.now() > end) throw new Error('the engine never took the run lock');
    await new Promise((r) => setTimeout(r, 50));
  }
  proc.kill('SIGKILL');
  await new Promise((r) => proc.once('exit', r));
  assert.ok(existsSync(lockDir), 'the dead holder left its lock behind');
  const again = whale(['run', '--resume'], dir);
  assert.equal(again.code, 0, again.stderr);
  assert.ok(journalTypes(dir).includes('run_completed'));
  assert.ok(!existsSync(lockDir), 'released at the end');
  rmSync(dir, { recursive: true, force: true });
});
