/**
 * How a harness process is started: the command line (rlimit and namespace wrappers, Node's
 * permission flags), a scrubbed environment, and what this platform can enforce. SANDBOX.md says
 * what each layer stops and what it cannot.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync } from 'node:fs';
import type { SandboxLimits } from '../core/config.js';
import { ENGINE_MARKER, engineMarker } from './reaper.js';

/** What the host offers, probed once per process. */
export interface SandboxCapabilities {
  /** util-linux `prlimit`: RLIMIT_CPU / RLIMIT_DATA for the harness process. */
  prlimit: boolean;
  /** How to get an empty network namespace: as an unprivileged user (user namespace) or as root. */
  netns: 'userns' | 'root' | null;
  /** /proc with per-process stat/status (CPU and RSS watchdog). */
  proc: boolean;
  /** bubblewrap (`bwrap`) can build a private mount namespace here: file-system confinement for command harnesses. */
  bwrap: boolean;
  /** util-linux `setpriv --pdeathsig`: the kernel kills the harness when the engine dies, however it dies. */
  pdeathsig: boolean;
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
  const bwrap = linux && runs('bwrap', ['--ro-bind', '/', '/', '--unshare-all', '--die-with-parent', 'true']);
  const pdeathsig = linux && runs('setpriv', ['--pdeathsig', 'KILL', '--', 'true']);
  probed = { prlimit, netns, proc: linux && existsSync('/proc/self/stat'), bwrap, pdeathsig };
  return probed;
}

/** How the harness reaches the gateway and what else it can reach. */
export type NetworkIsolation = 'namespace' | 'guard';

/**
 * What a command harness can see of the file system: 'confined' (bubblewrap: the system's /usr,
 * a few files of /etc, its own folder read-only, a private /tmp) or 'open' (whatever the user
 * running WHALE can read). Node harnesses are confined by Node's permission model either way.
 */
export type FilesystemIsolation = 'confined' | 'open';

