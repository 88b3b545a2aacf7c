// Issue 12 §4: generated tasks depend on a per-project secret the harness never sees, and a public
// task id is not a seed. The attack that worked: regenerate each task's knowledge base from its id
// with the public generator.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectSecret } from '../../src/archive/projectSecret.js';
import { Rng } from '../../src/core/rng.js';
import { hashSeed } from '../../src/core/rng.js';
import { createKbqaDomain, generateKbqaTask, type KbqaPrivate } from '../../src/domains/kbqa.js';
import { createRambleDomain, generateRambleTask } from '../../src/domains/ramble.js';
import type { Split, Task } from '../../src/domains/types.js';

/** What a harness can compute from the public generator: the task of every public seed of a split (the old scheme). */
function publicRegeneration(domainId: string, gen: (rng: Rng, id: string, split: Split) => Task, split: Split, n: number): Task[] {
  return Array.from({ length: n }, (_, i) => gen(new Rng(hashSeed(`whale:${domainId}:${split}:v1:${i}`)), `x-${i}`, split));
}

test('the project secret is created once, mode 0600, and differs between projects', () => {
  const a = mkdtempSync(join(tmpdir(), 'whale-secret-'));
  const b = mkdtempSync(join(tmpdir(), 'whale-secret-'));
  const s = projectSecret(a);
  assert.ok(s.length >= 32);
  assert.equal(projectSecret(a), s, 'kept in the store');
  assert.equal(statSync(join(a, 'secret')).mode & 0o777, 0o600);
  assert.notEqual(projectSecret(b), s);
});

for (const [name, create, gen] of [
  ['kbqa', createKbqaDomain, generateKbqaTask],
  ['ramble', createRambleDomain, generateRambleTask],
] as const) {
  test(`${name}: a harness given the public task cannot regenerate it, and two projects get different tasks`, () => {
    const sizes = { weight: 8, harness: 8, val: 64, test: 8 };
    const one = create({ sizes }, { secret: 'a'.repeat(64) }).tasks('val');
    const two = create({ sizes }, { secret: 'b'.repeat(64) }).tasks('val');
    assert.notDeepEqual(
      one.map((t) => t.public.question),
      two.map((t) => t.public.question),
    );
    // The id says nothing about a seed or a position.
    for (const t of one) assert.doesNotMatch(t.id, /-\d{4}$/, t.id);
    // (Short questions may coincide by chance; the private half — knowledge base, answer — must not.)
    const regenerated = new Set(publicRegeneration(name, gen, 'val', 256).map((t) => t.public.question + '\u0000' + JSON.stringify(t.private)));
    const hits = one.filter((t) => regenerated.has(t.public.question + '\u0000' + JSON.stringify(t.private)));
    assert.equal(hits.length, 0, `${hits.length} of ${one.length} tasks regenerated from public seeds`);
    if (name === 'kbqa') {
      // The knowledge base behind a question is not derivable either.
      const kb = (t: Task) => JSON.stringify((t.private as unknown as KbqaPrivate).facts);
      assert.notDeepEqual(one.map(kb), two.map(kb));
    }
  });
}
