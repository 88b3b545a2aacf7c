// A seeded fuzz (fixed seed, fixed budget) of what WHALE reads from people and from untrusted code:
// the config, harness.json and the worker protocol. Every mutant must be accepted or refused with an
// InputError naming the file (the protocol: a parse outcome) — never a crash of ours.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/core/config.js';
import { InputError } from '../../src/core/errors.js';
import { Rng } from '../../src/core/rng.js';
import { prepareCandidate } from '../../src/harness/candidate.js';
import { ChildMessage, parseLine } from '../../src/harness/protocol.js';
import { fixture } from '../fixtures/harnesses/helpers.js';

const root = mkdtempSync(join(tmpdir(), 'whale-fuzz-'));
test.after(() => rmSync(root, { recursive: true, force: true }));

const ODD: unknown[] = [
  null,
  -1,
  0,
  1e308,
  -0,
  '',
  'x'.repeat(300),
  [],
  {},
  true,
  '../../etc/passwd',
  '\u0000',
  { __proto__: { polluted: 1 } },
  [[[]]],
  NaN,
  '{"a":',
];

/** A structural mutation of a JSON value: replace, delete or add a field somewhere inside. */
function mutate(v: unknown, rng: Rng, depth = 0): unknown {
  if (depth > 4 || rng.chance(0.25)) return rng.pick(ODD);
  if (Array.isArray(v)) return v.length && rng.chance(0.5) ? v.map((x, i) => (i === rng.int(v.length) ? mutate(x, rng, depth + 1) : x)) : [...v, rng.pick(ODD)];
  if (v && typeof v === 'object') {
    const o = { ...(v as Record<string, unknown>) };
    const keys = Object.keys(o);
    const k = keys.length ? rng.pick(keys) : 'extra';
    if (rng.chance(0.2)) delete o[k];
    else if (rng.chance(0.2)) o[`unknown${rng.int(9)}`] = rng.pick(ODD);
    else o[k] = mutate(o[k], rng, depth + 1);
    return o;
  }
  return rng.pick(ODD);
}

/** A textual mutation: cut, duplicate or flip a character. */
function garble(s: string, rng: Rng): string {
  const i = rng.int(s.length + 1);
  switch (rng.int(3)) {
    case 0:
      return s.slice(0, i);
    case 1:
      return s.slice(0, i) + s.slice(i - 5 < 0 ? 0 : i - 5, i) + s.slice(i);
    default:
      return s.slice(0, i) + String.fromCharCode(rng.int(128)) + s.slice(i + 1);
  }
}

const VALID_CONFIG = {
  name: 'fuzz',
  domain: { id: 'kbqa', options: { sizes: { val: 4 } } },
  harness: 'h0',
  backend: { kind: 'embedded' },
  evaluation: { k: 2, concurrency: 2 },
  rsft: { batchPrompts: 4, groupSize: 2 },
  search: { candidatesPerRound: 1 },
  schedule: { epochs: 0.5, iterations: 2, cycles: 1 },
  sandbox: { wallMs: 1000 },
};

test('config: 400 seeded mutants are accepted or refused with an InputError naming the file', () => {
  const rng = new Rng(20261201);
  const file = join(root, 'whale.config.json');
  let refused = 0;
  for (let i = 0; i < 400; i++) {
    const text = rng.chance(0.3) ? garble(JSON.stringify(VALID_CONFIG, null, 2), rng) : JSON.stringify(mutate(VALID_CONFIG, rng));
    writeFileSync(file, text);
    try {
      loadConfig(file);
    } catch (e) {
      assert.ok(e instanceof InputError, `mutant ${i} threw ${String(e)}: ${text.slice(0, 200)}`);
      assert.ok(e.message.includes(file), `mutant ${i}: the message does not name the file: ${e.message}`);
      refused++;
    }
  }
  assert.ok(refused > 100, `only ${refused} of 400 mutants were refused: the fuzz is not reaching the checks`);
});

test('harness.json: 150 seeded mutants are prepared or refused with an InputError', async () => {
  const rng = new Rng(7);
  const base = {
    name: 'fuzz',
    runtime: 'node',
    entry: 'harness.ts',
    knobs: { topk: { type: 'int', min: 1, max: 5, default: 2 }, style: { type: 'enum', values: ['a', 'b'], default: 'a' } },
    prompts: { system: 'hi' },
  };
  const dir = join(root, 'cand');
  cpSync(fixture('good'), dir, { recursive: true });
  let refused = 0;
  for (let i = 0; i < 150; i++) {
    const text = rng.chance(0.3) ? garble(JSON.stringify(base), rng) : JSON.stringify(mutate(base, rng));
    writeFileSync(join(dir, 'harness.json'), text);
    try {
      await prepareCandidate(dir, join(root, 'cache'));
    } catch (e) {
      assert.ok(e instanceof InputError, `mutant ${i} threw ${String(e)}: ${text.slice(0, 200)}`);
      refused++;
    }
  }
  assert.ok(refused > 30, `only ${refused} of 150 refused`);
});

test('protocol: 3000 seeded mutant lines from a child never throw, and only well-formed ones parse', () => {
  const rng = new Rng(99);
  const valid = [
    { type: 'ready', protocol: 1, runtime: 'node' },
    { type: 'log', message: 'm', data: { a: 1 } },
    { type: 'result', answer: 'red' },
    { type: 'error', message: 'boom' },
  ];
  let parsed = 0;
  for (let i = 0; i < 3000; i++) {
    const msg = rng.pick(valid);
    const line = rng.chance(0.3) ? garble(JSON.stringify(msg), rng) : JSON.stringify(mutate(msg, rng));
    const r = parseLine(ChildMessage, line);
    if (r.ok) {
      parsed++;
      assert.ok(['ready', 'log', 'result', 'error'].includes(r.message.type));
      if (r.message.type === 'result') assert.ok(r.message.answer === null || typeof r.message.answer === 'string');
    } else assert.equal(typeof r.error, 'string');
  }
  assert.ok(parsed < 3000);
});
