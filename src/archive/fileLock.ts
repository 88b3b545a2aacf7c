/**
 * A lock that survives crashes and works when several hosts or containers share a store: a
 * directory created with mkdir (atomic on every file system we support), holding `owner.json`
 * (host, pid, since) whose mtime the holder refreshes — its heartbeat. A lock whose heartbeat is
 * older than `staleMs` is taken over, whoever wrote it: staleness is judged by time, not by pid,
 * because a pid means nothing across containers. The one shortcut: when the lock was written on this
 * very node (same boot and pid namespace) and its pid is gone, it is stale at once.
 *
 * Taking over renames the stale directory away first (only one contender's rename succeeds), so two
 * engines never both believe they took the same stale lock.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, readlinkSync, renameSync, rmSync, statSync, utimesSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { WhaleError } from '../core/errors.js';

export interface LockHolder {
  host: string;
  pid: number;
  since: string;
  /** What it is doing (e.g. "whale run --resume"). */
  purpose?: string;
  /** Boot id + pid namespace of the holder's node: equal only when its pid can be checked here. */
  node: string;
  token: string;
}

export interface LockOptions {
  /** A holder whose heartbeat is older than this is taken over (default 60 s, or WHALE_LOCK_STALE_MS). */
  staleMs?: number;
  purpose?: string;
}

export interface HeldLock {
  readonly holder: LockHolder;
  release(): void;
}

/** Someone else holds the lock; the message names them. */
export class LockHeldError extends WhaleError {
  constructor(
    readonly lockDir: string,
    readonly holder: LockHolder | undefined,
    readonly heartbeatAgeMs: number,
    what: string,
    staleMs: number,
  ) {
    super(
      `${what} is held by ${holder ? `${holder.purpose ? `'${holder.purpose}', ` : ''}pid ${holder.pid} on host ${holder.host}, since ${holder.since}` : 'another process that is just taking it'} ` +
        `(last heartbeat ${Math.round(heartbeatAgeMs / 1000)} s ago; lock ${lockDir}). Only one engine may write it at a time: wait for that one to finish or stop it. ` +
        `A holder that died is taken over once its heartbeat is ${Math.round(staleMs / 1000)} s old.`,
      'locked',
    );
  }
}

const OWNER = 'owner.json';
/** How long a contender waits for a fresh lock's owner to be written before refusing without a name. */
const OWNER_WAIT_MS = 5_000;
const OWNER_POLL_MS = 20;

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

export function defaultStaleMs(): number {
  const env = Number(process.env.WHALE_LOCK_STALE_MS);
  return Number.isFinite(env) && env > 0 ? env : 60_000;
}

let nodeId: string | undefined;
/** This node's identity for pid checks: the kernel's boot id and our pid namespace. */
function thisNode(): string {
  if (nodeId === undefined) {
    let boot = '';
    let ns = '';
    try {
      boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
      ns = readlinkSync('/proc/self/ns/pid');
    } catch {
      // not Linux: no shortcut, time alone decides
    }
    nodeId = boot && ns ? `${hostname()}/${boot}/${ns}` : `${hostname()}/${randomBytes(8).toString('hex')}`;
  }
  return nodeId;
}

function pidGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

function readHolder(dir: string): LockHolder | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, OWNER), 'utf8')) as LockHolder;
  } catch {
    return undefined;
  }
}

/** Age of the newest sign of life: the owner file's mtime, or the directory's while it is being written. */
function heartbeatAge(dir: string): number | undefined {
  let newest = 0;
  for (const p of [dir, join(dir, OWNER)]) {
    try {
      newest = Math.max(newest, statSync(p).mtimeMs);
    } catch {
      if (p === dir) return undefined; // no lock at all
    }
  }
  return Date.now() - newest;
}

/** Heartbeats of the locks this process holds, keyed by lock directory. */
const HEARTBEATS = new Map<string, NodeJS.Timeout>();

