/**
 * The last line against orphaned harnesses (Linux): every harness process carries a marker naming
 * its engine (pid and start time) in its environment; an engine starting up kills marked processes
 * whose engine is gone. The kernel's parent-death signal (sandbox.ts) normally gets there first;
 * this catches what it cannot: an engine killed while a harness was being spawned, before the
 * signal was armed, and wrappers that drop it when they enter a user namespace.
 */
import { readdirSync, readFileSync } from 'node:fs';

export const ENGINE_MARKER = 'WHALE_ENGINE';

/** Field 22 of /proc/<pid>/stat: start time in clock ticks since boot (pid + start time names one process). */
function startTime(pid: number | 'self'): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

let marker: string | undefined;
/** This engine's marker value: `<pid>:<start time>`. */
export function engineMarker(): string {
  return (marker ??= `${process.pid}:${startTime('self') ?? 'unknown'}`);
}

/** Kills harness processes whose engine no longer runs; returns how many. */
export function reapOrphanedHarnesses(): number {
  if (process.platform !== 'linux') return 0;
  let killed = 0;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch {
    return 0;
  }
  for (const p of pids) {
    let environ: string;
    try {
      environ = readFileSync(`/proc/${p}/environ`, 'latin1');
    } catch {
      continue; // gone, or another user's
    }
    const m = new RegExp(`(?:^|\\0)${ENGINE_MARKER}=(\\d+):(\\w+)(?:\\0|$)`).exec(environ);
    if (!m) continue;
    const [, enginePid, engineStart] = m;
    if (startTime(Number(enginePid)) === engineStart) continue; // its engine still runs
    try {
      process.kill(Number(p), 'SIGKILL');
      killed++;
    } catch {
      // already gone
    }
  }
  return killed;
}
