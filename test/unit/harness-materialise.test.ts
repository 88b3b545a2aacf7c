// Issue 12 §2–3: a candidate runs from a clean materialised copy of exactly what its identity
// hashes (never in place), links anywhere in it are refused, and code the tree hash skips
// (node_modules/, .git/, .whale-build/) can neither be read at run time nor bundled.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InputError } from '../../src/core/errors.js';
import { gitTreeHash } from '../../src/core/treeHash.js';
import { fixtureTasks } from '../fixtures/harnesses/fixtureDomain.js';
import { fixture, setup } from '../fixtures/harnesses/helpers.js';

const root = mkdtempSync(join(tmpdir(), 'whale-materialise-'));
let n = 0;

/** A copy of the good fixture with `edit` applied. */
function candidate(edit: (dir: string) => void): string {
  const dir = join(root, `c${n++}`);
  cpSync(fixture('good'), dir, { recursive: true });
  edit(dir);
  return dir;
}

/** A harness whose answer is the text of `file` (relative to its folder), or 'unreadable'. */
function reader(file: string, extra: (dir: string) => void = () => {}): string {
  return candidate((dir) => {
    writeFileSync(
      join(dir, 'harness.ts'),
      `import { readFileSync } from 'node:fs';\nimport { defineHarness } from 'whale-harness';\nexport default defineHarness({ async run() { try { return { answer: readFileSync(${JSON.stringify(file)}, 'utf8').trim() }; } catch { return { answer: 'unreadable' }; } } });\n`,
    );
    extra(dir);
  });
}

describe('materialised candidates', () => {
  const { rt } = setup();
  after(async () => {
    await rt.close();
    rmSync(root, { recursive: true, force: true });
  });

  for (const skipped of ['node_modules', '.git', '.whale-build']) {
    it(`refuses a symbolic link inside ${skipped}/`, async () => {
      const dir = candidate((d) => {
        mkdirSync(join(d, skipped, 'sub'), { recursive: true });
        symlinkSync('/etc', join(d, skipped, 'sub', 'outside'));
      });
      await assert.rejects(
        rt.prepare(dir),
        (e: unknown) => e instanceof InputError && e.message.includes(join(skipped, 'sub', 'outside')) && /symbolic link/.test(e.message),
      );
    });
  }

  it('runs from a copy, not in place: files planted where the hash does not look are not there', async () => {
    const dir = reader('node_modules/answers.txt', (d) => {
      mkdirSync(join(d, 'node_modules'));
      writeFileSync(join(d, 'node_modules', 'answers.txt'), 'planted');
      writeFileSync(join(d, 'own.txt'), 'mine');
    });
    const prepared = await rt.prepare(dir);
    assert.notEqual(prepared.dir, dir, 'the candidate runs from its materialised copy');
    assert.equal(prepared.treeHash, gitTreeHash(dir));
    const t = await rt.rollout(prepared, fixtureTasks('val', 1)[0], { sampleIndex: 0, seed: 0 });
    assert.equal(t.finalAnswer, 'unreadable', `${t.termination}: ${t.terminationDetail}`);
    const own = await rt.rollout(await rt.prepare(reader('own.txt', (d) => writeFileSync(join(d, 'own.txt'), 'mine'))), fixtureTasks('val', 1)[0], {
      sampleIndex: 0,
      seed: 0,
    });
    assert.equal(own.finalAnswer, 'mine', 'its own files are there');
  });

  it('what is bundled is what is hashed: three programs differing only under node_modules/ are refused, not one identity', async () => {
    const outcomes: string[] = [];
    for (const answer of ['a', 'b', 'c']) {
      const dir = candidate((d) => {
        mkdirSync(join(d, 'node_modules', 'lib'), { recursive: true });
        writeFileSync(join(d, 'node_modules', 'lib', 'index.js'), `export const answer = ${JSON.stringify(answer)};\n`);
        writeFileSync(
          join(d, 'harness.ts'),
          `import { answer } from './node_modules/lib/index.js';\nimport { defineHarness } from 'whale-harness';\nexport default defineHarness({ async run() { return { answer }; } });\n`,
        );
      });
      try {
        const p = await rt.prepare(dir);
        outcomes.push(`hash ${p.treeHash}`);
      } catch (e) {
        assert.ok(e instanceof InputError, String(e));
        assert.match(e.message, /node_modules\/lib\/index\.js/);
        outcomes.push('refused');
      }
    }
    assert.deepEqual(outcomes, ['refused', 'refused', 'refused']);
  });
});
