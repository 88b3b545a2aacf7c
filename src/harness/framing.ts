/**
 * The worker protocol's framing (JSON lines) and bounds, without its schemas (protocol.ts): what a
 * rollout's worker thread needs. Building the zod schemas costs every thread about 5 ms of CPU, and
 * a thread of a warm process gets its `run` message already validated by its host thread.
 */
export const PROTOCOL_VERSION = 1;

/** Bounds on what one child message may carry, so a hostile child cannot make us hold huge strings. */
export const MAX_LOG_CHARS = 8_000;
export const MAX_ANSWER_CHARS = 100_000;

/** One message as a protocol line (protocol.ts's encodeMessage types it; this module knows no schemas). */
export function encodeLine(m: { type: string }): string {
  return JSON.stringify(m) + '\n';
}

/** The longest protocol line a reader takes by default (a longer one is a protocol error). */
export const MAX_LINE_CHARS = 4 * 1024 * 1024;
/** The largest request body the gateway reads (bytes), on either lane. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;
/**
 * The longest `call` line the runtime reads. A body is JSON text (the prelude's own `JSON.stringify`),
 * whose only characters JSON escapes again are `"` and `\`, so a body within MAX_BODY_BYTES makes a
 * line under twice that; the host refuses a longer one itself, as the gateway refuses a body.
 */
export const MAX_CALL_LINE_CHARS = 2 * MAX_BODY_BYTES + 64 * 1024;
/** How every `call` line begins (encodeLine keeps the key order it is given): an unfinished line that does not is output. */
export const CALL_PREFIX = '{"type":"call",';

/**
 * Candidate scripts a context host keeps compiled, least recently run first out. The runtime keeps
 * the same list for each host (the same runs in the same order), so it knows which to send again.
 */
export const MAX_HOST_SCRIPTS = 8;
/**
 * How far a context host's heap may rise, over its life, for the candidates it compiles (and what
 * their first rollouts leave): half the host's own share (sandbox.ts, CONTEXT_HOST_HEAP_MB). Past
 * that the process retires, so no run of candidates can eat into the rollouts' memory limit.
 */
export const MAX_HOST_CODE_GROWTH_BYTES = 8 * 2 ** 20;

/** Marks `id` as just run in an LRU list kept as a Map's insertion order; true if it was not there. What fell out is passed to `evicted`. */
export function touchRecent<V>(recent: Map<string, V>, id: string, value: () => V, evicted?: (v: V) => void): boolean {
  const had = recent.get(id);
  recent.delete(id);
  recent.set(id, had ?? value());
  for (const [old, v] of recent) {
    if (recent.size <= MAX_HOST_SCRIPTS) break;
    recent.delete(old);
    evicted?.(v);
  }
  return had === undefined;
}

/**
 * The runtime's answer to a pipe-lane `call` (protocol.ts). Only the runtime writes it, so the
 * context host reads it without schemas: a line that starts with REPLY_PREFIX is one.
 */
export interface ReplyFrame {
  type: 'reply';
  id: number;
  status: number;
  body: string;
}
export const REPLY_PREFIX = '{"type":"reply",';
export function encodeReply(id: number, status: number, body: string): string {
  return JSON.stringify({ type: 'reply', id, status, body } satisfies ReplyFrame) + '\n';
}

/**
 * Splits a byte stream into lines. Kept separate from the process code so both the parent and
 * the Node bootstrap use the same framing; a line longer than `maxLine` is reported, not buffered.
 */
export class LineSplitter {
  private buf = '';
  constructor(
    private readonly onLine: (line: string) => void,
    private readonly onOverlong: (length: number) => void,
    private readonly maxLine = MAX_LINE_CHARS,
  ) {}
  push(chunk: string): void {
    // Only the new chunk is searched for line ends: a long line arriving in many chunks costs its length, not its length squared.
    let nl = chunk.indexOf('\n');
    if (nl < 0) {
      this.buf += chunk;
    } else {
      let start = 0;
      let line = this.buf + chunk.slice(0, nl);
      this.buf = '';
      for (;;) {
        if (line.length > this.maxLine) this.onOverlong(line.length);
        else {
          if (line.endsWith('\r')) line = line.slice(0, -1);
          if (line.trim() !== '') this.onLine(line);
        }
        start = nl + 1;
        nl = chunk.indexOf('\n', start);
        if (nl < 0) break;
        line = chunk.slice(start, nl);
      }
      this.buf = chunk.slice(start);
    }
    if (this.buf.length > this.maxLine) {
      const n = this.buf.length;
      this.buf = '';
      this.onOverlong(n);
    }
  }
  /** Characters of the unfinished line held so far. */
  get pendingChars(): number {
    return this.buf.length;
  }
  /** The unfinished line's first `n` characters. */
  pendingHead(n: number): string {
    return this.buf.slice(0, n);
  }
  /** Whatever is left without a final newline (a child that dies mid-line). */
  rest(): string {
    return this.buf;
  }
}
