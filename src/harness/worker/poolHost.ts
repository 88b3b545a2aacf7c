/**
 * The warm host: the main thread of a sandboxed harness process that serves many rollouts of ONE
 * candidate, one after another, each in a fresh worker thread (its own V8 isolate, heap, globals,
 * module graph, timers and event loop). Started by the bootstrap as
 *
 *   node --permission… --allow-worker … whale-bootstrap.mjs <bundle> --pool <folder> <heap MB>
 *
 * It runs only our code. For each `run` line on stdin it starts a worker thread on the bootstrap
 * (which then behaves exactly as in a one-rollout process) under a permission set of its own: the
 * same read-only paths as a one-rollout process and, unlike this thread, no `--allow-worker`, so
 * candidate code can start neither processes nor threads. When the worker has exited (its event loop
 * closed, every request it had in flight finished) the host checks that the process's file
 * descriptors are exactly what they were before any candidate ran (else it exits, and the process
 * is replaced), and only then reports `exit`; the engine sends the next rollout only after that. SANDBOX.md says what
 * is shared between the rollouts of one process and what is not.
 */
import fs from 'node:fs';
import { Worker } from 'node:worker_threads';
import { LineSplitter, encodeLine } from '../framing.js';
import { ParentMessage, parseLine, type ChildMessage, type RunMessage } from '../protocol.js';

export interface PoolHostOptions {
  bootstrap: string;
  bundle: string;
  dir: string;
  heapMb: number;
}

const FD_DIR = '/proc/self/fd';

type FdId = string;

/** Identity of every open descriptor (device, inode, type): a number reused for another file reads as changed. */
function openFds(): Map<number, FdId> {
  const out = new Map<number, FdId>();
  for (const name of fs.readdirSync(FD_DIR)) {
    const fd = Number(name);
    try {
      const st = fs.fstatSync(fd);
      out.set(fd, `${st.dev}:${st.ino}:${st.mode}:${st.rdev}`);
    } catch {
      // the descriptor readdir itself used, already closed
    }
  }
  return out;
}

export function runPoolHost(o: PoolHostOptions): void {
  const writeSync = fs.writeSync;
  // A leading newline: whatever a candidate left half-written on stdout ends there, as its own line.
  const frame = (m: ChildMessage) => writeSync(1, '\n' + encodeLine(m));
  const permission = process.execArgv.find((a) => a === '--permission' || a === '--experimental-permission') ?? '--experimental-permission';
  const execArgv = [permission, `--allow-fs-read=${o.dir}`, `--allow-fs-read=${o.bundle}`, `--allow-fs-read=${o.bootstrap}`, '--no-warnings'];
  const queue: string[] = [];
  let busy = false;
  let baseline: Map<number, FdId> | undefined; // taken just before the first worker: no candidate has run yet

  const spawn = () =>
    new Worker(o.bootstrap, { argv: [o.bundle], execArgv, resourceLimits: { maxOldGenerationSizeMb: o.heapMb }, stdin: false, stdout: false, stderr: false });

  /**
   * After a rollout the process's descriptors must be exactly those it had before any worker ran:
   * Node closes what a worker opened through fs (trackUnmanagedFds) and its loop's own; anything else
   * (a descriptor closed, replaced or left behind) retires the process rather than being guessed at.
   */
  const fdsIntact = (): boolean => {
    const now = openFds();
    if (!baseline || now.size !== baseline.size) return false;
    for (const [fd, id] of baseline) if (now.get(fd) !== id) return false;
    return true;
  };

  const next = () => {
    const line = queue.shift();
    if (line === undefined) {
      busy = false;
      return;
    }
    busy = true;
    // Validated here (this thread builds the schemas once), so the rollout's thread needs none (framing.ts).
    const parsed = parseLine(ParentMessage, line);
    if (!parsed.ok) {
      // The engine's line: never malformed unless something is badly wrong.
      writeSync(2, `bad message from the runtime: ${parsed.error}\n`);
      process.exit(3);
    }
    const run: RunMessage = parsed.message;
    const nonce = run.nonce;
    baseline ??= openFds();
    const worker = spawn();
    worker.on('error', (e: Error & { code?: string }) => frame({ type: 'error', message: `${e.code ?? 'worker error'}: ${e.message}`.slice(0, 8000), nonce }));
    worker.on('exit', (code) => {
      if (!fdsIntact()) process.exit(4); // not as it was before any candidate ran: this process is not reused
      frame({ type: 'exit', code, nonce });
      next();
    });
    worker.postMessage(run);
  };

  const splitter = new LineSplitter(
    (line) => {
      queue.push(line);
      if (!busy) next();
    },
    () => process.exit(3),
  );
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (c: string) => splitter.push(c));
  process.stdin.on('end', () => process.exit(0));
  process.stdin.on('error', () => process.exit(3));
}
