// Issue 12 §5: harness processes die with their engine however it dies, and the gateway's socket
// folders a dead engine left in the temp folder are swept by the next one. Real `whale eval`
// processes, killed for real; Linux (/proc) only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fixture } from '../fixtures/harnesses/helpers.js';

const dev = fileURLToPath(new URL('../../src/cli/dev.ts', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/tsx/dist/esm/index.mjs', import.meta.url));
const linux = process.platform === 'linux';

/** Pids of processes that run in, or name, the project's store (its harnesses run from copies there). */
function harnessPids(project: string): number[] {
  const dir = join(project, '.whale');
  const out: number[] = [];
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p) || Number(p) === process.pid) continue;
    try {
      const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8');
      const cwd = readlinkSync(`/proc/${p}/cwd`);
      if (cmd.includes(dir) || cwd.startsWith(dir)) out.push(Number(p));
    } catch {
      // gone, or not ours
    }
  }
  return out;
}

/** True when `pid` descends from `ancestor`. */
function isChildOf(pid: number, ancestor: number): boolean {
  for (let p = pid, i = 0; p > 1 && i < 20; i++) {
    if (p === ancestor) return true;
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      p = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      return false;
    }
  }
  return false;
}

function gwDirs(pid: number): string[] {
  return readdirSync(tmpdir()).filter((n) => n.startsWith(`whale-gw-${pid}-`));
}

async function until(what: string, ok: () => boolean, ms = 120_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function project(harness: 'node' | 'command'): string {
  const dir = mkdtempSync(join(tmpdir(), 'whale-orphans-'));
  if (harness === 'node') cpSync(fixture('hang'), join(dir, 'h'), { recursive: true });
  else {
    cpSync(fixture('hang'), join(dir, 'h'), { recursive: true });
    writeFileSync(
      join(dir, 'h', 'harness.json'),
      JSON.stringify({ name: 'sleeper', runtime: 'command', command: ['python3', '-c', 'import time\ntime.sleep(600)'] }),
    );
  }
  writeFileSync(
    join(dir, 'whale.config.json'),
    JSON.stringify({
      name: 'orphans',
      domain: { id: 'kbqa', options: { sizes: { weight: 4, harness: 4, val: 4, test: 4 } } },
      harness: 'h',
      evaluation: { k: 1, concurrency: 2 },
      sandbox: { wallMs: 300_000, cpuMs: 20_000 },
    }),
  );
  return dir;
}

for (const [harness, signal] of [
  ['node', 'SIGKILL'],
  ['node', 'SIGTERM'],
  ['command', 'SIGKILL'],
] as const) {
  test(
    `${harness} harnesses do not outlive \`whale eval\` killed with ${signal}; its gateway folder is swept by the next engine`,
    { skip: !linux, timeout: 300_000 },
    async () => {
      const dir = project(harness);
      const proc = spawn(process.execPath, ['--import', tsx, dev, 'eval'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      let left: number[] = [];
      try {
        await until('two harnesses running', () => {
          if (proc.exitCode !== null) throw new Error(`whale eval exited early: ${stderr}`);
          return harnessPids(dir).length >= 2;
        });
        const engine = proc.pid!;
        assert.ok(gwDirs(engine).length > 0, 'the gateway folder names its engine');
        proc.kill(signal);
        await new Promise((r) => proc.once('exit', r));
        await until('the harnesses to die', () => harnessPids(dir).length === 0, 20_000).catch(() => undefined);
        left = harnessPids(dir);
        // Node harnesses are the engine's direct children: the kernel's parent-death signal takes them at once.
        if (harness === 'node')
          assert.deepEqual(
            left,
            [],
            `harness processes outlived their engine: ${left.map((p) => readFileSync(`/proc/${p}/cmdline`, 'utf8').replace(/\0/g, ' ')).join('\n')}`,
          );
        // Whatever escaped that (a wrapper that drops the signal, a kill mid-spawn) the next engine reaps,
        // and it sweeps what the dead one left in the temp folder.
        if (signal === 'SIGKILL') assert.ok(gwDirs(engine).length > 0, 'a SIGKILLed engine leaves its gateway folder');
        const next = spawn(process.execPath, ['--import', tsx, dev, 'eval', '--limit', '1'], { cwd: dir, stdio: 'ignore' });
        try {
          await until(
            'the next engine to sweep and reap',
            () => gwDirs(engine).length === 0 && harnessPids(dir).every((p) => isChildOf(p, next.pid!)),
            120_000,
          );
        } finally {
          next.kill('SIGKILL');
        }
      } finally {
        if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
        for (const p of harnessPids(dir)) {
          try {
            process.kill(p, 'SIGKILL');
          } catch {
            // already gone
          }
        }
        if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
      }
    },
  );
}

test("the reaper kills a marked process whose engine is gone, and leaves a live engine's alone", { skip: !linux }, async () => {
  const { reapOrphanedHarnesses, ENGINE_MARKER, engineMarker } = await import('../../src/harness/reaper.js');
  const orphan = spawn('sleep', ['60'], { env: { [ENGINE_MARKER]: '999999:12345' }, stdio: 'ignore' });
  const mine = spawn('sleep', ['60'], { env: { [ENGINE_MARKER]: engineMarker() }, stdio: 'ignore' });
  try {
    await new Promise((r) => setTimeout(r, 200));
    assert.ok(reapOrphanedHarnesses() >= 1);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(orphan.signalCode, 'SIGKILL');
    assert.equal(mine.exitCode ?? mine.signalCode, null, "a live engine's harness is left alone");
  } finally {
    orphan.kill('SIGKILL');
    mine.kill('SIGKILL');
  }
});
