/**
 * Users' own domains end to end: code modules loaded in the worker thread, data-only domains from
 * task files, command verifiers, HTTP tools on 127.0.0.1 — through the real harness runtime
 * (sandboxed harness processes, gateway), with failures recorded per rollout and the rest going on.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { SandboxLimitsSchema, SamplingSchema, DomainRefSchema } from '../../src/core/config.js';
import { InfraError, InputError, WhaleError } from '../../src/core/errors.js';
import type { Trajectory } from '../../src/core/trajectory.js';
import { loadProjectDomain, type ProjectDomain } from '../../src/domains/load.js';
import type { RolloutRecord } from '../../src/domains/types.js';
import { HarnessRuntime } from '../../src/harness/runtime.js';
import { ScriptedBackend } from '../../src/harness/testing/scriptedBackend.js';
import { REPO } from './domain-helpers.js';

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'whale-user-domain-'));
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    writeFileSync(path.join(dir, f), text);
  }
  return dir;
}

const load = (dir: string, ref: unknown, trusted = true) =>
  loadProjectDomain(DomainRefSchema.parse(ref), { baseDir: dir, trusted, cacheDir: path.join(dir, '.whale', 'cache') });

const rollout = (answer: string | null): RolloutRecord => ({
  finalAnswer: answer,
  modelCalls:
    answer === null
      ? []
      : [
          {
            index: 0,
            policyVersion: 't',
            messages: [{ role: 'user', content: 'q' }],
            params: {},
            completion: answer,
            finishReason: 'stop',
            usage: { promptTokens: 0, completionTokens: 0 },
            latencyMs: 0,
          },
        ],
  events: [],
});

/** A harness that calls the first tool once (when there is one) and answers what the model says. */
const TOOL_HARNESS = {
  'h0/harness.json': JSON.stringify({ name: 'tool-h0', runtime: 'node', entry: 'harness.ts' }),
  'h0/harness.ts': `import { defineHarness } from 'whale-harness';
export default defineHarness({ async run(task, ctx) {
  let obs = '';
  if (ctx.tools.length) obs = await ctx.tool(ctx.tools[0].name, { query: task.question });
  const r = await ctx.chat([{ role: 'user', content: task.question + (obs ? ' ' + obs : '') }]);
  return { answer: r.text.trim() };
} });`,
};

/** Rolls every val task out once through the real runtime with a scripted model. */
async function rollAll(domain: ProjectDomain, dir: string, reply: (question: string) => string, split: 'val' | 'weight' = 'val'): Promise<Trajectory[]> {
  const backend = new ScriptedBackend((messages) => reply(messages[messages.length - 1].content));
  const rt = new HarnessRuntime({
    domain,
    backend,
    limits: SandboxLimitsSchema.parse({}),
    sampling: SamplingSchema.parse({}),
    concurrency: 4,
    cacheDir: path.join(dir, '.whale', 'cache'),
  });
  try {
    const prepared = await rt.prepare(path.join(dir, 'h0'));
    return await rt.rolloutMany(
      prepared,
      domain.tasks(split).map((task, i) => ({ task, sampleIndex: 0, seed: i })),
    );
  } finally {
    await rt.close();
  }
}

const FAULTY_MODULE = `import { defineDomain } from 'whale/domain';
export default defineDomain<{ n: number }, { answer: string }>({
  id: 'faulty', title: 'faulty', description: 'a verifier that throws on one task and hangs on another',
  tasks: ({ options }) => ({ val: Array.from({ length: options.n ?? 6 }, (_, i) => ({ id: 't' + i, question: 'say ' + i, private: { answer: String(i) } })) }),
  verify(task, rollout) {
    if (task.id === 't1') throw new Error('the checker crashed');
    if (task.id === 't2') { const end = Date.now() + 60_000; while (Date.now() < end) {} }
    return rollout.finalAnswer === task.private.answer;
  },
  limits: { verifierTimeoutMs: 1500 },
  h0: '../h0', searchSpace: 'x',
});`;

