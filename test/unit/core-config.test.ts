import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { loadConfig } from '../../src/core/config.js';
import { InputError } from '../../src/core/errors.js';
import { parseJsonLines } from '../../src/core/jsonFile.js';
import { configJsonSchema } from '../../scripts/gen-schema.js';

function tmpFile(name: string, text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'whale-cfg-'));
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

test('a valid config loads with defaults filled in', () => {
  const file = tmpFile('whale.config.json', JSON.stringify({ name: 'demo', domain: { id: 'kbqa' }, harness: 'harnesses/h0' }));
  const cfg = loadConfig(file);
  assert.equal(cfg.backend.kind, 'embedded');
  assert.equal(cfg.evaluation.k, 8);
  assert.equal(cfg.sandbox.maxTurns, 16);
});

test('a wrong field is reported with file, line and field', () => {
  const text = ['{', '  "name": "demo",', '  "domain": { "id": "kbqa" },', '  "harness": "h0",', '  "evaluation": {', '    "k": -3', '  }', '}'].join('\n');
  const file = tmpFile('whale.config.json', text);
  assert.throws(
    () => loadConfig(file),
    (e: unknown) => {
      assert.ok(e instanceof InputError);
      assert.equal(e.location.file, file);
      assert.equal(e.location.line, 6);
      assert.equal(e.location.field, 'evaluation.k');
      assert.match(e.message, /whale\.config\.json:6:5: evaluation\.k: /);
      return true;
    },
  );
});

test('an unknown key and a missing required field are both reported', () => {
  const text = '{\n  "name": "demo",\n  "harnes": "h0",\n  "domain": { "id": "kbqa" }\n}\n';
  const file = tmpFile('whale.config.json', text);
  assert.throws(
    () => loadConfig(file),
    (e: unknown) => {
      assert.ok(e instanceof InputError);
      const fields = e.all.map((x) => x.location.field);
      assert.ok(fields.includes('harness'), `fields: ${fields}`);
      assert.ok(
        e.all.some((x) => /harnes/.test(x.message)),
        e.message,
      );
      return true;
    },
  );
});

test('invalid JSON syntax points at the line', () => {
  const file = tmpFile('whale.config.json', '{\n  "name": "demo",\n  "domain": { "id": "kbqa" }\n  "harness": "h0"\n}\n');
  assert.throws(
    () => loadConfig(file),
    (e: unknown) => e instanceof InputError && e.location.line === 4 && /invalid JSON/.test(e.message),
  );
});

test('a missing config file is a clear error naming it', () => {
  assert.throws(() => loadConfig('/nonexistent/whale.config.json'), /\/nonexistent\/whale\.config\.json: cannot read file \(ENOENT\)/);
});

test('a broken line in a JSON-lines file names the line', () => {
  const schema = z.object({ id: z.string() });
  assert.deepEqual(
    parseJsonLines('{"id":"a"}\n\n{"id":"b"}\n', 't.jsonl', schema).map((r) => r.id),
    ['a', 'b'],
  );
  assert.throws(() => parseJsonLines('{"id":"a"}\n{"id": oops}\n', 't.jsonl', schema), /t\.jsonl:2: invalid JSON/);
  assert.throws(() => parseJsonLines('{"id":"a"}\n{"id": 3}\n', 't.jsonl', schema), /t\.jsonl:2: id: /);
});

test('the shipped JSON schema is the one generated from the zod schema', async () => {
  const { readFileSync } = await import('node:fs');
  const shipped = JSON.parse(readFileSync(new URL('../../resources/whale.config.schema.json', import.meta.url), 'utf8'));
  assert.deepEqual(shipped, JSON.parse(JSON.stringify(configJsonSchema())), 'run `npm run schema` after changing src/core/config.ts');
});
