// Preparing candidates: manifest errors name file/line/field, bundle errors name file/line, the
// bundle is cached outside the folder, and a candidate cannot reach outside its folder at build time.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { InputError } from '../../src/core/errors.js';
import { gitTreeHash } from '../../src/core/treeHash.js';
import { isInside } from '../../src/harness/bundle.js';
import { fixture, setup } from '../fixtures/harnesses/helpers.js';

const { rt } = setup();
after(() => rt.close());

async function inputError(p: Promise<unknown>): Promise<InputError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof InputError, `expected an InputError, got ${String(e)}`);
    return e;
  }
  assert.fail('expected an InputError');
}

describe('preparing a candidate', () => {
  it('rejects an invalid harness.json with file, line and field', async () => {
    const e = await inputError(rt.prepare(fixture('bad-manifest')));
    assert.equal(e.location.file, join(fixture('bad-manifest'), 'harness.json'));
    assert.equal(e.location.field, 'settings.topk');
    assert.equal(e.location.line, 6);
    assert.match(e.message, /harness\.json:6:\d+: settings\.topk: must be an integer in \[1, 5\]/);
  });

  it('rejects a folder without harness.json', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'whale-cand-'));
    const e = await inputError(rt.prepare(dir));
    assert.match(e.message, /harness\.json: cannot read file \(ENOENT\)/);
  });

  it('reports a syntax error with the file and line esbuild gives', async () => {
    // Written here rather than kept as a fixture, so the linters never see a file that cannot parse.
    const dir = mkdtempSync(join(tmpdir(), 'whale-cand-'));
    writeFileSync(join(dir, 'harness.json'), '{ "name": "x", "entry": "harness.js" }');
    writeFileSync(
      join(dir, 'harness.js'),
      "import { defineHarness } from 'whale-harness';\n\nexport default defineHarness({\n  async run(task) {\n    return { answer: task.question ) };\n  },\n});\n",
    );
    const e = await inputError(rt.prepare(dir));
    assert.equal(e.location.file, join(dir, 'harness.js'));
    assert.equal(e.location.line, 5);
    assert.match(e.message, /cannot bundle: Expected "}" but found "\)"/);
  });

  it('refuses to bundle files from outside the candidate folder', async () => {
    const e = await inputError(rt.prepare(fixture('import-outside')));
    assert.match(e.message, /outside the candidate folder/);
  });

  it('refuses imports of packages other than the SDK and Node built-ins', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'whale-cand-'));
    writeFileSync(join(dir, 'harness.json'), '{ "name": "x", "entry": "h.ts" }');
    writeFileSync(join(dir, 'h.ts'), "import z from 'zod'; export default { run: async () => ({ answer: String(z) }) };");
    const e = await inputError(rt.prepare(dir));
    assert.match(e.message, /cannot import 'zod'/);
  });

  it('refuses symbolic links inside the candidate', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'whale-cand-'));
    cpSync(fixture('good'), dir, { recursive: true });
    symlinkSync('/etc/hostname', join(dir, 'answers.txt'));
    const e = await inputError(rt.prepare(dir));
    assert.match(e.message, /symbolic links/);
  });

  it('names a missing entry file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'whale-cand-'));
    writeFileSync(join(dir, 'harness.json'), '{ "name": "x", "entry": "nope.ts" }');
    const e = await inputError(rt.prepare(dir));
    assert.equal(e.location.field, 'entry');
  });

  it('bundles once per tree hash, outside the folder, leaving the folder (and its identity) untouched', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'whale-cand-'));
    cpSync(fixture('good'), dir, { recursive: true });
    const before = gitTreeHash(dir);
    const a = await rt.prepare(dir);
    assert.equal(a.treeHash, before);
    assert.ok(a.bundleFile && !isInside(dir, a.bundleFile));
    const mtime = statSync(a.bundleFile).mtimeMs;
    const b = await rt.prepare(dir);
    assert.equal(b.bundleFile, a.bundleFile);
    assert.equal(statSync(a.bundleFile).mtimeMs, mtime);
    // One self-contained file: the SDK is inlined, nothing is imported but Node built-ins.
    const code = readFileSync(a.bundleFile, 'utf8');
    assert.ok(!/from ['"]whale-harness['"]/.test(code));
    assert.match(code, /defineHarness/);
    await rt.rollout(
      a,
      { id: 't', split: 'val', public: { id: 't', question: 'what is the colour of alba ?' }, private: { answer: 'red', facts: [] } },
      { sampleIndex: 0, seed: 0 },
    );
    assert.equal(gitTreeHash(dir), before);
    // A changed folder is a different candidate with a different bundle.
    writeFileSync(join(dir, 'notes.md'), 'changed');
    const c = await rt.prepare(dir);
    assert.notEqual(c.treeHash, a.treeHash);
    assert.notEqual(c.bundleFile, a.bundleFile);
  });

  it('resolves knob values from settings, else defaults', async () => {
    const p = await rt.prepare(fixture('show-context'));
    assert.deepEqual(p.knobs, { topk: 3, mode: 'a' });
    assert.equal(p.runtime, 'node');
  });
});
