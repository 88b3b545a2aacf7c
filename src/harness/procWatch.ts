/**
 * CPU time and resident memory of a process tree, read from /proc (Linux). The watchdog polls this
 * because rlimits alone are coarse (RLIMIT_CPU counts whole seconds, per process) and say nothing
 * about a tree of processes.
 */
import { readFileSync } from 'node:fs';

const CLOCK_TICKS = 100; // USER_HZ: 100 on every Linux architecture Node supports
const PAGE_KB = 4;

export interface TreeUsage {
  cpuMs: number;
  rssMb: number;
  /** Members of the tree with their start times (clock ticks since boot), to tell a pid from its reuse. */
  procs: { pid: number; start: number }[];
}

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** utime+stime+cutime+cstime (ms) and RSS (MB) of one process, or undefined when it is gone. */
function processUsage(pid: number): { cpuMs: number; rssMb: number; start: number } | undefined {
  const stat = read(`/proc/${pid}/stat`);
  if (!stat) return undefined;
  // The command name may contain spaces and parentheses: fields start after the last ')'.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // f[0] is field 3 (state); utime..cstime are fields 14..17, rss is field 24.
  const ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  const rssPages = Number(f[21]);
  return { cpuMs: (ticks * 1000) / CLOCK_TICKS, rssMb: (rssPages * PAGE_KB) / 1024, start: Number(f[19]) };
}

function children(pid: number): number[] {
  const out: number[] = [];
  const tasks = read(`/proc/${pid}/task/${pid}/children`);
  if (tasks) for (const c of tasks.trim().split(/\s+/)) if (c) out.push(Number(c));
  return out;
}

/** Usage summed over `root` and its descendants (bounded, so a fork bomb cannot stall us). */
export function treeUsage(root: number, maxProcs = 256): TreeUsage | undefined {
  const first = processUsage(root);
  if (!first) return undefined;
  let cpuMs = first.cpuMs;
  let rssMb = first.rssMb;
  const procs = [{ pid: root, start: first.start }];
  const queue = children(root);
  while (queue.length && procs.length < maxProcs) {
    const pid = queue.shift() as number;
    const u = processUsage(pid);
    if (!u) continue;
    procs.push({ pid, start: u.start });
    cpuMs += u.cpuMs;
    rssMb += u.rssMb;
    queue.push(...children(pid));
  }
  return { cpuMs, rssMb, procs };
}

/** The start time of a live process, or undefined when it is gone. */
export function processStart(pid: number): number | undefined {
  return processUsage(pid)?.start;
}