test('a code domain: a verifier that throws on one rollout and one stuck in a synchronous loop are infra failures of those rollouts; the rest is scored', async () => {
  const dir = project({ ...TOOL_HARNESS, 'domain/index.ts': FAULTY_MODULE });
  const domain = await load(dir, { module: './domain/index.ts', options: { n: 6 } });
  try {
    const t0 = Date.now();
    const trajs = await rollAll(domain, dir, (q) => q.replace('say ', ''));
    assert.equal(trajs.length, 6);
    const by = Object.fromEntries(trajs.map((t) => [t.taskId, t]));
    assert.equal(by.t1.termination, 'infra_error');
    assert.equal(by.t1.infra?.source, 'verifier');
    assert.match(by.t1.infra!.message, /domain[/\\]index\.ts: verify \(task 't1'\): the checker crashed \(at index\.ts:\d+:\d+\)/);
    assert.equal(by.t2.termination, 'infra_error');
    assert.match(by.t2.infra!.message, /verify \(task 't2'\) gave no answer within 1500 ms; its worker thread was ended/);
    for (const id of ['t0', 't3', 't4', 't5']) {
      assert.equal(by[id].termination, 'answered', `${id}: ${by[id].terminationDetail}`);
      assert.equal(by[id].verdict.pass, true, `${id}: ${by[id].verdict.reason}`);
    }
    // The stuck verifier did not block the engine: everything finished long before its 60 s loop would have.
    assert.ok(Date.now() - t0 < 40_000, `took ${Date.now() - t0} ms`);
  } finally {
    await domain.close();
  }
});

test('a code domain is refused in an untrusted workspace, before any of its code runs', async () => {
  const dir = project({ 'domain/index.ts': `throw new Error('must not run');` });
  await assert.rejects(
    load(dir, { module: './domain/index.ts' }, false),
    (e: unknown) => e instanceof WhaleError && /runs only in a trusted workspace/.test((e as Error).message),
  );
});

test("errors in a module name the file, the task and the field; options are checked with the module's schema", async () => {
  const dir = project({
    'bad-task.ts': `import { defineDomain } from 'whale/domain';
export default defineDomain({ id: 'x', title: 'x', description: 'x', h0: '.', searchSpace: 's', verify: () => true,
  tasks: () => [{ id: 'ok', question: 'q' }, { id: 'broken', question: '' }] });`,
    'bad-options.ts': `import { defineDomain } from 'whale/domain';
export default defineDomain({ id: 'x', title: 'x', description: 'x', h0: '.', searchSpace: 's', verify: () => true, tasks: () => [],
  options: { safeParse: (v: any) => typeof v.k === 'number' ? { success: true, data: v } : { success: false, error: { issues: [{ path: ['k'], message: 'expected a number' }] } } } });`,
    'syntax.ts': `import { defineDomain } from 'whale/domain';\nexport default defineDomain({ id: 'x', title: \n`,
    'no-default.ts': `export const x = 1;`,
    'throws.ts': `import { defineDomain } from 'whale/domain';
export default defineDomain({ id: 'x', title: 'x', description: 'x', h0: '.', searchSpace: 's', verify: () => true,
  tasks: () => { const rows: any = null; return rows.map((r: any) => r); } });`,
    'bad-def.ts': `import { defineDomain } from 'whale/domain';\nexport default defineDomain({ id: 'Bad Id', title: 'x', description: 'x', h0: '.', searchSpace: 's', verify: () => true, tasks: () => [] });`,
  });
  await assert.rejects(
    load(dir, { module: 'bad-task.ts' }),
    (e: unknown) =>
      e instanceof InputError && e.location.file.endsWith('bad-task.ts') && e.location.field === 'tasks[1].question' && /task 'broken'/.test(e.message),
  );
  await assert.rejects(
    load(dir, { module: 'bad-options.ts', options: { k: 'no' } }),
    (e: unknown) => e instanceof InputError && e.location.field === 'domain.options.k' && /expected a number/.test(e.message),
  );
  await assert.rejects(
    load(dir, { module: 'syntax.ts' }),
    (e: unknown) => e instanceof InputError && e.location.file.endsWith('syntax.ts') && e.location.line === 3,
  );
  // A crash in the user's code names its own file and line (the bundle's source map), not the bundle's.
  await assert.rejects(
    load(dir, { module: 'throws.ts' }),
    (e: unknown) => e instanceof WhaleError && /throws\.ts:3:\d+: tasks\(\) of domain 'x' threw: Cannot read properties of null/.test((e as Error).message),
  );
  await assert.rejects(
    load(dir, { module: 'no-default.ts' }),
    (e: unknown) => e instanceof InputError && /default export must be defineDomain/.test(e.message),
  );
  await assert.rejects(
    load(dir, { module: 'bad-def.ts' }),
    (e: unknown) => e instanceof InputError && e.location.file.endsWith('bad-def.ts') && e.location.field === 'id' && /must be lower-case/.test(e.message),
  );
  // The worked example (and the `domain new` template) refuses a misspelt option instead of ignoring it.
  const example = mkdtempSync(path.join(tmpdir(), 'whale-example-'));
  cpSync(path.join(REPO, 'examples', 'code-domain'), example, { recursive: true });
  await assert.rejects(
    load(example, { module: './domains/arith/index.ts', options: { generatd: 3 } }),
    (e: unknown) => e instanceof InputError && e.location.field === 'domain.options' && /unknown option 'generatd'/.test(e.message),
  );
  await assert.rejects(load(dir, { module: 'missing.ts' }), (e: unknown) => e instanceof InputError && e.location.field === 'domain.module');
});

