/**
 * SearchQA's parts: loaders for Search-R1 Parquet / FlashRAG JSONL (also files written by pyarrow),
 * bad rows named by file:line:field, the embedded retriever behind Search-R1's API (checked with
 * curl and Python requests), the search tool's limits, the verifier and the LLM judge against a
 * local OpenAI-compatible server.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { InputError, InfraError } from '../../src/core/errors.js';
import { domainH0Dir, getDomain, listDomains, loadDomain } from '../../src/domains/index.js';
import { QA_SOURCES, searchqaPrivate, sourceFromPath } from '../../src/domains/searchqa/data.js';
import { closeEmbeddedRetrievers, sampleDir } from '../../src/domains/searchqa/index.js';
import { buildIndex, readCorpus, serveRetriever, startRetriever } from '../../src/domains/searchqa/retriever/server.js';
import { makeSearchTool, truncateTokens } from '../../src/domains/searchqa/search.js';
import { extractTaggedAnswer, verifySearchqa } from '../../src/domains/searchqa/verify.js';
import { SPLITS, type RolloutRecord, type Task } from '../../src/domains/types.js';
import { FakeLlmServer, openaiError } from '../support/fakeLlmServer.js';

const dir = mkdtempSync(path.join(tmpdir(), 'whale-sq-'));
const PY = process.env.WHALE_PY_FIELD;
// Clients of a server in this process must run asynchronously (a sync child would block its event loop).
const run = promisify(execFile);
after(() => closeEmbeddedRetrievers());

const rollout = (finalAnswer: string | null, completion = finalAnswer ?? ''): RolloutRecord => ({
  finalAnswer,
  events: [],
  modelCalls: [
    {
      index: 0,
      policyVersion: 'v',
      messages: [{ role: 'user', content: 'q' }],
      params: {},
      completion,
      finishReason: 'stop',
      usage: { promptTokens: 0, completionTokens: 0 },
      latencyMs: 0,
    },
  ],
});
const task = (answers: string[], question = 'who wrote hamlet?'): Task => ({
  id: 'nq:1',
  split: 'val',
  public: { id: 'nq:1', question, meta: { data_source: 'nq' } },
  private: { answers, dataSource: 'nq' },
});

test('registry lists searchqa; the shipped sample loads into four splits with every QA set in val+test, deterministically', async () => {
  assert.ok(listDomains().some((d) => d.id === 'searchqa' && d.regime === 'harness-dominated'));
  const d = await loadDomain('searchqa');
  assert.deepEqual(d.splitSizes, { weight: 128, harness: 64, val: 64, test: 104 });
  const again = await loadDomain('searchqa');
  const ids = new Set<string>();
  for (const s of SPLITS) {
    assert.ok(d.tasks(s).length >= 50, `${s} has ${d.tasks(s).length}`);
    assert.deepEqual(again.tasks(s), d.tasks(s));
    for (const t of d.tasks(s)) {
      assert.ok(!ids.has(t.id));
      ids.add(t.id);
      assert.equal(t.split, s);
      assert.equal(t.public.meta?.data_source, searchqaPrivate(t).dataSource);
      assert.ok(!JSON.stringify(t.public).includes(JSON.stringify(searchqaPrivate(t).answers[0])), 'answers stay private');
    }
  }
  assert.deepEqual(new Set(d.tasks('weight').map((t) => t.public.meta!.data_source)), new Set(['nq', 'hotpotqa']));
  assert.deepEqual(new Set([...d.tasks('val'), ...d.tasks('test')].map((t) => t.public.meta!.data_source)), new Set(QA_SOURCES));
  const reseeded = await loadDomain('searchqa', { seed: 'other' });
  assert.notDeepEqual(
    reseeded.tasks('val').map((t) => t.id),
    d.tasks('val').map((t) => t.id),
  );
  assert.equal((await loadDomain('searchqa', { sizes: { test: 10 } })).tasks('test').length, 10);
  // The h0 folder is known without building the domain (the CLI's flag-only eval/run need it).
  assert.equal(domainH0Dir('searchqa'), d.h0Dir);
  assert.equal(domainH0Dir('kbqa'), getDomain('kbqa').h0Dir);
  assert.throws(() => getDomain('searchqa'), /loads asynchronously: use loadDomain/);
});

test('FlashRAG JSONL: the source comes from the folder; files split four ways by a seeded hash', async () => {
  assert.equal(sourceFromPath('/x/hotpotqa/dev.jsonl'), 'hotpotqa');
  assert.equal(sourceFromPath('/x/bamboogle.jsonl'), 'bamboogle');
  const d = await loadDomain('searchqa', { files: 'flashrag/popqa/test.jsonl', retriever: { corpus: 'corpus.jsonl' } }, { baseDir: sampleDir() });
  const all = SPLITS.flatMap((s) => d.tasks(s));
  assert.equal(all.length, 60);
  assert.ok(all.every((t) => t.id.startsWith('popqa:test_') && t.public.meta?.data_source === 'popqa'));
  assert.ok(
    SPLITS.every((s) => d.tasks(s).length > 0),
    JSON.stringify(d.splitSizes),
  );
});

test('broken rows are InputErrors naming file, line and field; overlapping train/test files are refused', async () => {
  const f = (name: string, rows: unknown[]) => {
    writeFileSync(path.join(dir, name), rows.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n');
    return name;
  };
  const good = { id: 'test_0', question: 'who wrote hamlet?', golden_answers: ['Shakespeare'] };
  const cases: [string, unknown[], RegExp][] = [
    ['noanswer.jsonl', [good, { id: 'test_1', question: 'q' }], /noanswer\.jsonl:2: reward_model\.ground_truth\.target: must be a non-empty list/],
    ['emptyanswer.jsonl', [good, '', { id: 'x', question: 'q', golden_answers: [''] }], /emptyanswer\.jsonl:3: golden_answers:/],
    ['noquestion.jsonl', [{ id: 1, question: 7, golden_answers: ['a'] }], /noquestion\.jsonl:1: question: must be a non-empty string/],
    ['badjson.jsonl', [good, '{"id": "t", "question": '], /badjson\.jsonl:2: not valid JSON/],
    ['dup.jsonl', [good, good], /dup\.jsonl:2: id: duplicate task id 'dup:test_0'/],
    ['badsource.jsonl', [{ ...good, data_source: 5 }], /badsource\.jsonl:1: data_source:/],
  ];
  for (const [name, rows, re] of cases) {
    await assert.rejects(
      loadDomain('searchqa', { files: f(name, rows), retriever: { url: 'http://127.0.0.1:9/retrieve' } }, { baseDir: dir }),
      (e: unknown) => e instanceof InputError && re.test(e.message),
      name,
    );
  }
  // reward_model.ground_truth.target stands in for golden_answers (Search-R1's reward column).
  const rm = await loadDomain(
    'searchqa',
    {
      files: f('nq.jsonl', [{ id: 'a', question: 'q?', data_source: 'nq', reward_model: { style: 'rule', ground_truth: { target: ['x', 'y'] } } }]),
      retriever: { url: 'http://127.0.0.1:9/retrieve' },
    },
    { baseDir: dir },
  );
  assert.deepEqual(searchqaPrivate(SPLITS.flatMap((s) => rm.tasks(s))[0]).answers, ['x', 'y']);
  f('a.jsonl', [good]);
  await assert.rejects(
    loadDomain(
      'searchqa',
      { trainFiles: 'a.jsonl', testFiles: path.join(dir, 'a.jsonl'), retriever: { url: 'http://127.0.0.1:9/retrieve' } },
      { baseDir: dir },
    ),
    /in both the (harness|weight) and the (val|test) files/,
  );
  await assert.rejects(
    loadDomain('searchqa', { files: 'a.jsonl', trainFiles: 'a.jsonl' }),
    (e: unknown) => e instanceof InputError && /domain\.options: give files, or trainFiles\/testFiles/.test(e.message),
  );
  await assert.rejects(
    loadDomain('searchqa', { retriever: { url: 'nope' } }),
    (e: unknown) => e instanceof InputError && /domain\.options\.retriever\.url/.test(e.message),
  );
  await assert.rejects(loadDomain('searchqa', { trainfiles: 'a' }), (e: unknown) => e instanceof InputError && /trainfiles/.test(e.message));
});

test(
  "Parquet in Search-R1 layout written by pyarrow (the field's writer) loads; a broken Parquet row names its row",
  { skip: PY ? false : 'WHALE_PY_FIELD (a Python with pyarrow) not set; .ci/run provides it' },
  () => {
    const script = `
import pyarrow as pa, pyarrow.parquet as pq, sys
rows = [
  {"id": "test_0", "question": "who wrote hamlet?", "golden_answers": ["Shakespeare", "William Shakespeare"], "data_source": "nq",
   "prompt": [{"content": "Answer the given question. Question: who wrote hamlet?", "role": "user"}], "ability": "fact-reasoning",
   "reward_model": {"ground_truth": {"target": ["Shakespeare", "William Shakespeare"]}, "style": "rule"}, "extra_info": {"index": 0, "split": "test"}},
  {"id": "test_0", "question": "capital of peru?", "golden_answers": ["Lima"], "data_source": "bamboogle",
   "prompt": [{"content": "Question: capital of peru?", "role": "user"}], "ability": "fact-reasoning",
   "reward_model": {"ground_truth": {"target": ["Lima"]}, "style": "rule"}, "extra_info": {"index": 0, "split": "test"}},
]
pq.write_table(pa.Table.from_pylist(rows), sys.argv[1] + "/good.parquet")
rows[1]["golden_answers"] = []
rows[1]["reward_model"] = None
pq.write_table(pa.Table.from_pylist(rows), sys.argv[1] + "/bad.parquet")
`;
    execFileSync(PY!, ['-c', script, dir]);
    return (async () => {
      const d = await loadDomain('searchqa', { files: 'good.parquet', retriever: { url: 'http://127.0.0.1:9/retrieve' } }, { baseDir: dir });
      const all = SPLITS.flatMap((s) => d.tasks(s)).sort((a, b) => (a.id < b.id ? -1 : 1));
      assert.deepEqual(
        all.map((t) => [t.id, t.public.question, searchqaPrivate(t).answers, t.public.meta?.data_source]),
        [
          ['bamboogle:test_0', 'capital of peru?', ['Lima'], 'bamboogle'],
          ['nq:test_0', 'who wrote hamlet?', ['Shakespeare', 'William Shakespeare'], 'nq'],
        ],
      );
      await assert.rejects(
        loadDomain('searchqa', { files: 'bad.parquet', retriever: { url: 'http://127.0.0.1:9/retrieve' } }, { baseDir: dir }),
        (e: unknown) => e instanceof InputError && /bad\.parquet \(row 2\): golden_answers: must be a non-empty list/.test(e.message),
      );
      // Our shipped sample, read back by pyarrow: real list and struct columns.
      const schema = execFileSync(
        PY!,
        ['-c', 'import pyarrow.parquet as pq, sys; print(pq.read_schema(sys.argv[1]))', path.join(sampleDir(), 'test.parquet')],
        { encoding: 'utf8' },
      );
      assert.match(schema, /golden_answers: list<element: string>/);
      assert.match(schema, /reward_model: struct<ground_truth: struct<target: list<element: string>>, style: string>/);
    })();
  },
);

test('embedded retriever: Search-R1 API shapes, BM25 ranking, 422/404/405 as FastAPI would; curl and Python requests as clients', async () => {
  const corpus = path.join(dir, 'corpus.jsonl');
  writeFileSync(
    corpus,
    [
      { id: '0', contents: '"Hamlet"\nHamlet is a tragedy written by William Shakespeare around 1600.' },
      { id: '1', contents: '"Lima"\nLima is the capital and largest city of Peru.' },
      { id: 2, contents: '"Macbeth"\nMacbeth is a tragedy by William Shakespeare, first performed in 1606.' },
    ]
      .map((r) => JSON.stringify(r))
      .join('\n') + '\n',
  );
  const r = await startRetriever(corpus);
  try {
    assert.equal(r.passages, 3);
    const post = async (body: unknown) => {
      const res = await fetch(r.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: res.status, body: (await res.json()) as { result: unknown[][]; detail?: string } };
    };
    const a = await post({ queries: ['capital of Peru', 'Shakespeare tragedy'], topk: 2, return_scores: true });
    assert.equal(a.status, 200);
    const [peru, shakes] = a.body.result as { document: { id: string; contents: string }; score: number }[][];
    assert.equal(peru[0].document.id, '1');
    assert.ok(peru[0].score > 0);
    assert.equal(shakes.length, 2);
    assert.deepEqual(new Set(shakes.map((x) => x.document.id)), new Set(['0', '2']));
    const b = await post({ queries: ['Lima'], topk: 1, return_scores: false });
    assert.deepEqual(b.body.result, [[{ id: '1', contents: '"Lima"\nLima is the capital and largest city of Peru.' }]]);
    assert.equal((await post({ queries: ['x'] })).status, 200, 'topk defaults (Search-R1: config topk 3)');
    assert.equal((await post({ queries: 'x', topk: 1 })).status, 422);
    assert.match((await post({ queries: ['x'], topk: 0 })).body.detail!, /topk/);
    assert.equal((await fetch(r.url)).status, 405);
    assert.equal((await fetch(r.url.replace('/retrieve', '/nope'))).status, 404);
    // curl, as Search-R1's README queries its server.
    const curl = await run(
      'curl',
      ['-s', '-X', 'POST', r.url, '-H', 'Content-Type: application/json', '-d', '{"queries": ["largest city of Peru"], "topk": 1, "return_scores": true}'],
      { encoding: 'utf8', timeout: 10_000 },
    );
    assert.equal((JSON.parse(curl.stdout) as { result: { document: { id: string } }[][] }).result[0][0].document.id, '1');
    if (PY) {
      const { stdout: out } = await run(
        PY,
        [
          '-c',
          `
import requests, sys
r = requests.post(sys.argv[1], json={"queries": ["Macbeth 1606", "Hamlet"], "topk": 1, "return_scores": True}, timeout=10)
r.raise_for_status()
print(",".join(res[0]["document"]["id"] + ":" + ("%.1f" % res[0]["score"] if res[0]["score"] > 0 else "0") for res in r.json()["result"]))
`,
          r.url,
        ],
        { encoding: 'utf8', timeout: 20_000 },
      );
      assert.match(out.trim(), /^2:\d+\.\d,0:\d+\.\d$/);
    }
  } finally {
    await r.close();
  }
  writeFileSync(path.join(dir, 'badcorpus.jsonl'), '{"id": "a", "contents": "x"}\n{"id": "b"}\n');
  await assert.rejects(readCorpus('badcorpus.jsonl', dir), (e: unknown) => e instanceof InputError && /badcorpus\.jsonl:2: contents:/.test(e.message));
  await assert.rejects(readCorpus(path.join(dir, 'missing.jsonl')), (e: unknown) => e instanceof InputError && /cannot read corpus \(ENOENT\)/.test(e.message));
});

test('search tool: topk clamped to 10, passages cut to max_doc_tokens, bad arguments are a tool error, an unreachable service an InfraError', async () => {
  const passages = Array.from({ length: 30 }, (_, i) => ({ id: String(i), contents: `"Doc ${i}"\nalpha ${'w '.repeat(300)}end` }));
  const running = await serveRetriever(await buildIndex(passages));
  try {
    const tool = makeSearchTool({ url: running.url, timeoutMs: 5000 });
    const obs = JSON.parse(await tool.call({ query_list: ['alpha'], topk: 50, max_doc_tokens: 5 }, task(['x']))) as {
      results: { passages: { contents: string }[] }[];
    };
    assert.equal(obs.results[0].passages.length, 10);
    assert.match(obs.results[0].passages[0].contents, /^"Doc \d+"\nalpha w w$/);
    assert.match(await tool.call({ query_list: [] }, task(['x'])), /^error: search needs/);
    assert.equal(JSON.parse(await tool.call({ query: 'alpha', topk: 1 }, task(['x']))).results[0].passages.length, 1);
  } finally {
    await running.close();
  }
  const down = makeSearchTool({ url: running.url, timeoutMs: 2000 });
  await assert.rejects(
    Promise.resolve(down.call({ query_list: ['alpha'] }, task(['x']))),
    (e: unknown) => e instanceof InfraError && e.source === 'tool' && /unreachable/.test(e.message),
  );
  assert.equal(truncateTokens('"T"\na  b c', 2), '"T"\na');
  // A retriever that accepts the connection and never answers.
  const hang = createServer(() => undefined);
  await new Promise<void>((r) => hang.listen(0, '127.0.0.1', r));
  try {
    const slow = makeSearchTool({ url: `http://127.0.0.1:${(hang.address() as AddressInfo).port}/retrieve`, timeoutMs: 300 });
    await assert.rejects(
      Promise.resolve(slow.call({ query_list: ['alpha'] }, task(['x']))),
      (e: unknown) => e instanceof InfraError && /did not answer within 300 ms/.test(e.message),
    );
  } finally {
    hang.closeAllConnections();
    await new Promise<void>((r) => hang.close(() => r()));
  }
});

test('verifier: normalised EM against any gold answer, F1 in the reason, <answer> tags taken off', async () => {
  const t = task(['William Shakespeare', 'Shakespeare']);
  assert.deepEqual(await verifySearchqa(t, rollout('the Shakespeare.'), undefined), {
    pass: true,
    score: 1,
    extracted: 'shakespeare',
    reason: 'exact match (F1 1.00)',
  });
  assert.equal((await verifySearchqa(t, rollout('<answer> William  shakespeare </answer>'), undefined)).pass, true);
  const partial = await verifySearchqa(t, rollout('William Blake'), undefined);
  assert.equal(partial.pass, false);
  assert.equal(partial.reason, 'expected william shakespeare | shakespeare, got william blake (F1 0.50)');
  assert.deepEqual(await verifySearchqa(t, rollout(null), undefined), { pass: false, score: 0, extracted: null, reason: 'no answer' });
  assert.equal((await verifySearchqa(t, rollout('the'), undefined)).reason, 'empty answer');
  assert.equal(extractTaggedAnswer('<answer>a</answer> then <answer> b </answer>'), 'b');
});

test('LLM judge through an OpenAI-compatible server: yes/no decide, the key comes from the named env var, failures are InfraErrors', async () => {
  const said: string[] = ['<think>\nThe Bard is Shakespeare, so no doubt.\n</think>\n\nyes', 'No.', 'maybe'];
  const fake = await new FakeLlmServer((req) => (req.index >= 3 ? openaiError(500, 'server_error', 'boom') : { text: said[req.index] })).start();
  process.env.WHALE_TEST_JUDGE_KEY = 'sk-judge-123';
  try {
    const judge = { url: fake.openaiBaseUrl, model: 'judge-model', keyEnv: 'WHALE_TEST_JUDGE_KEY', timeoutMs: 5000 };
    const t = task(['William Shakespeare']);
    const yes = await verifySearchqa(t, rollout('the Bard'), judge);
    assert.deepEqual(yes, { pass: true, score: 1, extracted: 'bard', reason: 'judge yes (EM 0, F1 0.00; gold william shakespeare)' });
    const req = fake.requests[0];
    assert.equal(req.body.model, 'judge-model');
    assert.equal(req.headers.authorization, 'Bearer sk-judge-123');
    assert.match(req.userText, /Question: who wrote hamlet\?/);
    assert.match(req.userText, /Candidate answer: "the Bard"/);
    assert.equal((await verifySearchqa(t, rollout('Shakespeare William'), judge)).pass, false);
    await assert.rejects(
      Promise.resolve(verifySearchqa(t, rollout('x'), judge)),
      (e: unknown) => e instanceof InfraError && e.source === 'verifier' && /neither yes nor no: "maybe"/.test(e.message),
    );
    await assert.rejects(
      Promise.resolve(verifySearchqa(t, rollout('x'), judge)),
      (e: unknown) => e instanceof InfraError && e.source === 'verifier' && /judge .* failed/.test(e.message),
    );
    // No answer needs no judge.
    const before = fake.requests.length;
    assert.equal((await verifySearchqa(t, rollout(null), judge)).reason, 'no answer');
    assert.equal(fake.requests.length, before);
  } finally {
    delete process.env.WHALE_TEST_JUDGE_KEY;
    await fake.close();
  }
});

test('domain options: a judge makes the verifier timeout follow it; the default retriever is the local one', async () => {
  mkdirSync(path.join(dir, 'nq'), { recursive: true });
  writeFileSync(path.join(dir, 'nq', 'test.jsonl'), JSON.stringify({ id: 'test_0', question: 'q?', golden_answers: ['a'] }) + '\n');
  const d = await loadDomain(
    'searchqa',
    { testFiles: 'nq/test.jsonl', judge: { url: 'http://127.0.0.1:1/v1', model: 'm', timeoutMs: 1000 } },
    { baseDir: dir },
  );
  assert.deepEqual(d.limits, { maxTurns: 16, maxTokensPerCall: 512, verifierTimeoutMs: 6000 });
  assert.match(d.description, /http:\/\/127\.0\.0\.1:8000\/retrieve/);
  assert.equal(d.tasks('test')[0].id, 'nq:test_0', 'one test row: nothing to spare for val');
  assert.equal(d.tasks('val').length, 0);
});
