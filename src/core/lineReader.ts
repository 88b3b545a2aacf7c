// Lines of a text file read in chunks: never the whole file as one string, which past 512 MB Node
// cannot even make (a long multi-turn run's trajectory file gets there).
import { closeSync, openSync, readSync } from 'node:fs';

const CHUNK = 4 << 20;

/** Calls `fn` with each line of `file` (without its newline), the last one even when unterminated. */
export function forEachLineSync(file: string, fn: (line: string) => void): void {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(CHUNK);
    let carry: Buffer[] = [];
    let pos = 0;
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, pos);
      if (n === 0) break;
      const view = buf.subarray(0, n);
      let from = 0;
      for (let nl = view.indexOf(10, from); nl !== -1; nl = view.indexOf(10, from)) {
        const piece = view.subarray(from, nl);
        fn((carry.length ? Buffer.concat([...carry, piece]) : piece).toString('utf8'));
        carry = [];
        from = nl + 1;
      }
      if (from < n) carry.push(Buffer.from(view.subarray(from)));
      pos += n;
    }
    if (carry.length) fn(Buffer.concat(carry).toString('utf8'));
  } finally {
    closeSync(fd);
  }
}
