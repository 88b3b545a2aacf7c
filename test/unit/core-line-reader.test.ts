// forEachLineSync reads a file in 4 MiB chunks: lines (and multi-byte characters) that straddle a
// chunk boundary come out whole, and the result equals splitting the whole text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { forEachLineSync } from '../../src/core/lineReader.js';
import { Rng } from '../../src/core/rng.js';

test('forEachLineSync: the lines of a 10 MB file with chunk-straddling lines and characters, the unterminated last one too', () => {
  const rng = new Rng(7);
  const lines: string[] = [];
  let size = 0;
  while (size < 10 << 20) {
    const line = 'é€'.repeat(rng.int(3000)) + 'x'.repeat(rng.int(5000)) + (rng.chance(0.1) ? '' : ' 😀');
    lines.push(line);
    size += Buffer.byteLength(line) + 1;
  }
  lines.push('', 'after an empty line', 'unterminated');
  const file = join(mkdtempSync(join(tmpdir(), 'whale-lines-')), 'f.jsonl');
  writeFileSync(file, lines.join('\n'));
  const got: string[] = [];
  forEachLineSync(file, (l) => got.push(l));
  assert.equal(got.length, lines.length);
  assert.deepEqual(got, lines);
});
