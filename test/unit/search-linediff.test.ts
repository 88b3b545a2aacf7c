// The proposer's diff tool on files past the old LCS cap (3,000 lines): Myers' edit script from the
// `diff` package keeps a one-line change in a 20,000-line file cheap and exact.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { unifiedDiff } from '../../src/search/llm/lineDiff.js';

test('a one-line change in a 20,000-line file is one hunk at the right line numbers', () => {
  const a = Array.from({ length: 20_000 }, (_, i) => `line ${i + 1}`).join('\n');
  const b = a.replace('\nline 12345\n', '\nline 12345 (changed)\n');
  const started = Date.now();
  const d = unifiedDiff(a, b, 'big.ts');
  assert.ok(Date.now() - started < 2000);
  assert.equal(
    d,
    [
      '--- a/big.ts',
      '+++ b/big.ts',
      '@@ -12342,7 +12342,7 @@',
      ' line 12342',
      ' line 12343',
      ' line 12344',
      '-line 12345',
      '+line 12345 (changed)',
      ' line 12346',
      ' line 12347',
      ' line 12348',
    ].join('\n'),
  );
});

test('two unrelated large files: the tool says so instead of printing a diff nobody reads', () => {
  const a = Array.from({ length: 30_000 }, (_, i) => `a ${i}`).join('\n');
  const b = Array.from({ length: 30_000 }, (_, i) => `b ${i}`).join('\n');
  assert.match(unifiedDiff(a, b, 'x'), /^--- x\n\+\+\+ x\n\(more than 20000 changed lines; read both versions\)$/);
});
