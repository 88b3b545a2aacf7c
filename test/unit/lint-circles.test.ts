// scripts/check-circles.mjs (a step of `npm run lint`): an import circle of any kind fails, src/ has none.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const check = (...dirs: string[]) => spawnSync(process.execPath, ['scripts/check-circles.mjs', ...dirs], { cwd: root, encoding: 'utf8' });

test('a circle through a type import and a dynamic import fails, naming its files in order', () => {
  const dir = mkdtempSync(join(tmpdir(), 'whale-circles-'));
  writeFileSync(join(dir, 'a.ts'), "import type { B } from './b.js';\nexport type A = B;\n");
  writeFileSync(join(dir, 'b.ts'), "export type B = number;\nexport const load = () => import('./c.js');\n");
  writeFileSync(join(dir, 'c.ts'), "export { type A } from './a.js';\n");
  writeFileSync(join(dir, 'd.ts'), "import './a.js';\n"); // imports the circle, is not part of it
  const r = check(dir);
  assert.equal(r.status, 1, r.stdout + r.stderr);
  assert.match(r.stderr, /import circle \(3 files\): .*a\.ts → .*b\.ts → .*c\.ts → .*a\.ts\n/);
  assert.doesNotMatch(r.stderr, /d\.ts/);
  writeFileSync(join(dir, 'c.ts'), 'export const c = 1;\n');
  const fixed = check(dir);
  assert.equal(fixed.status, 0, fixed.stderr);
  assert.match(fixed.stdout, /no import circle among 4 files/);
});

test('src/ has no import circle', () => {
  const r = check();
  assert.equal(r.status, 0, r.stderr);
});
