// vscode-free: unit-tested with node's test runner.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { JournalEntry } from '../../archive/journal.js';

/**
 * Reads a journal incrementally by byte offset: each `read()` parses only the bytes appended since
 * the last one, so a view can follow a long run without re-reading it. An unfinished last line (the
 * engine is mid-write) waits for the next read; a file that shrank (the engine cut a torn line on
 * resume) is read again from the start.
 */
export class JournalTail {
  private offset = 0;
  private entries: JournalEntry[] = [];

  constructor(readonly file: string) {}

  /** Every entry so far, and whether any arrived since the last call. */
  read(): { entries: readonly JournalEntry[]; changed: boolean } {
    let fd: number;
    try {
      fd = openSync(this.file, 'r');
    } catch {
      const changed = this.entries.length > 0;
      this.reset();
      return { entries: this.entries, changed };
    }
    try {
      const size = fstatSync(fd).size;
      let changed = false;
      if (size < this.offset) {
        this.reset();
        changed = true;
      }
      if (size === this.offset) return { entries: this.entries, changed };
      const buf = Buffer.alloc(size - this.offset);
      const n = readSync(fd, buf, 0, buf.length, this.offset);
      const chunk = buf.subarray(0, n);
      const lastNewline = chunk.lastIndexOf(0x0a);
      if (lastNewline < 0) return { entries: this.entries, changed };
      let consumed = 0;
      for (const line of chunk.subarray(0, lastNewline).toString('utf8').split('\n')) {
        if (line.trim() !== '') {
          try {
            this.entries.push(JSON.parse(line) as JournalEntry);
            changed = true;
          } catch {
            // A line torn by a crash: a resuming engine cuts it off and appends after it, so the
            // next read starts here again.
            break;
          }
        }
        consumed += Buffer.byteLength(line) + 1;
      }
      this.offset += consumed;
      return { entries: this.entries, changed };
    } finally {
      closeSync(fd);
    }
  }

  /** Bytes consumed so far (for tests and diagnostics). */
  get bytesRead(): number {
    return this.offset;
  }

  private reset(): void {
    this.offset = 0;
    this.entries = [];
  }
}
