import { createHash, createHmac, type Hash } from 'node:crypto';
import { type BigIntStats, existsSync, mkdirSync, readFileSync, readSync, truncateSync, openSync, closeSync, fsyncSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { appendJsonLine, writeJsonAtomic } from '../core/atomic.js';
import { sha256 } from '../core/treeHash.js';
import { waitForLock } from './fileLock.js';
import { projectSecret } from './projectSecret.js';
import { guardStorage, isStorageFault, storageError, StorageError } from './storageError.js';
import { TrajectorySchema, type Trajectory } from '../core/trajectory.js';

/**
 * Everything that determines an evaluation's outcome distribution. Two evaluations with equal keys
 * are the same experiment, so the second one is a cache hit and costs no rollouts.
 */
export interface EvalKey {
  domain: string;
  /** Identity of the task set (hash of task ids and, for file-based tasks, their content). */
  taskSet: string;
  split: string;
  harnessHash: string;
  policyVersion: string;
  sampling: Record<string, unknown>;
  limits: Record<string, unknown>;
  k: number;
  seed: number;
  /** The sandbox's isolation of the harness (network, file system): a confined and an unconfined run are different experiments. */
  isolation?: Record<string, string>;
}

export interface TaskResult {
  taskId: string;
  passes: number;
  samples: number;
  mean: number;
  terminations: Record<string, number>;
}

export interface EvalSummary {
  key: EvalKey;
  keyHash: string;
  meanAtK: number;
  standardError: number;
  tasks: number;
  k: number;
  rollouts: number;
  terminations: Record<string, number>;
  meanTurns: number;
  /** Rollouts per run that paid for them (so a cache hit counts without reading the trajectories). */
  runRollouts?: Record<string, number>;
  /** Rollouts that failed on infrastructure and were run again (not scored, not stored); absent when none. */
  infraRetried?: number;
  completedAt: string;
  wallMs: number;
}

/** Sorted-key JSON so that equal keys hash equally whatever order fields were written in. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return '[' + value.map(canonicalJson).join(',') + ']';
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return '{' + entries.map(([k, v]) => JSON.stringify(k) + ':' + canonicalJson(v)).join(',') + '}';
  }
  return JSON.stringify(value);
}

/** What a signed summary says about the trajectory file it was computed from. */
interface TrajectoriesSeal {
  bytes: number;
  sha256: string;
}

const sealCache = new Map<string, { stamp: string; seal: TrajectoriesSeal }>();
const NEWLINE = Buffer.from('\n');

function stampOf(st: BigIntStats): string {
  return `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

export function hashKey(key: EvalKey): string {
  return sha256(canonicalJson(key)).slice(0, 24);
}

/**
 * Evaluation results on disk, one folder per key: `key.json`, `trajectories.jsonl` (appended as each
 * rollout finishes, so a killed evaluation keeps what it paid for), `tasks.json` and finally
 * `summary.json`, whose presence marks the evaluation complete.
 */
export class ResultStore {
  /** The SHA-256 of each trajectory file this store scanned, carried on as it appends (so completing seals without a second read). */
  private readonly streamed = new Map<string, { hash: Hash; bytes: number }>();

  constructor(readonly root: string) {}

  dirFor(keyHash: string): string {
    return join(this.root, 'results', keyHash.slice(0, 2), keyHash);
  }

  trajectoriesFile(keyHash: string): string {
    return join(this.dirFor(keyHash), 'trajectories.jsonl');
  }

  /**
   * The complete evaluation's summary, or undefined. Only a summary whose digest checks out is
   * returned: one edited by hand, torn, or written before digests existed is treated as absent, and
   * evaluate() recomputes it from the stored rollouts (no rollout is paid for again).
   */
  summary(keyHash: string): EvalSummary | undefined {
    return this.verified(keyHash)?.summary;
  }

  taskResults(keyHash: string): TaskResult[] | undefined {
    return this.verified(keyHash)?.tasks;
  }

  private verified(keyHash: string): { summary: EvalSummary; tasks: TaskResult[] } | undefined {
    const dir = this.dirFor(keyHash);
    const summaryFile = join(dir, 'summary.json');
    if (!existsSync(summaryFile)) return undefined;
    let stored: EvalSummary & { digest?: string; trajectories?: TrajectoriesSeal };
    let tasks: TaskResult[];
    try {
      stored = JSON.parse(readFileSync(summaryFile, 'utf8')) as typeof stored;
      tasks = JSON.parse(readFileSync(join(dir, 'tasks.json'), 'utf8')) as TaskResult[];
    } catch (e) {
      if (isStorageFault(e)) throw storageError(e, summaryFile, 'read');
      return undefined; // torn or empty: recomputed
    }
    const { digest, trajectories: seal, ...summary } = stored;
    // An edited summary or tasks.json (or one from before seals existed) is recomputed from the rollouts.
    if (!digest || !seal || digest !== this.digest(summary, tasks, seal)) return undefined;
    // The summary is genuine, so the rollouts it was computed from must be exactly those on disk: an
    // edit there (even one byte, size unchanged) is not recomputed into a new "result" but refused.
    const file = this.trajectoriesFile(keyHash);
    const now = this.seal(file);
    if (now.bytes !== seal.bytes || now.sha256 !== seal.sha256)
      throw new StorageError(
        file,
        'ESEAL',
        `storage error: ${file} does not match its signed summary (${seal.bytes} bytes, sha256 ${seal.sha256.slice(0, 16)}… when the evaluation completed; now ${now.bytes} bytes, sha256 ${now.sha256.slice(0, 16)}…): the stored rollouts were edited or corrupted. Move ${dir} aside to evaluate again.`,
      );
    return { summary, tasks };
  }

  /** Keyed with the project secret, so an edit cannot simply recompute it. */
  private digest(summary: EvalSummary, tasks: TaskResult[], trajectories: TrajectoriesSeal): string {
    return createHmac('sha256', projectSecret(this.root)).update(canonicalJson({ summary, tasks, trajectories })).digest('hex');
  }

  /** The seal from what this store scanned and appended, if the file on disk has exactly that many bytes (else undefined: hashed afresh). */
  private sealStreamed(keyHash: string): TrajectoriesSeal | undefined {
    const s = this.streamed.get(keyHash);
    this.streamed.delete(keyHash);
    const file = this.trajectoriesFile(keyHash);
    if (!s || !existsSync(file)) return undefined;
    const st = statSync(file, { bigint: true });
    if (Number(st.size) !== s.bytes) return undefined;
    const seal = { bytes: s.bytes, sha256: s.hash.digest('hex') };
    sealCache.set(file, { stamp: stampOf(st), seal });
    return seal;
  }

  /**
   * Size and SHA-256 of a trajectory file, hashed while streamed in 4 MiB chunks (files pass 512 MB).
   * Remembered per file while its size, mtime and ctime stay the same, so the several reads of one
   * cache hit hash it once; ctime cannot be set back by an editor, so an edit is always re-hashed.
   */
  private seal(file: string): TrajectoriesSeal {
    let st;
    try {
      st = statSync(file, { bigint: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { bytes: -1, sha256: '' };
      throw storageError(e as NodeJS.ErrnoException, file, 'read');
    }
    const stamp = stampOf(st);
    const known = sealCache.get(file);
    if (known?.stamp === stamp) return known.seal;
    const hash = createHash('sha256');
    let bytes = 0;
    const fd = guardStorage(file, 'read', () => openSync(file, 'r'));
    try {
      const buf = Buffer.alloc(4 << 20);
      for (;;) {
        const n = guardStorage(file, 'read', () => readSync(fd, buf, 0, buf.length, bytes));
        if (n === 0) break;
        hash.update(buf.subarray(0, n));
        bytes += n;
      }
    } finally {
      closeSync(fd);
    }
    const seal = { bytes, sha256: hash.digest('hex') };
    sealCache.set(file, { stamp, seal });
    return seal;
  }

  begin(key: EvalKey): string {
    const keyHash = hashKey(key);
    const dir = this.dirFor(keyHash);
    guardStorage(dir, 'create', () => mkdirSync(dir, { recursive: true }));
    const keyFile = join(dir, 'key.json');
    if (!existsSync(keyFile)) guardStorage(keyFile, 'write', () => writeJsonAtomic(keyFile, key));
    return keyHash;
  }

  /**
   * The rollouts already paid for under this key, in (task, sample) order whatever order they
   * finished in, so everything computed from them (RSFT examples above all) is reproducible. A
   * line torn by a crash mid-write is cut off, so the file stays appendable.
   */
  loadTrajectories(keyHash: string): Trajectory[] {
    const out: Trajectory[] = [];
    this.scanTrajectories(keyHash, (t) => void out.push(t));
    return out.sort((a, b) => (a.taskId < b.taskId ? -1 : a.taskId > b.taskId ? 1 : a.sampleIndex - b.sampleIndex));
  }

  /**
   * Calls `fn` with each stored rollout (infrastructure failures left out), reading the file in
   * chunks: never as one string, which past 512 MB Node cannot even make. A line torn by a crash
   * mid-write is cut off, so the file stays appendable.
   */
  scanTrajectories(keyHash: string, fn: (t: Trajectory) => void): void {
    const file = this.trajectoriesFile(keyHash);
    if (!existsSync(file)) {
      this.streamed.set(keyHash, { hash: createHash('sha256'), bytes: 0 });
      return;
    }
    const fd = guardStorage(file, 'read', () => openSync(file, 'r'));
    let tornAt: number | undefined;
    const hash = createHash('sha256');
    let end = 0;
    try {
      const buf = Buffer.alloc(4 << 20);
      let carry: Buffer[] = [];
      let pos = 0;
      let lineStart = 0;
      const take = (line: Buffer): boolean => {
        const text = line.toString('utf8');
        if (text.trim() === '') return true;
        let parsed: Trajectory;
        try {
          parsed = TrajectorySchema.parse(JSON.parse(text));
        } catch {
          return false;
        }
        // An infrastructure failure is not a result (older stores kept some): never served or counted.
        if (parsed.termination !== 'infra_error') fn(parsed);
        return true;
      };
      outer: for (;;) {
        const n = guardStorage(file, 'read', () => readSync(fd, buf, 0, buf.length, pos));
        if (n === 0) break;
        const view = buf.subarray(0, n);
        let from = 0;
        for (let nl = view.indexOf(10, from); nl !== -1; nl = view.indexOf(10, from)) {
          const piece = view.subarray(from, nl);
          const line = carry.length ? Buffer.concat([...carry, piece]) : piece;
          carry = [];
          if (!take(line)) {
            tornAt = lineStart;
            break outer;
          }
          hash.update(line).update(NEWLINE);
          from = nl + 1;
          lineStart = pos + from;
        }
        if (from < n) carry.push(Buffer.from(view.subarray(from)));
        pos += n;
      }
      if (tornAt === undefined && carry.length) {
        const last = Buffer.concat(carry);
        if (take(last)) hash.update(last);
        else tornAt = lineStart;
      }
      end = tornAt ?? pos;
    } finally {
      closeSync(fd);
    }
    if (tornAt !== undefined) guardStorage(file, 'repair', () => truncateSync(file, tornAt));
    this.streamed.set(keyHash, { hash, bytes: end });
  }

  /** Rollouts under a key that a given run paid for (each trajectory records its run): from the summary when complete. */
  countRunRollouts(keyHash: string, runId: string): number {
    const counted = this.summary(keyHash)?.runRollouts;
    if (counted) return counted[runId] ?? 0;
    let n = 0;
    this.scanTrajectories(keyHash, (t) => void (t.runId === runId && n++));
    return n;
  }

  /**
   * Takes the key's lock so that two engines sharing a store (parallel seeds, say, or two containers
   * on one shared volume) never run the same evaluation at once: the second waits, then finds it
   * complete (a cache hit) or resumes it. A holder whose heartbeat stopped is taken over (fileLock.ts:
   * judged by time, not pid). Returns the release function.
   */
  async lock(keyHash: string, signal?: AbortSignal): Promise<() => void> {
    guardStorage(this.dirFor(keyHash), 'create', () => mkdirSync(this.dirFor(keyHash), { recursive: true }));
    const held = await waitForLock(join(this.dirFor(keyHash), 'writer.lock'), `evaluation ${keyHash}`, { signal });
    return () => held.release();
  }

  appendTrajectory(keyHash: string, t: Trajectory): void {
    guardStorage(this.trajectoriesFile(keyHash), 'append to', () => appendJsonLine(this.trajectoriesFile(keyHash), t));
    const line = Buffer.from(JSON.stringify(t) + '\n'); // what appendJsonLine wrote
    const s = this.streamed.get(keyHash);
    if (s) {
      s.hash.update(line);
      s.bytes += line.length;
    }
  }

  complete(keyHash: string, tasks: TaskResult[], summary: EvalSummary): void {
    const dir = this.dirFor(keyHash);
    guardStorage(this.trajectoriesFile(keyHash), 'write', () => {
      const fd = openSync(this.trajectoriesFile(keyHash), 'a');
      fsyncSync(fd);
      closeSync(fd);
    });
    guardStorage(join(dir, 'tasks.json'), 'write', () => writeJsonAtomic(join(dir, 'tasks.json'), tasks));
    const trajectories = this.sealStreamed(keyHash) ?? this.seal(this.trajectoriesFile(keyHash));
    const digest = this.digest(summary, tasks, trajectories);
    guardStorage(join(dir, 'summary.json'), 'write', () => writeJsonAtomic(join(dir, 'summary.json'), { ...summary, trajectories, digest }));
  }
}
