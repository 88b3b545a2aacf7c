/** `whale domain check` on the paper's built-in domains: their gold answers pass their own verifier and rules. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { whale } from './serve-helpers.js';

for (const id of ['searchqa', 'math', 'chess']) {
  test(`whale domain check ${id}: every gold answer passes, a wrong one fails, exit 0`, () => {
    const dir = mkdtempSync(path.join(tmpdir(), `whale-check-${id}-`));
    const r = whale(['domain', 'check', id, '--limit', '20'], dir);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /gold answers: (\d+)\/\1 pass \(100\.0%\)/);
    assert.doesNotMatch(r.stdout, /gold answers: 0\//);
    assert.match(r.stdout, /a wrong answer .*: 0\/\d+ pass/);
    assert.doesNotMatch(r.stdout, /no gold answer/);
  });
}