export interface SpawnPlan {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  network: NetworkIsolation;
  /** Command harnesses only; Node harnesses are confined by the permission model. */
  filesystem?: FilesystemIsolation;
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
    // Names the engine (pid and start time, nothing secret) so a later engine can reap this process if it is orphaned.
    [ENGINE_MARKER]: engineMarker(),
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

/**
 * Outermost: the parent-death signal, so that the process the engine spawned is SIGKILLed by the
 * kernel when the engine dies (SIGKILL included). What it starts dies with it: unshare's
 * --kill-child, bwrap's --die-with-parent, or (Node) it starts nothing.
 */
function dieWithEngine(caps: SandboxCapabilities): string[] {
  return caps.pdeathsig ? ['setpriv', '--pdeathsig', 'KILL', '--'] : [];
}

function wrap(caps: SandboxCapabilities, network: NetworkIsolation, limits: SandboxLimits, dataMb: number, payload: string[], pidNamespace: boolean): string[] {
  const out: string[] = [...dieWithEngine(caps)];
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

export function chooseFilesystem(requested: 'auto' | FilesystemIsolation, caps: SandboxCapabilities): FilesystemIsolation {
  if (requested === 'auto') return caps.bwrap ? 'confined' : 'open';
  if (requested === 'confined' && !caps.bwrap)
    throw new Error(
      'file-system confinement requested but bubblewrap (`bwrap`) cannot create a mount namespace here (Debian/Ubuntu: apt-get install bubblewrap)',
    );
  return requested;
}

// Top-level system folders a program may need: on merged-/usr systems they are symlinks into /usr
// and are recreated as such; otherwise bound read-only.
const SYSTEM_DIRS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
// Only what a dynamically linked interpreter reads at start-up. Not /etc as a whole: it holds
// host secrets (shadow, ssh keys, credentials of system services).
const ETC_FILES = [
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/alternatives',
  '/etc/localtime',
  '/etc/nsswitch.conf',
  '/etc/passwd',
  '/etc/group',
  '/etc/mime.types',
];

/**
 * bubblewrap's arguments: fresh namespaces for everything (network too unless `shareNet`), the
 * candidate folder read-only, the gateway's socket folder, and no session with the parent's
 * terminal. bwrap is PID 1 of the new PID namespace, so every process the harness starts dies
 * with it, and --die-with-parent takes it down when the group is killed.
 */
function bwrapArgs(dir: string, socketDir: string | undefined, shareNet: boolean): string[] {
  const out = ['bwrap', '--unshare-all', ...(shareNet ? ['--share-net'] : []), '--die-with-parent', '--new-session', '--ro-bind', '/usr', '/usr'];
  for (const d of SYSTEM_DIRS) {
    let link: boolean;
    try {
      link = lstatSync(d).isSymbolicLink();
    } catch {
      continue;
    }
    out.push(...(link ? ['--symlink', `usr${d}`, d] : ['--ro-bind', d, d]));
  }
  for (const f of ETC_FILES) out.push('--ro-bind-try', f, f);
  out.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--ro-bind', dir, dir);
  if (socketDir) out.push('--bind', socketDir, socketDir);
  out.push('--chdir', dir, '--');
  return out;
}

export function chooseNetwork(requested: 'auto' | NetworkIsolation, caps: SandboxCapabilities): NetworkIsolation {
  if (requested === 'auto') return caps.netns ? 'namespace' : 'guard';
  return requested;
}

/**
 * Node under the permission model with read access to the candidate's folder, its bundle and the
 * bootstrap only. No write, no child processes, no workers, no addons, no WASI, no inspector (all
 * refused by the permission model). One flag per path: Node 20.20 reads a comma in the value as part of the path.
 */
function readOnlyNode(o: { dir: string; bootstrap: string; bundle?: string }): string[] {
  return [
    process.execPath,
    permissionFlag(),
    `--allow-fs-read=${o.dir}`,
    ...(o.bundle ? [`--allow-fs-read=${o.bundle}`] : []),
    `--allow-fs-read=${o.bootstrap}`,
  ];
}

export function planNodeWorker(o: { dir: string; bootstrap: string; bundle: string; limits: SandboxLimits; network: NetworkIsolation }): SpawnPlan {
  const caps = sandboxCapabilities();
  const node = [
    ...readOnlyNode(o),
    `--max-old-space-size=${o.limits.memoryMb}`,
    '--no-warnings', // the permission model's ExperimentalWarning would otherwise open every stderr
    o.bootstrap,
    o.bundle,
  ];
  const full = wrap(caps, o.network, o.limits, o.limits.memoryMb + NODE_OVERHEAD_MB + NODE_RESERVED_DATA_MB, node, false);
  return {
    command: full[0],
    args: full.slice(1),
    env: scrubbedEnv(o.dir, 'node'),
    cwd: o.dir,
    network: o.network,
    rssLimitMb: o.limits.memoryMb + NODE_OVERHEAD_MB,
  };
}

/** Node 20 knows only --experimental-permission; Node 24 (VS Code's extension host, which starts the engine from the editor) wants --permission. */
function permissionFlag(): string {
  return process.allowedNodeEnvironmentFlags.has('--permission') ? '--permission' : '--experimental-permission';
}

let warmProbe: boolean | undefined;

/**
 * Whether this Node gives a worker thread a permission set of its own (execArgv), without the
 * worker permission its parent has: what warm processes rely on. Probed once with a real process;
 * where it fails (another Node, no permission model), every rollout gets a process of its own.
 */
export function warmWorkersSupported(): boolean {
  if (warmProbe !== undefined) return warmProbe;
  // Inside an Electron runtime (an editor's, as Node) the probe would start the editor: no warm processes there.
  if (process.versions.electron) return (warmProbe = false);
  // Only on Node 20, where the pool is tested: Node 24 passed this probe, then crashed in the real
  // limits (SIGTRAP in WorkerThreadData, in the VS Code test rig), so every rollout there failed.
  if (process.versions.node.split('.')[0] !== '20') return (warmProbe = false);
  const flag = permissionFlag();
  const code = `const { Worker } = require('node:worker_threads');
const w = new Worker("const p = process.permission; require('node:worker_threads').parentPort.postMessage(!!p && !p.has('worker') && !p.has('child') && !p.has('fs.write'))", { eval: true, execArgv: [${JSON.stringify(flag)}, '--no-warnings'] });
w.on('message', (ok) => process.stdout.write(ok ? 'confined' : 'open'));
w.on('error', () => process.stdout.write('error'));`;
  try {
    const r = spawnSync(process.execPath, [flag, '--allow-worker', '--no-warnings', '-e', code], {
      encoding: 'utf8',
      timeout: 10_000,
      env: { PATH: SANDBOX_PATH },
    });
    warmProbe = r.status === 0 && r.stdout === 'confined';
  } catch {
    warmProbe = false;
  }
  return warmProbe;
}

/** What a warm process's host thread and its worker threads need beyond a one-rollout process (measured: about 40 MB resident). */
export const WARM_HOST_OVERHEAD_MB = 64;

/**
 * A warm process retires once it has used this much CPU in all: RLIMIT_CPU counts the process's
 * whole life, so its backstop is set this far above the per-rollout limit and a process is never
 * handed a rollout once it is past it (the /proc watchdog, per rollout, stays the limit that fires).
 */
export const WARM_RETIRE_CPU_MS = 30_000;

/**
 * A warm process for one Node candidate (worker/poolHost.ts): the same wrappers (parent-death
 * signal, rlimits, empty network namespace) and the same read-only paths as a one-rollout process,
 * plus `--allow-worker` for the host thread, which starts each rollout in a worker thread whose own
 * permission set has no worker, child-process or write permission, and read access to
 * /proc/self/fd for the host's descriptor check. The JS heap limit is the worker thread's
 * (resourceLimits), per rollout.
 */
export function planNodeHost(o: { dir: string; bootstrap: string; bundle: string; limits: SandboxLimits; network: NetworkIsolation }): SpawnPlan {
  const node = [
    ...readOnlyNode(o),
    '--allow-fs-read=/proc/self/fd',
    '--allow-worker',
    '--no-warnings',
    o.bootstrap,
    o.bundle,
    '--pool',
    o.dir,
    String(o.limits.memoryMb),
  ];
  return warmPlan(o, node, WARM_HOST_OVERHEAD_MB);
}

/**
 * The wrappers of a warm process around `node`: a one-rollout process's, with the CPU backstop raised
 * for its whole life (WARM_RETIRE_CPU_MS) and `hostMb` more memory for the host's own needs.
 */
function warmPlan(o: { dir: string; limits: SandboxLimits; network: NetworkIsolation }, node: string[], hostMb: number): SpawnPlan {
  const limits = { ...o.limits, cpuMs: o.limits.cpuMs + WARM_RETIRE_CPU_MS };
  const full = wrap(sandboxCapabilities(), o.network, limits, o.limits.memoryMb + NODE_OVERHEAD_MB + hostMb + NODE_RESERVED_DATA_MB, node, false);
  return {
    command: full[0],
    args: full.slice(1),
    env: scrubbedEnv(o.dir, 'node'),
    cwd: o.dir,
    network: o.network,
    rssLimitMb: o.limits.memoryMb + NODE_OVERHEAD_MB + hostMb,
  };
}

/** What a context host (worker/contextHost.ts) needs beyond a one-rollout process: its own few MB of heap. */
export const CONTEXT_HOST_HEAP_MB = 16;

/**
 * A warm process that serves Node candidates' rollouts each in a fresh `vm` context
 * (worker/contextHost.ts): exactly the wrappers and rlimits of a one-rollout process (no worker,
 * child-process or write permission). It belongs to no candidate: the runtime sends each
 * candidate's script over its stdin (`run.script`), so it reads nothing but the bootstrap and `dir`,
 * an empty folder of the runtime's, and serves whichever candidate comes next. A search that tries a
 * new candidate every few rollouts then does not start a process per candidate and slot. The JS
 * heap limit is the process's, the rollout's plus the host's own.
 */
export function planNodeContextHost(o: { dir: string; bootstrap: string; limits: SandboxLimits; network: NetworkIsolation }): SpawnPlan {
  const node = [
    ...readOnlyNode({ dir: o.dir, bootstrap: o.bootstrap }),
    `--max-old-space-size=${o.limits.memoryMb + CONTEXT_HOST_HEAP_MB}`,
    // The host's realm compiles no code from strings and its built-ins are frozen, so a way into it
    // from a context finds nothing to run and nothing to hook; each rollout's context is given eval
    // back and has built-ins of its own (contextHost.ts).
    '--disallow-code-generation-from-strings',
    '--frozen-intrinsics',
    '--expose-gc', // the host's own global only: a full collection before it decides that a rollout left memory behind
    '--no-warnings',
    o.bootstrap,
    '--contexts',
  ];
  return warmPlan(o, node, CONTEXT_HOST_HEAP_MB);
}

export function planCommandWorker(o: {
  dir: string;
  command: string[];
  limits: SandboxLimits;
  network: NetworkIsolation;
  filesystem: FilesystemIsolation;
  socketDir?: string;
}): SpawnPlan {
  const caps = sandboxCapabilities();
  let full: string[];
  if (o.filesystem === 'confined') {
    // bwrap makes the network and PID namespaces itself, so no unshare around it.
    const sandboxed = bwrapArgs(o.dir, o.socketDir, o.network !== 'namespace');
    full = [...dieWithEngine(caps), ...(caps.prlimit ? ['prlimit', ...rlimitArgs(o.limits, o.limits.memoryMb), '--'] : []), ...sandboxed, ...o.command];
  } else {
    full = wrap(caps, o.network, o.limits, o.limits.memoryMb, o.command, true);
  }
  return {
    command: full[0],
    args: full.slice(1),
    env: scrubbedEnv(o.dir, 'command'),
    cwd: o.dir,
    network: o.network,
    filesystem: o.filesystem,
    rssLimitMb: o.limits.memoryMb,
  };
}
