// SkyRL's real Tinker server (PyPI `skyrl`, installed by scripts/skyrl-setup.sh) as a process on
// 127.0.0.1, for the tests that check WHALE's Tinker client against code nobody here wrote.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

/** Why the SkyRL tests cannot run here, or undefined when they can (.ci/run sets both variables). */
export function skyrlSkipReason(): string | undefined {
  if (!process.env.WHALE_SKYRL_VENV || !process.env.WHALE_SKYRL_MODEL)
    return 'WHALE_SKYRL_VENV / WHALE_SKYRL_MODEL are not set (scripts/skyrl-setup.sh installs SkyRL and prints them; .ci/run sets them)';
  return undefined;
}

export interface SkyrlServer {
  url: string;
  port: number;
  baseModel: string;
  checkpoints: string;
  log(): string;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * Starts `uv run --active -m skyrl.tinker.api` (SkyRL checks that `uv run` launched it) on `dir`'s
 * database and checkpoints, so a restart on the same dir keeps them; resolves once the engine has
 * loaded the model (healthz answers before that).
 */
export async function startSkyrl(
  dir: string,
  o: { port?: number; maxLoraAdapters?: number; maxLoraRank?: number; sessionTimeoutS?: number } = {},
): Promise<SkyrlServer> {
  const venv = process.env.WHALE_SKYRL_VENV!;
  const baseModel = process.env.WHALE_SKYRL_MODEL!;
  const port = o.port ?? (await freePort());
  const checkpoints = join(dir, 'checkpoints');
  mkdirSync(checkpoints, { recursive: true });
  const args = [
    'run',
    '--active',
    '-m',
    'skyrl.tinker.api',
    '--base-model',
    baseModel,
    '--backend',
    'jax',
    '--backend-config',
    JSON.stringify({ max_lora_rank: o.maxLoraRank ?? 8, max_lora_adapters: o.maxLoraAdapters ?? 4 }),
    '--checkpoints-base',
    checkpoints,
    '--database-url',
    `sqlite:///${join(dir, 'skyrl.sqlite')}`,
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    ...(o.sessionTimeoutS ? ['--session-timeout-sec', String(o.sessionTimeoutS), '--session-cleanup-interval-sec', '5'] : []),
  ];
  const proc: ChildProcess = spawn(join(venv, 'bin', 'uv'), args, {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, VIRTUAL_ENV: venv, PATH: `${join(venv, 'bin')}:${process.env.PATH}`, UV_OFFLINE: '1', JAX_PLATFORMS: 'cpu' },
  });
  let log = '';
  proc.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      try {
        process.kill(-proc.pid!, 'SIGKILL'); // the API process and the engine it started
      } catch {
        // already gone
      }
    }
    await exited;
  };
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`SkyRL exited with ${proc.exitCode}:\n${log.slice(-3000)}`);
    if (/Using local model|Started server process/.test(log)) {
      const ok = await fetch(`${url}/api/v1/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`SkyRL did not come up in 180 s:\n${log.slice(-3000)}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  return { url, port, baseModel, checkpoints, log: () => log, stop };
}
