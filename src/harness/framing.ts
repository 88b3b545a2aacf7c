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

/**
 * Splits a byte stream into lines. Kept separate from the process code so both the parent and
 * the Node bootstrap use the same framing; a line longer than `maxLine` is reported, not buffered.
 */
export class LineSplitter {
  private buf = '';
  constructor(
    private readonly onLine: (line: string) => void,
    private readonly onOverlong: (length: number) => void,
    private readonly maxLine = 4 * 1024 * 1024,
  ) {}
  push(chunk: string): void {
    this.buf += chunk;
    let nl: number;
    while ((nl = this.buf.indexOf('\n')) >= 0) {
      const line = this.buf.slice(0, nl).replace(/\r$/, '');
      this.buf = this.buf.slice(nl + 1);
      if (line.trim() !== '') this.onLine(line);
    }
    if (this.buf.length > this.maxLine) {
      const n = this.buf.length;
      this.buf = '';
      this.onOverlong(n);
    }
  }
  /** Whatever is left without a final newline (a child that dies mid-line). */
  rest(): string {
    return this.buf;
  }
}
