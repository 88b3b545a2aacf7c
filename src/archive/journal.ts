import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, truncateSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

/** One journal entry: a type, a time, and the event's fields. */
export interface JournalEntry {
  type: string;
  at: string;
  [k: string]: unknown;
}

/**
 * The run journal: append-only JSON lines, each fsynced before `append` returns, so an event that
 * was reported as written survives a crash. A line torn by a crash mid-write is cut off on open.
 * The journal is the run's source of truth: state, ledger and curves are folds over it.
 */
export class Journal {
  private entries: JournalEntry[] = [];

  constructor(readonly file: string) {
    mkdirSync(dirname(file), { recursive: true });
    if (existsSync(file)) this.entries = Journal.read(file, { repair: true });
  }

  static read(file: string, opts: { repair?: boolean } = {}): JournalEntry[] {
    if (!existsSync(file)) return [];
    const text = readFileSync(file, 'utf8');
    const out: JournalEntry[] = [];
    let offset = 0;
    for (const line of text.split('\n')) {
      const end = offset + Buffer.byteLength(line) + 1;
      if (line.trim() !== '') {
        try {
          out.push(JSON.parse(line) as JournalEntry);
        } catch {
          if (opts.repair) truncateSync(file, offset);
          break;
        }
      }
      offset = end;
    }
    return out;
  }

  append<T extends Record<string, unknown>>(type: string, fields: T): JournalEntry & T {
    const entry = { type, at: new Date().toISOString(), ...fields } as JournalEntry & T;
    const fd = openSync(this.file, 'a');
    try {
      writeSync(fd, JSON.stringify(entry) + '\n');
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    this.entries.push(entry);
    return entry;
  }

  all(): readonly JournalEntry[] {
    return this.entries;
  }

  ofType<T = JournalEntry>(type: string): T[] {
    return this.entries.filter((e) => e.type === type) as unknown as T[];
  }

  last<T = JournalEntry>(type: string): T | undefined {
    for (let i = this.entries.length - 1; i >= 0; i--) if (this.entries[i].type === type) return this.entries[i] as unknown as T;
    return undefined;
  }
}
