// Issue 12 §11: harness.json and the config have size caps (30 MB and 10 MB were accepted).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, MAX_CONFIG_BYTES } from '../../src/core/config.js';
import { InputError } from '../../src/core/errors.js';
import { MAX_MANIFEST_BYTES } from '../../src/core/manifest.js';
import { prepareCandidate } from '../../src/harness/candidate.js';
import { fixture } from '../fixtures/harnesses/helpers.js';

const root = mkdtempSync(join(tmpdir(), 'whale-caps-'));
test.after(() => rmSync(root, { recursive: true, force: true }));

test('a harness.json over the cap is refused before it is parsed, naming the file and the limit', async () => {
  const dir = join(root, 'big');
  cpSync(fixture('good'), dir, { recursive: true });
  // Valid JSON, 30 MB: a description padded out.
  writeFileSync(join(dir, 'harness.json'), JSON.stringify({ name: 'big', runtime: 'node', entry: 'harness.ts', description: 'x'.repeat(30 * 1024 * 1024) }));
  await assert.rejects(
    prepareCandidate(dir, join(root, 'cache')),
    (e: unknown) => e instanceof InputError && e.message.includes(join(dir, 'harness.json')) && e.message.includes(`${MAX_MANIFEST_BYTES} bytes`),
  );
});

test('a config over the cap is refused, naming the file and the limit', () => {
  const file = join(root, 'whale.config.json');
  writeFileSync(file, JSON.stringify({ name: 'x', domain: { id: 'kbqa' }, harness: 'h0', padding: ' '.repeat(10 * 1024 * 1024) }));
  assert.throws(
    () => loadConfig(file),
    (e: unknown) => e instanceof InputError && e.message.includes(file) && e.message.includes(`${MAX_CONFIG_BYTES} bytes`),
  );
});
