/**
 * How a harness process is started: the command line (rlimit and namespace wrappers, Node's
 * permission flags), a scrubbed environment, and what this platform can enforce. SANDBOX.md says
 * what each layer stops and what it cannot.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { SandboxLimits } from '../core/config.js';

/** What the host offers, probed once per process. */
export interface SandboxCapabilities {
  /** util-linux `prlimit`: RLIMIT_CPU / RLIMIT_DATA for the harness process. */
  prlimit: boolean;
  /** How to get an empty network namespace: as an unprivileged user (user namespace) or as root. */
  netns: 'userns' | 'root' | null;
  /** /proc with per-process stat/status (CPU and RSS watchdog). */
  proc: boolean;
}

let probed: SandboxCapabilities | undefined;

function runs(cmd: string, args: string[]): boolean {
  try {
    return spawnSync(cmd, args, { stdio: 'ignore', timeout: 5000 }).status === 0;
  } catch {
    return false;
  }
}

export function sandboxCapabilities(): SandboxCapabilities {
  if (probed) return probed;
  const linux = process.platform === 'linux';
  const prlimit = linux && runs('prlimit', ['--cpu=10', 'true']);
  let netns: SandboxCapabilities['netns'] = null;
  if (linux && runs('unshare', ['--user', '--map-root-user', '--net', 'true'])) netns = 'userns';
  else if (linux && runs('unshare', ['--net', 'true'])) netns = 'root';
  probed = { prlimit, netns, proc: linux && existsSync('/proc/self/stat') };
  return probed;
}

/** How the harness reaches the gateway and what else it can reach. */
export type NetworkIsolation = 'namespace' | 'guard';

export interface SpawnPlan {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  network: NetworkIsolation;
  /** RSS (MB) above which the watchdog kills the process tree. */
  rssLimitMb: number;
}

/** Memory a Node process needs beyond its JS heap (young generation, code, ICU, malloc arenas). */
export const NODE_OVERHEAD_MB = 192;

/**
 * Writable address space Node 24 maps at start-up whatever the heap size (measured: it aborts with
 * SIGTRAP under an RLIMIT_DATA below ~560 MB; Node 20 starts in 320). Counted by the data limit
 * only: it is reserved, not resident, so the RSS watchdog does not get it. Node 24 is what VS Code's
 * extension host runs, so an engine started from the editor needs it.
 */
export const NODE_RESERVED_DATA_MB = Number(process.versions.node.split('.')[0]) >= 24 ? 512 : 0;

/**
 * A fixed PATH rather than the parent's: the parent's may lead into home folders and shims
 * (pyenv, asdf) that need environment variables we scrub.
 */
export const SANDBOX_PATH = '/usr/local/bin:/usr/bin:/bin:/opt/homebrew/bin';

/** The whole environment a harness gets. Nothing from the parent passes except the locale. */
export function scrubbedEnv(dir: string, runtime: 'node' | 'command'): Record<string, string> {
  const env: Record<string, string> = {
    PATH: SANDBOX_PATH,
    HOME: dir,
    LANG: process.env.LANG && /^[\w.@-]+$/.test(process.env.LANG) ? process.env.LANG : 'C.UTF-8',
  };
  if (runtime === 'command') {
    // Unbuffered stdout so protocol lines arrive as written; no bytecode files in the candidate folder (its identity).
    Object.assign(env, { PYTHONUNBUFFERED: '1', PYTHONDONTWRITEBYTECODE: '1', PYTHONIOENCODING: 'utf-8' });
  }
  return env;
}

/** prlimit's arguments: CPU seconds (soft, hard) as a backstop to the watchdog, and data-segment bytes. */
function rlimitArgs(limits: SandboxLimits, dataMb: number): string[] {
  // Soft limit a second above the watchdog's, so the watchdog normally reports first with an exact figure.
  const soft = Math.ceil(limits.cpuMs / 1000) + 1;
  return [`--cpu=${soft}:${soft + 1}`, `--data=${dataMb * 1024 * 1024}`];
}

function wrap(caps: SandboxCapabilities, network: NetworkIsolation, limits: SandboxLimits, dataMb: number, payload: string[], pidNamespace: boolean): string[] {
  const out: string[] = [];
  if (caps.prlimit) out.push('prlimit', ...rlimitArgs(limits, dataMb), '--');
  if (network === 'namespace') {
    if (!caps.netns) throw new Error('network namespace isolation requested but `unshare` cannot create one here');
    out.push('unshare', ...(caps.netns === 'userns' ? ['--user', '--map-root-user'] : []), '--net');
    // A PID namespace makes the harness its init: when it dies every process it started dies too,
    // even ones that left its process group. Only for command harnesses — Node cannot spawn.
    if (pidNamespace) out.push('--pid', '--fork', '--kill-child');
    out.push('--');
  }
  return [...out, ...payload];
}

export function chooseNetwork(requested: 'auto' | NetworkIsolation, caps: SandboxCapabilities): NetworkIsolation {
  if (requested === 'auto') return caps.netns ? 'namespace' : 'guard';
  return requested;
}

export function planNodeWorker(o: { dir: string; bootstrap: string; bundle: string; limits: SandboxLimits; network: NetworkIsolation }): SpawnPlan {
  const caps = sandboxCapabilities();
  const node = [
    process.execPath,
    // Node 20 knows only --experimental-permission; Node 24 (VS Code's extension host, which starts
    // the engine from the editor) rejects it and wants --permission.
    process.allowedNodeEnvironmentFlags.has('--permission') ? '--permission' : '--experimental-permission',
    // Read access: the candidate's folder, its bundle and the bootstrap. No write, no child
    // processes, no workers, no addons, no WASI, no inspector (all refused by the permission model).
    // One flag per path: Node 20.20 reads a comma in the value as part of the path.
    `--allow-fs-read=${o.dir}`,
    `--allow-fs-read=${o.bundle}`,
    `--allow-fs-read=${o.bootstrap}`,
    `--max-old-space-size=${o.limits.memoryMb}`,
    '--no-warnings', // the permission model's ExperimentalWarning would otherwise open every stderr
    o.bootstrap,
    o.bundle,
  ];
  const full = wrap(caps, o.network, o.limits, o.limits.memoryMb + NODE_OVERHEAD_MB + NODE_RESERVED_DATA_MB, node, false);
  return { command: full[0], args: full.slice(1), env: scrubbedEnv(o.dir, 'node'), cwd: o.dir, network: o.network, rssLimitMb: o.limits.memoryMb + NODE_OVERHEAD_MB };
}

export function planCommandWorker(o: { dir: string; command: string[]; limits: SandboxLimits; network: NetworkIsolation }): SpawnPlan {
  const caps = sandboxCapabilities();
  const full = wrap(caps, o.network, o.limits, o.limits.memoryMb, o.command, true);
  return { command: full[0], args: full.slice(1), env: scrubbedEnv(o.dir, 'command'), cwd: o.dir, network: o.network, rssLimitMb: o.limits.memoryMb };
}
