// `whale serve` as a real separate process, and a whale CLI runner, for the remote-backend tests.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getDomain } from '../../src/domains/index.js';
import { writeTestSecret } from '../support/smallProject.js';

const dev = fileURLToPath(new URL('../../src/cli/dev.ts', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/tsx/dist/esm/index.mjs', import.meta.url));

export interface Served {
  proc: ChildProcess;
  url: string;
  port: number;
  stop(): Promise<void>;
  /** Ends the process abruptly (SIGKILL), as a crashed or preempted backend would. */
  kill(): Promise<void>;
}

/** Starts `whale serve --backend embedded` in its own process; resolves when it prints its URL. */
export function startServe(storeDir: string, port = 0, extraArgs: string[] = []): Promise<Served> {
  const proc = spawn(process.execPath, ['--import', tsx, dev, 'serve', '--backend', 'embedded', '--port', String(port), '--store', storeDir, ...extraArgs], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  const end = async (signal: NodeJS.Signals) => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
    await exited;
  };
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`whale serve did not start in 120 s: ${out}${err}`)), 120_000);
    proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /at (http:\/\/127\.0\.0\.1:(\d+))\/v1/.exec(out);
      if (m) {
        clearTimeout(t);
        resolve({ proc, url: m[1], port: Number(m[2]), stop: () => end('SIGTERM'), kill: () => end('SIGKILL') });
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(t);
      reject(new Error(`whale serve exited with ${code}: ${out}${err}`));
    });
  });
}

export function whale(args: string[], cwd: string, env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, ['--import', tsx, dev, ...args], { cwd, encoding: 'utf8', timeout: 600_000, env: { ...process.env, ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The same, without blocking the event loop (so a test can kill and restart a server meanwhile). */
export function whaleAsync(args: string[], cwd: string, env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = spawn(process.execPath, ['--import', tsx, dev, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => proc.once('exit', (code) => resolve({ code, stdout, stderr })));
}

/** A tiny ramble project whose backend is `backend`. */
export function tinyProject(backend: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'whale-remote-'));
  cpSync(getDomain('ramble').h0Dir, join(dir, 'h0'), { recursive: true });
  writeFileSync(
    join(dir, 'whale.config.json'),
    JSON.stringify(
      {
        name: 'remote',
        domain: { id: 'ramble', options: { sizes: { weight: 16, harness: 6, val: 6, test: 6 } } },
        harness: 'h0',
        backend,
        evaluation: { k: 1, concurrency: 6 },
        rsft: { batchPrompts: 6, groupSize: 2, minibatch: 4 },
        search: { candidatesPerRound: 2 },
        schedule: { epochs: 0.4, iterations: 2, cycles: 1 },
        ...extra,
      },
      null,
      2,
    ),
  );
  writeTestSecret(dir);
  return dir;
}