/**
 * Takes the lock at `dir` or throws LockHeldError naming its holder. `what` names the thing locked
 * in the message ("run 2026-… ").
 */
export function acquireLock(dir: string, what: string, opts: LockOptions = {}): HeldLock {
  const staleMs = opts.staleMs ?? defaultStaleMs();
  const ownerWaitEnd = Date.now() + OWNER_WAIT_MS;
  for (let attempt = 0; ; attempt++) {
    try {
      mkdirSync(dir);
      return own(dir, staleMs, opts.purpose);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const age = heartbeatAge(dir);
    if (age === undefined) continue; // released in between: try again at once
    const holder = readHolder(dir);
    if (holder === undefined && age <= staleMs && Date.now() < ownerWaitEnd) {
      // Taken a moment ago and its owner not yet written (or released in between): look again
      // shortly, so the refusal can name the holder, or the lock is found free.
      sleepSync(OWNER_POLL_MS);
      attempt--;
      continue;
    }
    const deadHere = holder !== undefined && holder.node === thisNode() && !HEARTBEATS.has(dir) && (holder.pid === process.pid || pidGone(holder.pid));
    if ((age > staleMs || deadHere) && attempt < 5) {
      const tomb = `${dir}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
      try {
        renameSync(dir, tomb); // only one contender gets it
      } catch {
        continue;
      }
      rmSync(tomb, { recursive: true, force: true });
      continue;
    }
    throw new LockHeldError(dir, holder, age, what, staleMs);
  }
}

/** Waits for the lock (polling), where the second writer should wait rather than be refused; past `timeoutMs` the refusal is thrown. */
export async function waitForLock(
  dir: string,
  what: string,
  opts: LockOptions & { signal?: AbortSignal; pollMs?: number; timeoutMs?: number } = {},
): Promise<HeldLock> {
  const deadline = opts.timeoutMs === undefined ? Infinity : Date.now() + opts.timeoutMs;
  for (;;) {
    try {
      return acquireLock(dir, what, opts);
    } catch (e) {
      if (!(e instanceof LockHeldError) || Date.now() > deadline) throw e;
    }
    if (opts.signal?.aborted) throw new Error(`cancelled while waiting for ${what}`);
    await new Promise((r) => setTimeout(r, opts.pollMs ?? 250));
  }
}

function own(dir: string, staleMs: number, purpose: string | undefined): HeldLock {
  const holder: LockHolder = {
    host: hostname(),
    pid: process.pid,
    since: new Date().toISOString(),
    ...(purpose ? { purpose } : {}),
    node: thisNode(),
    token: randomBytes(8).toString('hex'),
  };
  const file = join(dir, OWNER);
  // Written whole, then renamed into place: a holder killed between creating the file and writing it
  // would leave an empty owner that nobody can judge dead, and the lock would block for staleMs.
  const tmp = `${file}.${holder.token}`;
  const fd = openSync(tmp, 'w');
  writeSync(fd, JSON.stringify(holder));
  fsyncSync(fd);
  closeSync(fd);
  renameSync(tmp, file);
  const beat = setInterval(
    () => {
      try {
        const now = new Date();
        utimesSync(file, now, now);
      } catch {
        // taken over after we stalled, or the store went away: the next write will say so
      }
    },
    Math.max(50, Math.floor(staleMs / 4)),
  );
  beat.unref();
  HEARTBEATS.set(dir, beat);
  let released = false;
  return {
    holder,
    release() {
      if (released) return;
      released = true;
      clearInterval(beat);
      HEARTBEATS.delete(dir);
      if (readHolder(dir)?.token !== holder.token) return; // no longer ours: leave the new holder's lock alone
      const tomb = `${dir}.released-${holder.token}`;
      try {
        renameSync(dir, tomb);
        rmSync(tomb, { recursive: true, force: true });
      } catch {
        // already gone
      }
    },
  };
}