test('a code domain tool runs in the worker with the private data; one that throws InfraError makes an infra failure', async () => {
  const dir = project({
    ...TOOL_HARNESS,
    'domain/index.ts': `import { defineDomain, InfraError } from 'whale/domain';
export default defineDomain<{}, { secret: string }>({ id: 'tooly', title: 't', description: 'd', h0: '../h0', searchSpace: 's',
  tasks: () => ({ val: [{ id: 'a', question: 'up', private: { secret: 'kiwi' } }, { id: 'b', question: 'down', private: { secret: 'fig' } }, { id: 'c', question: 'bad', private: { secret: 'fig' } }] }),
  tools: [{ name: 'peek', description: 'd', parameters: { type: 'object' }, call(args: any, task) {
    if (args.query === 'down') throw new InfraError('tool', 'the peek service is down');
    if (args.query === 'bad') throw new Error('no such query');
    return task.private.secret; } }],
  verify: (task, r) => r.finalAnswer === task.private.secret,
  diagnostics: (task, r) => ({ calls: r.modelCalls.length, termination: r.termination }),
});`,
  });
  const domain = await load(dir, { module: './domain/index.ts' });
  try {
    const trajs = await rollAll(domain, dir, (q) => q.split(' ').pop()!);
    const by = Object.fromEntries(trajs.map((t) => [t.taskId, t]));
    assert.equal(by.a.verdict.pass, true, by.a.verdict.reason);
    assert.deepEqual(by.a.diagnostics, { calls: 1, termination: 'answered' });
    assert.equal(by.b.termination, 'infra_error');
    assert.equal(by.b.infra?.source, 'tool');
    assert.match(by.b.infra!.message, /tool 'peek' \(task 'b'\): the peek service is down/);
    // Any other throw is the tool's answer to the harness, which the model may read: its own words, no engine paths.
    const toolEvent = by.c.events.find((e) => e.type === 'tool') as { message?: string } | undefined;
    assert.equal(toolEvent?.message, 'error: no such query');
    assert.notEqual(by.c.termination, 'infra_error');
  } finally {
    await domain.close();
  }
});

const DATA_ROWS = [
  '{"id": "1", "question": "What is 2 + 2 ?", "answer": "4", "split": "val"}',
  '{"id": "2", "question": "What is 3 + 3 ?", "answer": "6", "split": "val"}',
  '{"id": "3", "question": "What is 1 + 1 ?", "answer": "2"}',
];

