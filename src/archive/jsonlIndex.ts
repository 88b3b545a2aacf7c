// Opening one trajectory out of thousands without reading them all: a byte-offset index of a
// JSON-lines file, built once by streaming it (never holding the file in memory), kept per file and
// extended — not rebuilt — when the file has only grown (an evaluation still appending). Each entry
// also carries the few fields a tree needs (id, task, sample, pass, termination), taken from the
// line's head and tail bytes without parsing the whole line, so a view can list failing
// trajectories of a 100 MB file and parse only the one that is opened.
import { createReadStream, openSync, readSync, closeSync, statSync } from 'node:fs';
import { TrajectorySchema, type Trajectory } from '../core/trajectory.js';

export interface LineEntry {
  /** Byte offset of the line's first byte. */
  offset: number;
  /** Bytes in the line, without its newline. */
  length: number;
  id?: string;
  taskId?: string;
  harnessHash?: string;
  policyVersion?: string;
  sampleIndex?: number;
  /** Verdict; undefined when the tail did not show it (e.g. a very long final answer). */
  pass?: boolean;
  termination?: string;
}

export interface JsonlIndex {
  file: string;
  size: number;
  mtimeMs: number;
  /** Complete lines only; a line still being written (no newline yet) is left for the next update. */
  lines: LineEntry[];
  /** Offset just after the last complete line: where an update resumes. */
  indexedBytes: number;
}

const HEAD = 1024;
const TAIL = 4096;

const STRING = '"((?:[^"\\\\]|\\\\.)*)"';
const field = (name: string) => new RegExp(`"${name}":${STRING}`);
const RE = {
  id: /^\{"id":"((?:[^"\\]|\\.)*)"/,
  taskId: field('taskId'),
  harnessHash: field('harnessHash'),
  policyVersion: field('policyVersion'),
  sampleIndex: /"sampleIndex":(\d+)/,
};
const TAIL_RE = { termination: field('termination'), pass: /"verdict":\{"pass":(true|false)/ };

function unquote(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return undefined;
  }
}

function describe(entry: LineEntry, head: string, tail: string): void {
  const id = RE.id.exec(head);
  if (id) entry.id = unquote(id[1]);
  for (const k of ['taskId', 'harnessHash', 'policyVersion'] as const) {
    const m = RE[k].exec(head);
    if (m) entry[k] = unquote(m[1]);
  }
  const s = RE.sampleIndex.exec(head);
  if (s) entry.sampleIndex = Number(s[1]);
  // The verdict and termination are near the end of a trajectory; take the last match.
  const t = [...tail.matchAll(new RegExp(TAIL_RE.termination, 'g'))].pop();
  if (t) entry.termination = unquote(t[1]);
  const p = [...tail.matchAll(new RegExp(TAIL_RE.pass, 'g'))].pop();
  if (p) entry.pass = p[1] === 'true';
}

/** Streams the file from `from` and appends its complete lines to `lines`; returns the new indexedBytes. */
async function scan(file: string, from: number, lines: LineEntry[]): Promise<number> {
  let lineStart = from;
  let head: Buffer[] = [];
  let headLen = 0;
  let tail = Buffer.alloc(0);
  let pos = from;
  const stream = createReadStream(file, { start: from, highWaterMark: 1 << 20 });
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    let i = 0;
    while (i < chunk.length) {
      const nl = chunk.indexOf(10, i);
      const end = nl === -1 ? chunk.length : nl;
      const piece = chunk.subarray(i, end);
      if (headLen < HEAD) {
        const take = piece.subarray(0, HEAD - headLen);
        head.push(Buffer.from(take));
        headLen += take.length;
      }
      tail = piece.length >= TAIL ? Buffer.from(piece.subarray(piece.length - TAIL)) : Buffer.concat([tail, piece]).subarray(-TAIL);
      if (nl === -1) break;
      const lineEnd = pos + nl; // absolute offset of the newline
      const length = lineEnd - lineStart;
      if (length > 0) {
        const entry: LineEntry = { offset: lineStart, length };
        describe(entry, Buffer.concat(head).toString('utf8'), tail.toString('utf8'));
        lines.push(entry);
      }
      lineStart = lineEnd + 1;
      head = [];
      headLen = 0;
      tail = Buffer.alloc(0);
      i = nl + 1;
    }
    pos += chunk.length;
  }
  return lineStart;
}

const cache = new Map<string, JsonlIndex>();

/**
 * The index of a JSON-lines file: from the cache when its size and mtime are unchanged, extended
 * from where it stopped when the file only grew, rebuilt otherwise (rewritten or truncated).
 */
export async function indexJsonl(file: string): Promise<JsonlIndex> {
  const st = statSync(file);
  const cached = cache.get(file);
  if (cached && cached.size === st.size && cached.mtimeMs === st.mtimeMs) return cached;
  let lines: LineEntry[] = [];
  let from = 0;
  if (cached && st.size > cached.size && sameBytes(file, cached)) {
    lines = [...cached.lines];
    from = cached.indexedBytes;
  }
  const indexedBytes = await scan(file, from, lines);
  const index: JsonlIndex = { file, size: st.size, mtimeMs: st.mtimeMs, lines, indexedBytes };
  cache.set(file, index);
  return index;
}

/** Cheap check that a grown file still starts as indexed: its last indexed line's bytes end in a newline. */
function sameBytes(file: string, idx: JsonlIndex): boolean {
  if (idx.indexedBytes === 0) return true;
  const fd = openSync(file, 'r');
  try {
    const b = Buffer.alloc(1);
    readSync(fd, b, 0, 1, idx.indexedBytes - 1);
    return b[0] === 10;
  } finally {
    closeSync(fd);
  }
}

/** Forgets cached indexes (tests, or a store that was deleted). */
export function clearJsonlIndexCache(): void {
  cache.clear();
}

/** The raw text of one indexed line, read with one positioned read. */
export function readIndexedLine(index: Pick<JsonlIndex, 'file'>, entry: LineEntry): string {
  const fd = openSync(index.file, 'r');
  try {
    const buf = Buffer.alloc(entry.length);
    let got = 0;
    while (got < entry.length) {
      const n = readSync(fd, buf, got, entry.length - got, entry.offset + got);
      if (n === 0) throw new Error(`${index.file}: line at byte ${entry.offset} is shorter than indexed (the file changed)`);
      got += n;
    }
    return buf.toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** One trajectory by line number (0-based among non-empty lines), validated; errors say file and line. */
export function readTrajectoryAt(index: JsonlIndex, i: number): Trajectory {
  const entry = index.lines[i];
  if (!entry) throw new Error(`${index.file}: no trajectory ${i} (the file has ${index.lines.length})`);
  const raw = readIndexedLine(index, entry);
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (e) {
    throw new Error(`${index.file}:${i + 1}: not JSON (${(e as Error).message})`);
  }
  const parsed = TrajectorySchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${index.file}:${i + 1}: not a trajectory: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  return parsed.data;
}

/** The line number of a trajectory id, or -1. */
export function findTrajectory(index: JsonlIndex, id: string): number {
  return index.lines.findIndex((l) => l.id === id);
}

/** Statistics without the cache (for the benchmark's cold case). */
export async function buildJsonlIndexUncached(file: string): Promise<JsonlIndex> {
  const st = statSync(file);
  const lines: LineEntry[] = [];
  const indexedBytes = await scan(file, 0, lines);
  return { file, size: st.size, mtimeMs: st.mtimeMs, lines, indexedBytes };
}
