import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, writeSync, appendFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { randomBytes } from 'node:crypto';

/** Write-then-rename so a reader never sees half a file, with fsync where a crash must not lose it. */
export function writeFileAtomic(file: string, data: string | Uint8Array, opts: { fsync?: boolean } = {}): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fd = openSync(tmp, 'w');
  try {
    writeSync(fd, typeof data === 'string' ? Buffer.from(data) : data);
    if (opts.fsync !== false) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}

export function writeJsonAtomic(file: string, value: unknown, opts: { fsync?: boolean } = {}): void {
  writeFileAtomic(file, JSON.stringify(value, null, 2) + '\n', opts);
}

/** Appends one JSON line. A single write of a line under PIPE_BUF-ish sizes is what journals rely on. */
export function appendJsonLine(file: string, value: unknown): void {
  mkdirSync(dirname(file), { recursive: true });
  appendFileSync(file, JSON.stringify(value) + '\n');
}
