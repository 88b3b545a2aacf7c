/** The domain SDK (defineDomain → materialise) and the data-only verifier library. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { VerifierSpecSchema } from '../../src/core/config.js';
import { InputError, WhaleError } from '../../src/core/errors.js';
import { materialise, materialiseSync } from '../../src/domains/definition.js';
import { getDomain } from '../../src/domains/index.js';
import { kbqaDefinition } from '../../src/domains/kbqa.js';
import { defineDomain, InfraError as SdkInfraError } from '../../src/domains/sdk.js';
import type { RolloutRecord } from '../../src/domains/types.js';
import { goldCompare, parseNumber } from '../../src/domains/verifiers/library.js';
import { REPO } from './domain-helpers.js';

// materialise checks that h0 is a harness folder: any real one does for these tests.
const H0 = path.join(REPO, 'resources', 'harnesses', 'qa-h0');
const base = { id: 'x', title: 't', description: 'd', h0: H0, searchSpace: 's', verify: () => true, tasks: () => [] };
const rollout = (a: string | null): RolloutRecord => ({ finalAnswer: a, modelCalls: [], events: [] });

test('defineDomain rejects a malformed definition naming the field', () => {
  assert.throws(() => defineDomain({ ...base, id: 'Has Space' }), /defineDomain: id must be lower-case/);
  assert.throws(() => defineDomain({ ...base, title: '' }), /defineDomain: title must be a non-empty string/);
  assert.throws(() => defineDomain({ ...base, verify: { kind: 'command', command: [] } as never }), /verify\.command must be a non-empty array/);
  assert.throws(
    () => defineDomain({ ...base, tools: [{ name: 'bad name', description: '', parameters: {}, call: () => '' }] }),
    /tools\[0\]\.name must be an identifier/,
  );
  assert.throws(() => defineDomain({ ...base, regime: 'sideways' as never }), /regime must be/);
  // A misspelt key or limit would otherwise be dropped in silence (no type checker runs on a bundled module).
  assert.throws(
    () => defineDomain({ ...base, limitz: {} } as never),
    (e: unknown) => (e as { field?: string }).field === 'limitz' && /limitz is not a field of a domain definition/.test((e as Error).message),
  );
  assert.throws(() => defineDomain({ ...base, limits: { maxTurn: 4 } as never }), /limits\.maxTurn is not a limit/);
  assert.throws(() => defineDomain({ ...base, limits: { maxTurns: 0 } }), /limits\.maxTurns must be a positive integer/);
  assert.equal(defineDomain(base).kind, 'whale.domain/v1');
});

test('the built-ins are defineDomain definitions: getDomain and materialise give the same tasks and verdicts', async () => {
  const viaRegistry = getDomain('kbqa', { sizes: { val: 5 } });
  const direct = await materialise(kbqaDefinition, { sizes: { val: 5 } }, { origin: 'test', moduleDir: '.' });
  assert.deepEqual(direct.tasks('val'), viaRegistry.tasks('val'));
  const t = direct.tasks('val')[0];
  const answer = (t.private as { answer: string }).answer;
  assert.deepEqual(await direct.verify(t, rollout(answer)), await viaRegistry.verify(t, rollout(answer)));
  assert.equal(await direct.gold!(t), answer);
  assert.throws(
    () => getDomain('kbqa', { sizes: { val: 0 } }),
    (e: unknown) => e instanceof InputError && e.location.field === 'domain.options.sizes.val',
  );
});

test('verify may return a boolean, a score or a verdict; a bad return or a throw names the origin and task; SDK InfraError keeps its meaning', async () => {
  const mk = (verify: (...a: never[]) => unknown) =>
    materialiseSync(
      defineDomain({ ...base, tasks: () => ({ val: [{ id: 'a', question: 'q', private: { answer: 'x' } }] }), verify: verify as never }),
      {},
      { origin: 'my/module.ts', moduleDir: '.' },
    );
  const task = mk(() => true).tasks('val')[0];
  assert.deepEqual(await mk(() => true).verify(task, rollout('x')), { pass: true, score: 1, extracted: null, reason: 'correct' });
  assert.deepEqual(await mk(() => 0.5).verify(task, rollout('x')), { pass: false, score: 0.5, extracted: null, reason: 'score 0.5' });
  assert.deepEqual(await mk(async () => ({ pass: true, extracted: 'x' })).verify(task, rollout('x')), {
    pass: true,
    score: 1,
    extracted: 'x',
    reason: 'correct',
  });
  assert.throws(
    () => mk(() => 'yes').verify(task, rollout('x')),
    (e: unknown) => e instanceof WhaleError && /my\/module\.ts: verify \(task 'a'\) returned "yes"/.test((e as Error).message),
  );
  await assert.rejects(
    Promise.resolve(
      mk(async () => {
        throw new SdkInfraError('verifier', 'judge down');
      }).verify(task, rollout('x')),
    ),
    (e: unknown) =>
      e instanceof Error && e.name === 'InfraError' && (e as { source?: string }).source === 'verifier' && /verify \(task 'a'\): judge down/.test(e.message),
  );
});

test('h0 must be a harness folder: a wrong path is an InputError naming the module and the field', () => {
  assert.throws(
    () => materialiseSync(defineDomain({ ...base, h0: './nope' }), {}, { origin: 'm.ts', moduleDir: REPO }),
    (e: unknown) => e instanceof InputError && e.location.file === 'm.ts' && e.location.field === 'h0' && /nope is not a harness folder/.test(e.message),
  );
});

test('tasks: per split or a flat list; duplicates, bad fields and unknown splits name the field and task', () => {
  const load = (tasks: unknown) => materialiseSync(defineDomain({ ...base, tasks: () => tasks as never }), {}, { origin: 'm.ts', moduleDir: '.' });
  assert.throws(
    () =>
      load([
        { id: 'a', question: 'q' },
        { id: 'a', question: 'r' },
      ]).tasks('val'),
    (e: unknown) => e instanceof InputError && e.location.field === 'tasks[1].id' && /duplicate task id 'a'/.test(e.message),
  );
  assert.throws(
    () => load({ train: [] }),
    (e: unknown) => e instanceof InputError && e.location.field === 'tasks.train',
  );
  assert.throws(
    () => load({ val: [{ id: 'a', question: 'q', split: 'test' }] }).tasks('val'),
    (e: unknown) => e instanceof InputError && e.location.field === 'tasks.val[0].split',
  );
  assert.throws(
    () => load({ val: [{ id: 'a', question: 'q', meta: 3 }] }).tasks('val'),
    (e: unknown) => e instanceof InputError && e.location.field === 'tasks.val[0].meta',
  );
  assert.throws(
    () => load([{ id: 'a', question: 'q', answer: 'z' }]),
    (e: unknown) => e instanceof InputError && e.location.field === 'tasks[0].answer' && /not a task field .*private or meta.*task 'a'/.test(e.message),
  );
  const d = load({ val: () => [{ id: 'a', question: 'q', meta: { k: 1 }, private: { answer: 'z' } }] });
  assert.deepEqual(d.tasks('val'), [{ id: 'a', split: 'val', public: { id: 'a', question: 'q', meta: { k: 1 } }, private: { answer: 'z' } }]);
  assert.deepEqual(d.splitSizes, { weight: 0, harness: 0, val: 1, test: 0 });
});

const lib = (spec: unknown) => goldCompare(VerifierSpecSchema.parse(spec) as never, { file: 'whale.config.json', field: 'domain.data.verifier' });

test('verifier library: exact, normalised-em, token-f1, numeric, regex, extract', () => {
  assert.equal(lib({ kind: 'exact' })(' Paris ', ['paris']).pass, true);
  assert.equal(lib({ kind: 'exact', caseSensitive: true })('paris', ['Paris']).pass, false);
  assert.equal(lib({ kind: 'exact' })(null, ['x']).reason, 'no answer');
  assert.equal(lib({ kind: 'normalised-em' })('The Eiffel Tower!', ['eiffel tower']).pass, true);
  assert.equal(lib({ kind: 'normalised-em' })('Tower', ['eiffel tower']).pass, false);
  const f1 = lib({ kind: 'token-f1', threshold: 0.5 })('eiffel tower paris', ['eiffel tower']);
  assert.equal(f1.pass, true);
  assert.ok(Math.abs(f1.score - 0.8) < 1e-9, String(f1.score));
  assert.equal(lib({ kind: 'token-f1' })('eiffel tower paris', ['eiffel tower']).pass, false, 'default threshold 1: exact token overlap');
  assert.equal(lib({ kind: 'numeric' })('The answer is 1,234.0 apples', ['1234']).pass, true);
  assert.equal(lib({ kind: 'numeric', tolerance: 0.01 })('3.14', ['3.1416']).pass, true);
  assert.equal(lib({ kind: 'numeric', tolerance: 0.001 })('3.14', ['3.1416']).pass, false);
  assert.equal(lib({ kind: 'numeric', tolerance: 0.01, relative: true })('101', ['100']).pass, true);
  assert.equal(lib({ kind: 'numeric' })('1/2', ['0.5']).pass, true);
  assert.equal(lib({ kind: 'numeric' })('no digits', ['5']).reason, 'no number in the answer');
  assert.equal(lib({ kind: 'regex' })('color', ['colou?r']).pass, true);
  assert.equal(lib({ kind: 'regex' })('colors', ['colou?r']).pass, false, 'the whole answer must match');
  assert.equal(lib({ kind: 'regex', flags: 'i' })('COLOR', ['colou?r']).pass, true);
  const tagged = lib({ kind: 'exact', extract: '<answer>(.*?)</answer>' });
  assert.equal(tagged('thinking... <answer>42</answer>', ['42']).pass, true);
  assert.match(tagged('42', ['42']).reason, /does not match extract/);
  assert.equal(parseNumber('-7.5%'), -7.5);
  assert.equal(lib({ kind: 'boxed-math' })('so \\boxed{\\dfrac{1}{2}}', ['0.5']).pass, true);
  assert.equal(lib({ kind: 'boxed-math' })('\\boxed{3}', ['0.5']).pass, false);
});

test('verifier library: an unavailable kind or a bad extract pattern is an InputError naming the field', () => {
  assert.throws(
    () => goldCompare({ kind: 'no-such-kind' } as never, { file: 'whale.config.json', field: 'domain.data.verifier' }),
    (e: unknown) => e instanceof InputError && e.location.field === 'domain.data.verifier.kind' && /not available in this build/.test(e.message),
  );
  assert.throws(
    () => lib({ kind: 'exact', extract: '(' }),
    (e: unknown) => e instanceof InputError && e.location.field === 'domain.data.verifier.extract',
  );
});

test('definitionEntry makes a registry entry of a definition (async tasks welcome)', async () => {
  const { definitionEntry } = await import('../../src/domains/index.js');
  const e = definitionEntry(
    defineDomain({ ...base, id: 'later', description: 'First sentence. Second one.', tasks: async () => [{ id: 'a', question: 'q', split: 'val' as const }] }),
  );
  assert.deepEqual({ id: e.id, regime: e.regime, summary: e.summary }, { id: 'later', regime: 'unknown', summary: 'First sentence.' });
  const d = await e.create({}, {});
  assert.deepEqual(
    d.tasks('val').map((t) => t.id),
    ['a'],
  );
});
