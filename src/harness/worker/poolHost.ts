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
 * descriptors are what they were before any candidate ran, closes any the candidate left open, and
 * only then reports `exit`; the engine sends the next rollout only after that. SANDBOX.md says what
 * is shared between the rollouts of one process and what is not.
 */
import fs from 'node:fs';
import { Worker } from 'node:worker_threads';
import { LineSplitter, encodeMessage, type ChildMessage } from '../protocol.js';

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
  const frame = (m: ChildMessage) => writeSync(1, '\n' + encodeMessage(m));
  const permission = process.execArgv.find((a) => a === '--permission' || a === '--experimental-permission') ?? '--experimental-permission';
  const execArgv = [permission, `--allow-fs-read=${o.dir}`, `--allow-fs-read=${o.bundle}`, `--allow-fs-read=${o.bootstrap}`, '--no-warnings'];
  const queue: string[] = [];
  let busy = true; // until the warm-up worker is gone
  let baseline: Map<number, FdId> | undefined;

  const start = (worker: Worker, onExit: (code: number) => void) => {
    worker.on('exit', onExit);
  };
  const spawn = (argv: string[]) =>
    new Worker(o.bootstrap, { argv, execArgv, resourceLimits: { maxOldGenerationSizeMb: o.heapMb }, stdin: false, stdout: false, stderr: false });

  /** After a rollout: the descriptors must be the baseline's; extra ones (left by the candidate) are closed. */
  const checkFds = (): boolean => {
    const now = openFds();
    for (const [fd, id] of baseline ?? []) if (now.get(fd) !== id) return false;
    for (const fd of now.keys())
      if (!baseline?.has(fd)) {
        try {
          fs.closeSync(fd);
        } catch {
          // closed meanwhile
        }
      }
    return true;
  };

  const next = () => {
    const line = queue.shift();
    if (line === undefined) {
      busy = false;
      return;
    }
    busy = true;
    let nonce: string | undefined;
    try {
      nonce = (JSON.parse(line) as { nonce?: string }).nonce;
    } catch {
      process.exit(3); // the engine's line: never malformed unless something is badly wrong
    }
    const worker = spawn([o.bundle]);
    worker.on('error', (e: Error & { code?: string }) => frame({ type: 'error', message: `${e.code ?? 'worker error'}: ${e.message}`.slice(0, 8000), nonce }));
    start(worker, (code) => {
      if (!checkFds()) process.exit(4); // a descriptor of ours was closed or replaced: this process is not reused
      frame({ type: 'exit', code, nonce });
      next();
    });
    worker.postMessage(line);
  };

  // A warm-up worker of our own (no candidate code): the descriptors Node keeps once a worker has come and gone are the baseline.
  start(spawn(['--warm-up']), () => {
    baseline = openFds();
    next();
  });

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