test('a data-only domain with an HTTP tool on 127.0.0.1: only mapped private fields are sent; a tool endpoint that is down is an infra failure', async () => {
  const bodies: unknown[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    let b = '';
    req.on('data', (d) => (b += d));
    req.on('end', () => {
      bodies.push(JSON.parse(b));
      res.end(`looked up: ${JSON.parse(b).query}`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const deadPort = (closed.address() as AddressInfo).port;
  await new Promise<void>((r) => closed.close(() => r()));
  try {
    for (const [url, up] of [
      [`http://127.0.0.1:${port}/lookup`, true],
      [`http://127.0.0.1:${deadPort}/lookup`, false],
    ] as const) {
      const dir = project({ ...TOOL_HARNESS, 'tasks.jsonl': DATA_ROWS.join('\n') + '\n' });
      const data = {
        tasks: 'tasks.jsonl',
        verifier: { kind: 'numeric' },
        tools: [{ name: 'lookup', description: 'looks things up', url, privateArgs: { row_id: 'id' }, timeoutMs: 5000 }],
      };
      const domain = await load(dir, { data });
      const trajs = await rollAll(domain, dir, (q) => (/\+ (\d)/.exec(q) ? String(2 * Number(/\+ (\d)/.exec(q)![1])) : 'x'));
      assert.equal(trajs.length, 2);
      for (const t of trajs) {
        if (up) {
          assert.equal(t.termination, 'answered', t.terminationDetail);
          assert.equal(t.verdict.pass, true, t.verdict.reason);
          assert.match(t.events.find((e) => e.type === 'tool')!.observation!, /^looked up: What is/);
        } else {
          assert.equal(t.termination, 'infra_error');
          assert.equal(t.infra?.source, 'tool');
          assert.match(t.infra!.message, /cannot be reached \(ECONNREFUSED\)/);
        }
      }
    }
    assert.equal(bodies.length, 2);
    for (const b of bodies) assert.deepEqual(Object.keys(b as object).sort(), ['query', 'row_id'], 'the answer and other private fields are never sent');
  } finally {
    server.close();
  }
});

test('a broken task row is an InputError naming file:line and field (JSONL, CSV); per-split files; answers lists', async () => {
  const dir = project({
    'bad.jsonl': `${DATA_ROWS[0]}\n\n{"id": "9", "question": "", "answer": "1"}\n`,
    'bad.csv': 'id,question,answer\n1,What is 1 + 1 ?,2\n2,What is 2 + 2 ?,\n',
    'dup.jsonl': `${DATA_ROWS[0]}\n${DATA_ROWS[0]}\n`,
    'words.csv': 'id,question,answer\n1,What is 6 + 7 ?,13\n2,What is 6 + 8 ?,fourteen\n',
    'rx.csv': 'id,question,answer\n1,Name a colour,(red|blue\n',
    'badsplit.jsonl': '{"id": "1", "question": "q", "answer": "a", "split": "train"}\n',
    'val.jsonl':
      '{"id": "v1", "question": "q1", "golden_answers": ["Paris", "paris city"]}\n{"id": "v2", "question": "q2", "golden_answers": "[\\"Rome\\"]"}\n',
    'test.jsonl': '{"id": "t1", "question": "q3", "golden_answers": ["Oslo"]}\n',
  });
  const data = (tasks: unknown, extra: object = {}) => ({ data: { tasks, verifier: { kind: 'normalised-em' }, ...extra } });
  await assert.rejects(
    load(dir, data('bad.jsonl')),
    (e: unknown) => e instanceof InputError && e.location.line === 3 && e.location.field === 'question' && e.location.file.endsWith('bad.jsonl'),
  );
  await assert.rejects(
    load(dir, data('bad.csv')),
    (e: unknown) => e instanceof InputError && e.location.line === 3 && e.location.field === 'answer' && /task '2'/.test(e.message),
  );
  await assert.rejects(
    load(dir, data('dup.jsonl')),
    (e: unknown) =>
      e instanceof InputError && e.location.line === 2 && e.location.field === 'id' && /duplicate task id '1' \(first at .*dup\.jsonl:1\)/.test(e.message),
  );
  // A gold answer the verifier can never compare is the row's fault, found at load — not an infra failure of every rollout of that task.
  await assert.rejects(
    load(dir, data('words.csv', { verifier: { kind: 'numeric' } })),
    (e: unknown) =>
      e instanceof InputError && e.location.line === 3 && e.location.field === 'answer' && /"fourteen" is not a number .*task '2'/.test(e.message),
  );
  await assert.rejects(
    load(dir, data('rx.csv', { verifier: { kind: 'regex' } })),
    (e: unknown) => e instanceof InputError && e.location.line === 2 && /not a regular expression/.test(e.message),
  );
  // A misspelt column in privateArgs (sent as null on every call) or in fields.meta (never shown) is found at load.
  await assert.rejects(
    load(
      dir,
      data('words.csv', {
        verifier: { kind: 'exact' },
        tools: [{ name: 'look', description: 'd', url: 'http://127.0.0.1:9/x', privateArgs: { gold: 'answr' } }],
      }),
    ),
    (e: unknown) => e instanceof InputError && e.location.line === 2 && e.location.field === 'answr' && /tool 'look' sends this field/.test(e.message),
  );
  await assert.rejects(
    load(dir, data('words.csv', { verifier: { kind: 'exact' }, fields: { meta: ['topic'] } })),
    (e: unknown) => e instanceof InputError && e.location.field === 'fields.meta' && /no row of .*words\.csv has the column 'topic'/.test(e.message),
  );
  await assert.rejects(
    load(dir, data('badsplit.jsonl')),
    (e: unknown) => e instanceof InputError && e.location.field === 'split' && /unknown split "train"/.test(e.message),
  );
  const d = await load(dir, data({ val: 'val.jsonl', test: 'test.jsonl' }, { fields: { answers: 'golden_answers', meta: [] } }));
  assert.deepEqual(
    d.tasks('val').map((t) => t.id),
    ['v1', 'v2'],
  );
  assert.deepEqual(
    d.tasks('test').map((t) => t.id),
    ['t1'],
  );
  assert.equal(d.tasks('weight').length, 0);
  const [v1, v2] = d.tasks('val');
  assert.equal((await d.verify(v1, rollout('The paris city.'))).pass, true);
  assert.equal((await d.verify(v2, rollout('rome'))).pass, true, 'a JSON-encoded list (as some CSV exports have) is a list');
  assert.equal((await d.verify(v2, rollout('milan'))).pass, false);
  assert.deepEqual(v1.public, { id: 'v1', question: 'q1', meta: {} }, 'nothing private in the public half');
});

test('rows without a split spread over all four splits by a stable hash of their id', async () => {
  const rows = Array.from({ length: 200 }, (_, i) => JSON.stringify({ id: `q-${i}`, question: `q ${i}`, answer: 'a' })).join('\n');
  const dir = project({ 'tasks.jsonl': rows });
  const a = await load(dir, { data: { tasks: 'tasks.jsonl', verifier: { kind: 'exact' } } });
  const b = await load(dir, { data: { tasks: 'tasks.jsonl', verifier: { kind: 'exact' } } });
  const sizes = a.splitSizes;
  assert.deepEqual(
    b.tasks('val').map((t) => t.id),
    a.tasks('val').map((t) => t.id),
  );
  assert.ok(sizes.weight > 90 && sizes.weight < 150 && sizes.harness > 10 && sizes.val > 10 && sizes.test > 5, JSON.stringify(sizes));
});

test('command verifiers (python): JSON in, verdict out; a crash, bad output or a hang is an InfraError naming the command and task', async () => {
  const dir = project({
    'verify.py': `import json, sys, time
d = json.load(sys.stdin)
ans = (d["answer"] or "").strip()
tid = d["task"]["id"]
if tid == "crash": sys.exit(3)
if tid == "junk": print("not json"); sys.exit(0)
if tid == "hang": time.sleep(30)
gold = d["task"]["private"]["answers"][0]
print("some log line")
print(json.dumps({"pass": ans == gold, "score": 1.0 if ans == gold else 0.0, "extracted": ans, "reason": "py says " + str(ans == gold) + " after " + str(len(d["modelCalls"])) + " calls"}))
`,
    'tasks.jsonl': ['ok', 'crash', 'junk', 'hang'].map((id) => JSON.stringify({ id, question: `q ${id}`, answer: '42', split: 'val' })).join('\n'),
  });
  const d = await load(dir, { data: { tasks: 'tasks.jsonl', verifier: { kind: 'command', command: ['python3', 'verify.py'], timeoutMs: 1500 } } });
  const task = (id: string) => d.tasks('val').find((t) => t.id === id)!;
  assert.deepEqual(await d.verify(task('ok'), rollout('42')), { pass: true, score: 1, extracted: '42', reason: 'py says True after 1 calls' });
  assert.equal((await d.verify(task('ok'), rollout('41'))).pass, false);
  const infra = (re: RegExp) => (e: unknown) =>
    e instanceof InfraError && e.source === 'verifier' && /verifier command `python3 verify\.py`/.test((e as Error).message) && re.test((e as Error).message);
  await assert.rejects(Promise.resolve(d.verify(task('crash'), rollout('42'))), infra(/task 'crash'.*exited with 3/));
  await assert.rejects(Promise.resolve(d.verify(task('junk'), rollout('42'))), infra(/task 'junk'.*not a verdict JSON: "not json"/));
  const t0 = Date.now();
  await assert.rejects(Promise.resolve(d.verify(task('hang'), rollout('42'))), infra(/task 'hang'.*no verdict within 1500 ms \(killed\)/));
  assert.ok(Date.now() - t0 < 5000);
  assert.equal(d.limits.verifierTimeoutMs, 3500, "the runtime backstop sits past the command's own deadline");
  // A command verifier is code: refused in an untrusted workspace.
  await assert.rejects(
    load(dir, { data: { tasks: 'tasks.jsonl', verifier: { kind: 'command', command: ['python3', 'verify.py'] } } }, false),
    /trusted workspace/,
  );
});

test('the worked examples: domain check passes, and a short eval on the embedded model runs end to end (CLI)', async () => {
  const { spawnSync } = await import('node:child_process');
  const dev = path.join(REPO, 'src', 'cli', 'dev.ts');
  const tsx = path.join(REPO, 'node_modules', 'tsx', 'dist', 'esm', 'index.mjs');
  const whale = (args: string[], cwd: string) => spawnSync(process.execPath, ['--import', tsx, dev, ...args], { cwd, encoding: 'utf8', timeout: 240_000 });
  for (const example of ['code-domain', 'data-domain']) {
    const dir = mkdtempSync(path.join(tmpdir(), `whale-${example}-`));
    cpSync(path.join(REPO, 'examples', example), dir, { recursive: true });
    const check = whale(['domain', 'check'], dir);
    assert.equal(check.status, 0, check.stderr + check.stdout);
    assert.match(check.stdout, /gold answers: (\d+)\/\1 pass \(100\.0%\)/);
    assert.match(check.stdout, /a wrong answer .*: 0\/\d+ pass/);
    const ev = whale(['eval', '--k', '1', '--limit', '6', '--json'], dir);
    assert.equal(ev.status, 0, ev.stderr);
    const s = JSON.parse(ev.stdout) as { rollouts: number; tasks: number; terminations: Record<string, number>; trajectoriesFile: string };
    assert.equal(s.rollouts, 6);
    assert.equal(s.tasks, 6);
    assert.equal(s.terminations.infra_error ?? 0, 0, JSON.stringify(s.terminations));
    const { readFileSync } = await import('node:fs');
    const trajs = readFileSync(s.trajectoriesFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Trajectory);
    assert.equal(trajs.length, 6);
    for (const t of trajs) {
      assert.ok(t.modelCalls.length >= 1, 'the embedded model was called');
      assert.ok(t.verdict.reason.length > 0);
      if (example === 'code-domain' && t.termination === 'answered')
        assert.equal(typeof t.diagnostics?.turns, 'number', "the module's diagnostics are on the trajectory");
    }
  }
});

test('whale domain new/check/domains: scaffolds both kinds; a verifier that accepts a wrong answer or rejects a gold one fails the check (exit 1 naming tasks); bad input exits 2', async () => {
  const { spawnSync } = await import('node:child_process');
  const { readFileSync } = await import('node:fs');
  const dev = path.join(REPO, 'src', 'cli', 'dev.ts');
  const tsx = path.join(REPO, 'node_modules', 'tsx', 'dist', 'esm', 'index.mjs');
  const whale = (args: string[], cwd: string) => spawnSync(process.execPath, ['--import', tsx, dev, ...args], { cwd, encoding: 'utf8', timeout: 240_000 });
  const dir = mkdtempSync(path.join(tmpdir(), 'whale-domain-new-'));
  let r = whale(['domain', 'new', 'mine'], dir);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(readFileSync(path.join(dir, 'whale.config.json'), 'utf8')).domain, { module: './domains/mine/index.ts' });
  r = whale(['domain', 'new', 'tabular', '--data'], dir);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /"domain": \{"data":".\/domains\/tabular\/domain.json"\}/);
  r = whale(['domain', 'check', 'tabular'], dir);
  assert.equal(r.status, 0, r.stderr + r.stdout);
  r = whale(['domain', 'check', 'kbqa', '--limit', '20'], dir);
  assert.equal(r.status, 0, r.stderr + r.stdout);
  r = whale(['domains', '--json'], dir);
  const listed = JSON.parse(r.stdout) as { builtins: { id: string }[]; own: { name: string; kind: string }[]; configured: string };
  assert.ok(listed.builtins.some((b) => b.id === 'kbqa'));
  assert.deepEqual(
    listed.own.map((o) => `${o.name}:${o.kind}`),
    ['mine:code', 'tabular:data'],
  );
  assert.equal(listed.configured, './domains/mine/index.ts');
  // A too lenient verifier: every answer matches.
  const dj = path.join(dir, 'domains', 'tabular', 'domain.json');
  writeFileSync(
    dj,
    readFileSync(dj, 'utf8')
      .replace(/"verifier": \{[^}]*\}/, '"verifier": { "kind": "regex", "flags": "s" }')
      .replace('"tasks": "tasks.jsonl"', '"tasks": "lenient.jsonl"'),
  );
  writeFileSync(
    path.join(dir, 'domains', 'tabular', 'lenient.jsonl'),
    '{"id": "any", "question": "q", "answer": ".*", "topic": "t"}\n{"id": "strict", "question": "q", "answer": "\\\\d+", "topic": "t"}\n',
  );
  r = whale(['domain', 'check', 'tabular'], dir);
  assert.equal(r.status, 1);
  assert.match(r.stdout, /ACCEPTED any/);
  assert.match(r.stdout, /FAIL strict/, 'the gold answer \\d+ does not match itself as a regex');
  assert.match(r.stderr, /domain check failed: strict, any/);
  r = whale(['domain', 'check', 'nosuch'], dir);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /no domain 'nosuch'/);
  r = whale(['domain', 'new', 'Bad Name'], dir);
  assert.equal(r.status, 2);
  writeFileSync(dj, '{ "tasks": "tasks.jsonl", "verifier": { "kind": "numeric", "tolerance": -1 } }');
  r = whale(['domain', 'check', 'tabular'], dir);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /domain\.json:1:\d+: verifier\.tolerance: /);
});

