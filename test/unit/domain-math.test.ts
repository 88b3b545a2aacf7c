/** The Math domain: loaders for DAPO-Math-17k (Parquet) and AIME layouts, options, the shipped sample, verdicts and diagnostics. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import * as path from 'node:path';
import { parquetWriteFile } from 'hyparquet-writer';
import { InputError } from '../../src/core/errors.js';
import type { ModelCall } from '../../src/core/trajectory.js';
import { listDomains, loadDomain } from '../../src/domains/index.js';
import { dapoProblem } from '../../src/domains/math/data.js';
import { mathEquivalent } from '../../src/domains/verifiers/math.js';
import { dapoPrompt, writeDapoParquet, writeMathSample } from '../../scripts/gen-math-sample.js';
import { REPO } from './domain-helpers.js';

const dir = mkdtempSync(path.join(tmpdir(), 'whale-math-'));

function writeDapo(file: string, rows: { problem: string; answer: string | number; index?: string }[]): string {
  const f = path.join(dir, file);
  writeDapoParquet(
    f,
    rows.map((r, i) => ({ prompt: dapoPrompt(r.problem), answer: String(r.answer), index: r.index ?? `idx-${file}-${i}` })),
  );
  return f;
}

async function rejectsInput(p: Promise<unknown>, re: RegExp): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof InputError, `not an InputError: ${String(e)}`);
    assert.match(e.message, re);
    return true;
  });
}

test('math is a registered, weight-dominated domain', () => {
  const d = listDomains().find((x) => x.id === 'math');
  assert.ok(d);
  assert.equal(d.regime, 'weight-dominated');
});

test('the shipped sample: DAPO Parquet feeds weight (256) and harness (64), AIME layouts feed val and test (60 each); every gold answer verifies', async () => {
  const d = await loadDomain('math');
  assert.deepEqual(d.splitSizes, { weight: 256, harness: 64, val: 60, test: 60 });
  const ids = new Set<string>();
  for (const s of ['weight', 'harness', 'val', 'test'] as const) {
    for (const t of d.tasks(s)) {
      assert.ok(!ids.has(t.id), `duplicate ${t.id}`);
      ids.add(t.id);
      const gold = (t.private as { answer: string }).answer;
      assert.equal(mathEquivalent(`so \\boxed{${gold}}`, gold).pass, true, `${t.id}: ${gold}`);
      assert.ok(!JSON.stringify(t.public).includes(`"${gold}"`), 'the answer is not in the public task');
    }
  }
  const w = d.tasks('weight')[0];
  assert.match(w.public.question, /^Solve the following math problem step by step\./, 'DAPO instruction kept by default (as verl ReTool does)');
  assert.equal(d.tasks('val')[0].id, 'aime-2024-sample-2024-S-1');
  for (const t of d.tasks('val')) assert.match((t.private as { answer: string }).answer, /^\d{1,3}$/, 'AIME answers are integers 0-999');
  const stripped = await loadDomain('math', { dapoInstruction: 'strip', sizes: { weight: 3 } });
  assert.equal(stripped.tasks('weight').length, 3);
  assert.doesNotMatch(stripped.tasks('weight')[0].public.question, /Solve the following|Answer:/);
});

test('the committed sample is exactly what scripts/gen-math-sample.ts writes', () => {
  const out = mkdtempSync(path.join(tmpdir(), 'whale-math-gen-'));
  const r = writeMathSample(out);
  for (const f of r.files)
    assert.ok(
      readFileSync(f).equals(readFileSync(path.join(REPO, 'resources', 'data', 'math', path.basename(f)))),
      `${path.basename(f)} differs: rerun npx tsx scripts/gen-math-sample.ts`,
    );
});

test('files → splits: DAPO Parquet with offset/limit, AIME JSONL of both hub layouts, CSV; relative paths against baseDir', async () => {
  writeDapo('dapo.parquet', [
    { problem: 'What is $1+1$?', answer: '2' },
    { problem: 'What is $\\frac{1}{2}+\\frac{1}{4}$?', answer: '\\frac{3}{4}' },
    { problem: 'What is $3 \\cdot 4$?', answer: 12 },
  ]);
  writeFileSync(
    path.join(dir, 'aime24.jsonl'),
    [
      { ID: '2024-I-1', Problem: 'Find $x$.', Solution: '...', Answer: 204 },
      { ID: '2024-I-2', Problem: 'Find $y$.', Solution: '...', Answer: 25 },
    ]
      .map((r) => JSON.stringify(r))
      .join('\n') + '\n',
  );
  writeFileSync(path.join(dir, 'aime25.jsonl'), JSON.stringify({ id: 'p1', problem: 'Find $z$.', answer: '070', year: 2025 }) + '\n');
  writeFileSync(path.join(dir, 'aime25b.jsonl'), JSON.stringify({ question: 'Find $w$.', answer: '5' }) + '\n');
  writeFileSync(path.join(dir, 'more.csv'), 'problem,answer\n"What is $2^3$?",8\n');
  const d = await loadDomain(
    'math',
    {
      files: {
        weight: { file: 'dapo.parquet', limit: 2 },
        harness: [{ file: 'dapo.parquet', offset: 2 }, 'more.csv'],
        val: 'aime24.jsonl',
        test: ['aime25.jsonl', 'aime25b.jsonl'],
      },
      dapoInstruction: 'strip',
    },
    { baseDir: dir },
  );
  assert.deepEqual(d.splitSizes, { weight: 2, harness: 2, val: 2, test: 2 });
  assert.equal(d.tasks('weight')[1].public.question, 'What is $\\frac{1}{2}+\\frac{1}{4}$?');
  assert.deepEqual(d.tasks('harness')[0].private, { answer: '12', source: 'math_dapo' });
  assert.equal(d.tasks('harness')[0].id, 'math_dapo-idx-dapo.parquet-2');
  assert.equal(d.tasks('harness')[1].public.question, 'What is $2^3$?');
  assert.deepEqual(
    d.tasks('val').map((t) => [t.id, (t.private as { answer: string }).answer]),
    [
      ['aime24-2024-I-1', '204'],
      ['aime24-2024-I-2', '25'],
    ],
  );
  assert.equal(d.tasks('test')[0].id, 'aime25-p1');
  assert.equal(d.tasks('test')[1].id, 'aime25b-1', 'no id column: file name and line');
  assert.equal(mathEquivalent('\\boxed{70}', (d.tasks('test')[0].private as { answer: string }).answer).pass, true, 'AIME 070 = 70');
});

test('a broken row is an InputError naming file:line (or row) and field', async () => {
  writeFileSync(path.join(dir, 'noanswer.jsonl'), JSON.stringify({ problem: 'ok', answer: '1' }) + '\n' + JSON.stringify({ problem: 'Find $x$.' }) + '\n');
  await rejectsInput(loadDomain('math', { files: { val: 'noanswer.jsonl' } }, { baseDir: dir }), /noanswer\.jsonl:2: answer: missing/);
  writeFileSync(path.join(dir, 'noproblem.jsonl'), JSON.stringify({ answer: '1' }) + '\n');
  await rejectsInput(loadDomain('math', { files: { val: 'noproblem.jsonl' } }, { baseDir: dir }), /noproblem\.jsonl:1: problem: missing/);
  writeFileSync(path.join(dir, 'emptyanswer.jsonl'), JSON.stringify({ question: 'q', answer: ' ' }) + '\n');
  await rejectsInput(loadDomain('math', { files: { val: 'emptyanswer.jsonl' } }, { baseDir: dir }), /emptyanswer\.jsonl:1: answer: must be a non-empty/);
  writeFileSync(path.join(dir, 'garbage.jsonl'), '{"problem": "x", "answer": 1}\n{not json\n');
  await rejectsInput(loadDomain('math', { files: { val: 'garbage.jsonl' } }, { baseDir: dir }), /garbage\.jsonl:2: not valid JSON/);
  const f = path.join(dir, 'badgt.parquet');
  parquetWriteFile({
    filename: f,
    columnData: [
      { name: 'prompt', data: [[{ content: 'q1', role: 'user' }], [{ content: 'q2', role: 'user' }]] },
      {
        name: 'reward_model',
        data: [
          { ground_truth: '1', style: 'rule' },
          { ground_truth: '', style: 'rule' },
        ],
      },
    ],
  });
  await rejectsInput(
    loadDomain('math', { files: { weight: 'badgt.parquet' } }, { baseDir: dir }),
    /badgt\.parquet \(row 2\): reward_model\.ground_truth: must be a non-empty/,
  );
  const g = path.join(dir, 'badprompt.parquet');
  parquetWriteFile({
    filename: g,
    columnData: [
      { name: 'prompt', data: ['just text'], type: 'STRING' },
      { name: 'reward_model', data: [{ ground_truth: '1' }] },
    ],
  });
  await rejectsInput(
    loadDomain('math', { files: { weight: 'badprompt.parquet' } }, { baseDir: dir }),
    /badprompt\.parquet \(row 1\): prompt: must be a list of chat messages/,
  );
  await rejectsInput(loadDomain('math', { files: { val: 'missing.jsonl' } }, { baseDir: dir }), /missing\.jsonl: cannot read tasks file \(ENOENT\)/);
});

test('the same task in two splits is refused (the test split stays sealed)', async () => {
  writeFileSync(path.join(dir, 'dup.jsonl'), JSON.stringify({ id: 'a', problem: 'p', answer: '1' }) + '\n');
  await rejectsInput(
    loadDomain('math', { files: { val: 'dup.jsonl', test: 'dup.jsonl' } }, { baseDir: dir }),
    /dup\.jsonl:1: id: task id 'dup-a' already used by .*dup\.jsonl:1 \(split val\)/,
  );
});

test('bad options are InputErrors naming the field', async () => {
  await rejectsInput(loadDomain('math', { sandboxUrl: 'not a url' }), /domain\.options\.sandboxUrl/);
  await rejectsInput(loadDomain('math', { maxAssistantTokens: 0 }), /domain\.options\.maxAssistantTokens/);
  await rejectsInput(loadDomain('math', { files: { train: 'x' } }), /domain\.options\.files/);
  await rejectsInput(loadDomain('math', { tasksFile: 'x' }), /domain\.options/);
});

test('DAPO instruction stripping leaves other prompts alone', () => {
  assert.equal(dapoProblem(dapoPrompt('What is $2+2$?')), 'What is $2+2$?');
  assert.equal(dapoProblem('Plain question?'), 'Plain question?');
});

function call(completion: string, finishReason: 'stop' | 'length' = 'stop', tokens = 5): ModelCall {
  return {
    index: 0,
    policyVersion: 'v',
    messages: [{ role: 'user', content: 'q' }],
    params: {},
    completion,
    finishReason,
    usage: { promptTokens: 3, completionTokens: tokens },
    latencyMs: 1,
  };
}

test('verdicts and diagnostics: right, wrong, no box, truncated, tool use; the answer must come from the model', async () => {
  const d = await loadDomain('math', { sizes: { val: 1 }, maxAssistantTokens: 64 });
  assert.equal(d.limits.maxAssistantTokens, 64);
  assert.equal(d.limits.maxTurns, 16);
  const task = d.tasks('val')[0];
  const gold = (task.private as { answer: string }).answer;
  const right = {
    finalAnswer: gold,
    modelCalls: [call(`<tool_call>{"name": "code_interpreter", "arguments": {"code": "1"}}</tool_call>`), call(`so \\boxed{${gold}}`)],
    events: [{ t: 0, type: 'tool' as const, name: 'code_interpreter', args: { code: '1' }, observation: '1\n' }],
  };
  assert.deepEqual(await d.verify(task, right), { pass: true, score: 1, extracted: gold, reason: 'correct (same text)' });
  assert.equal(await d.checkRules!(task, right), null);
  const dr = await d.diagnostics!(task, { ...right, termination: 'answered' });
  assert.deepEqual(dr, {
    truncated: false,
    boxed: true,
    boxedInLastCompletion: true,
    toolCalls: 1,
    usedTool: true,
    toolErrors: 0,
    turns: 2,
    assistantTokens: 10,
    extracted: gold,
    data_source: 'aime-2024-sample',
  });

  const wrong = { finalAnswer: '7', modelCalls: [call('\\boxed{7}')], events: [] };
  const vw = await d.verify(task, wrong);
  assert.equal(vw.pass, false);
  assert.equal(vw.reason, `expected ${gold}, got 7`);

  const none = { finalAnswer: null, modelCalls: [call('I think it is 121')], events: [] };
  assert.equal((await d.verify(task, none)).reason, 'no answer (no \\boxed{} in the final answer)');
  const dn = await d.diagnostics!(task, { ...none, termination: 'no_answer' });
  assert.equal(dn.boxed, false);
  assert.equal(dn.usedTool, false);

  const cut = { finalAnswer: null, modelCalls: [call('let me think '.repeat(20), 'length', 64)], events: [] };
  const dc = await d.diagnostics!(task, { ...cut, termination: 'no_answer' });
  assert.equal(dc.truncated, true);
  assert.equal(dc.assistantTokens, 64);

  const forged = { finalAnswer: gold, modelCalls: [call('I do not know')], events: [] };
  assert.match((await d.checkRules!(task, forged)) ?? '', /does not appear in any model completion/);
});

test('the search-space text says what may and may not change', async () => {
  const d = await loadDomain('math', { maxAssistantTokens: 1234 });
  assert.match(d.searchSpace, /What may change/);
  assert.match(d.searchSpace, /What may NOT change: the assistant token budget \(1234 completion tokens/);
  assert.match(d.searchSpace, /MAX_TURNS = 2/);
});

test('repeats are skipped (DAPO-Math-17k ships each problem ~100 times): within a split and across splits, first split wins; dedupe: false keeps them', async () => {
  writeDapo('rep.parquet', [
    { problem: 'What is $1+1$?', answer: '2', index: 'a' },
    { problem: 'What is $1+1$?', answer: '2', index: 'b' },
    { problem: 'What is $2+2$?', answer: '4', index: 'c' },
    { problem: 'What is $1+1$?', answer: '2', index: 'd' },
  ]);
  writeFileSync(
    path.join(dir, 'rep-test.jsonl'),
    [
      { id: 'x', problem: dapoPrompt('What is $2+2$?'), answer: '4' },
      { id: 'y', problem: 'What is $5+5$?', answer: '10' },
    ]
      .map((r) => JSON.stringify(r))
      .join('\n') + '\n',
  );
  const d = await loadDomain('math', { files: { weight: 'rep.parquet', test: 'rep-test.jsonl' } }, { baseDir: dir });
  assert.deepEqual(
    d.tasks('weight').map((t) => t.id),
    ['math_dapo-a', 'math_dapo-c'],
  );
  assert.deepEqual(
    d.tasks('test').map((t) => t.id),
    ['rep-test-y'],
    'a test problem already in weight is not a test problem',
  );
  const all = await loadDomain('math', { files: { weight: 'rep.parquet', test: 'rep-test.jsonl' }, dedupe: false }, { baseDir: dir });
  assert.equal(all.tasks('weight').length, 4);
  assert.equal(all.tasks('test').length, 2);
});

// pyarrow (what the field's datasets/verl read Parquet with); .ci/run installs it in the WHALE_MATH_PY venv.
const fieldPython = process.env.WHALE_MATH_PY ?? path.join(homedir(), '.cache', 'whale-ci', 'math-py-1', 'bin', 'python');
test(
  "pyarrow reads the shipped DAPO sample with DAPO's nested schema, and a DAPO file pyarrow writes loads as the math domain",
  { skip: !existsSync(fieldPython) && 'pyarrow not installed (WHALE_MATH_PY)' },
  async () => {
    const written = path.join(dir, 'pyarrow-dapo.parquet');
    const script = `
import json, sys
import pyarrow as pa, pyarrow.parquet as pq
t = pq.read_table(sys.argv[1])
row = t.slice(0, 1).to_pylist()[0]
rows = [
    {"data_source": "math_dapo", "prompt": [{"content": "What is $\\\\frac{1}{2}+\\\\frac{1}{3}$?", "role": "user"}], "ability": "MATH",
     "reward_model": {"ground_truth": "\\\\frac{5}{6}", "style": "rule-lighteval/MATH_v2"}, "extra_info": {"index": "pa-0"}},
    {"data_source": "math_dapo", "prompt": [{"content": "What is $2^{5}$?", "role": "user"}], "ability": "MATH",
     "reward_model": {"ground_truth": "32", "style": "rule-lighteval/MATH_v2"}, "extra_info": {"index": "pa-1"}},
]
pq.write_table(pa.Table.from_pylist(rows), sys.argv[2])
print(json.dumps({"schema": {f.name: str(f.type) for f in t.schema}, "rows": t.num_rows, "answer": row["reward_model"]["ground_truth"], "role": row["prompt"][0]["role"]}))
`;
    const r = spawnSync(fieldPython, ['-c', script, path.join(REPO, 'resources', 'data', 'math', 'dapo-math-sample.parquet'), written], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { schema: Record<string, string>; rows: number; answer: string; role: string };
    assert.deepEqual(out.schema, {
      data_source: 'string',
      prompt: 'list<element: struct<content: string, role: string>>',
      ability: 'string',
      reward_model: 'struct<ground_truth: string, style: string>',
      extra_info: 'struct<index: string>',
    });
    assert.equal(out.rows, 320);
    assert.equal(out.role, 'user');
    const d = await loadDomain('math', { files: { weight: 'pyarrow-dapo.parquet' } }, { baseDir: dir });
    assert.deepEqual(
      d.tasks('weight').map((t) => [t.id, t.public.question, (t.private as { answer: string }).answer]),
      [
        ['math_dapo-pa-0', 'What is $\\frac{1}{2}+\\frac{1}{3}$?', '\\frac{5}{6}'],
        ['math_dapo-pa-1', 'What is $2^{5}$?', '32'],
      ],
    );
  },
);