test('a run on a code domain records the module and its code hash, resumes from the snapshot, and warns when the code changed (whale step, harness-only)', async () => {
  const { spawnSync } = await import('node:child_process');
  const { readFileSync, readdirSync } = await import('node:fs');
  const dev = path.join(REPO, 'src', 'cli', 'dev.ts');
  const tsx = path.join(REPO, 'node_modules', 'tsx', 'dist', 'esm', 'index.mjs');
  const whale = (args: string[], cwd: string) => spawnSync(process.execPath, ['--import', tsx, dev, ...args], { cwd, encoding: 'utf8', timeout: 400_000 });
  const dir = mkdtempSync(path.join(tmpdir(), 'whale-code-run-'));
  cpSync(path.join(REPO, 'examples', 'code-domain'), dir, { recursive: true });
  let r = whale(['step', '--method', 'harness-only'], dir);
  assert.equal(r.status, 0, r.stderr);
  const [runId] = readdirSync(path.join(dir, '.whale', 'runs'));
  const started = readFileSync(path.join(dir, '.whale', 'runs', runId, 'journal.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string; domain?: string; domainSource?: { kind: string; module: string; codeHash: string } })
    .find((e) => e.type === 'run_started')!;
  assert.equal(started.domain, 'arith');
  assert.equal(started.domainSource?.kind, 'module');
  assert.equal(started.domainSource?.module, path.join(dir, 'domains', 'arith', 'index.ts'));
  assert.match(started.domainSource!.codeHash, /^[0-9a-f]{64}$/);
  assert.deepEqual(JSON.parse(readFileSync(path.join(dir, '.whale', 'runs', runId, 'config.json'), 'utf8')).domain, {
    module: './domains/arith/index.ts',
    options: {},
  });
  const file = path.join(dir, 'domains', 'arith', 'index.ts');
  writeFileSync(file, readFileSync(file, 'utf8').replace('A worked example of a code domain.', 'A worked example of a code domain (edited).'));
  r = whale(['step', '--method', 'harness-only'], dir);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, new RegExp(`warning: the domain module .*index\\.ts changed since run ${runId} started`));
  assert.match(r.stdout, new RegExp(`run ${runId}: schedule complete`));
  assert.deepEqual(readdirSync(path.join(dir, '.whale', 'runs')), [runId], 'the second step continued the same run');
});

test("a user domain's cached results are reused only while its verifier and answer key are unchanged", async () => {
  const { spawnSync } = await import('node:child_process');
  const { readFileSync } = await import('node:fs');
  const dev = path.join(REPO, 'src', 'cli', 'dev.ts');
  const tsx = path.join(REPO, 'node_modules', 'tsx', 'dist', 'esm', 'index.mjs');
  const evalJson = (cwd: string) => {
    const r = spawnSync(process.execPath, ['--import', tsx, dev, 'eval', '--k', '1', '--limit', '3', '--json'], { cwd, encoding: 'utf8', timeout: 240_000 });
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout) as { cacheHit: boolean; newRollouts: number };
  };
  const dir = mkdtempSync(path.join(tmpdir(), 'whale-data-cache-'));
  cpSync(path.join(REPO, 'examples', 'data-domain'), dir, { recursive: true });
  assert.equal(evalJson(dir).newRollouts, 3);
  assert.equal(evalJson(dir).cacheHit, true);
  const csv = path.join(dir, 'domains', 'capitals', 'tasks.csv');
  writeFileSync(csv, readFileSync(csv, 'utf8').replace(',Paris,', ',Lutetia,'));
  const after = evalJson(dir);
  assert.equal(after.cacheHit, false, 'an edited answer key is not answered from the cache');
  assert.equal(after.newRollouts, 3);
});

test('a module whose tasks() never returns is stopped at loadTimeoutMs with a clear error', async () => {
  const dir = project({
    'stuck.ts': `import { defineDomain } from 'whale/domain';
export default defineDomain({ id: 'stuck', title: 't', description: 'd', h0: '.', searchSpace: 's', verify: () => true, tasks: () => { for (;;) {} } });`,
  });
  const t0 = Date.now();
  await assert.rejects(
    load(dir, { module: 'stuck.ts', loadTimeoutMs: 1500 }),
    (e: unknown) => e instanceof WhaleError && /stuck\.ts: the domain did not load within 1500 ms/.test((e as Error).message),
  );
  assert.ok(Date.now() - t0 < 20_000);
});
