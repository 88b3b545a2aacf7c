/**
 * SearchQA end to end: the shipped h0 in the real harness runtime (sandboxed process, gateway), the
 * real embedded BM25 retriever over HTTP (started by the domain), scripted policies that answer
 * right, wrong, malformed and over budget; a candidate that wants more turns than the domain allows;
 * the retriever down or failing → infra_error, not a wrong answer.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { SandboxLimitsSchema, SamplingSchema } from '../../src/core/config.js';
import type { ChatMessage, Trajectory } from '../../src/core/trajectory.js';
import { loadDomain } from '../../src/domains/index.js';
import { searchqaPrivate } from '../../src/domains/searchqa/data.js';
import { closeEmbeddedRetrievers } from '../../src/domains/searchqa/index.js';
import type { Domain, Task } from '../../src/domains/types.js';
import { HarnessRuntime } from '../../src/harness/runtime.js';
import { ScriptedBackend, type Script } from '../../src/harness/testing/scriptedBackend.js';
import { REPO } from './domain-helpers.js';

const H0 = path.join(REPO, 'resources', 'harnesses', 'searchqa-h0');
after(() => closeEmbeddedRetrievers());

function goldOf(domain: Domain, messages: ChatMessage[]): string {
  const user = messages.find((m) => m.role === 'user')!.content;
  const task = domain.tasks('val').find((t) => user.includes(t.public.question))!;
  return searchqaPrivate(task).answers[0];
}

const searchCall = (q: string) => `<tool_call>{"name": "search", "arguments": {"query_list": [${JSON.stringify(q)}], "topk": 5}}</tool_call>`;

async function roll(
  domain: Domain,
  script: Script,
  tasks: Task[],
  opts: { harness?: string; maxTurns?: number } = {},
): Promise<{ trajs: Trajectory[]; backend: ScriptedBackend }> {
  const backend = new ScriptedBackend(script);
  const limits = SandboxLimitsSchema.parse({ maxTurns: opts.maxTurns ?? 16 });
  const rt = new HarnessRuntime({
    domain,
    backend,
    limits,
    sampling: SamplingSchema.parse({}),
    concurrency: 4,
    cacheDir: mkdtempSync(path.join(tmpdir(), 'whale-sq-rt-')),
  });
  try {
    const prepared = await rt.prepare(opts.harness ?? H0);
    const trajs = await rt.rolloutMany(
      prepared,
      tasks.map((task, i) => ({ task, sampleIndex: 0, seed: i })),
    );
    return { trajs, backend };
  } finally {
    await rt.close();
  }
}

test('searchqa h0 in the real runtime: right answers pass with EM, diagnostics per rollout, the paper contract on the wire', async () => {
  const domain = await loadDomain('searchqa', { sizes: { val: 24 } });
  const tasks = domain.tasks('val');
  const { trajs, backend } = await roll(
    domain,
    (messages, _req, _i) => {
      const question = /Question: (.*)/.exec(messages.find((m) => m.role === 'user')!.content)![1];
      return messages.some((m) => m.role === 'tool') ? `I found it. <answer> ${goldOf(domain, messages)} </answer>` : searchCall(question);
    },
    tasks,
  );
  assert.equal(trajs.length, 24);
  for (const t of trajs) {
    assert.equal(t.termination, 'answered', t.terminationDetail);
    assert.equal(t.verdict.pass, true, t.verdict.reason);
    assert.match(t.verdict.reason, /^exact match \(F1 1\.00\)$/);
    const d = t.diagnostics!;
    assert.equal(d.data_source, t.taskId.split(':')[0]);
    assert.equal(d.format_ok, true);
    assert.equal(d.answer_extracted, true);
    assert.equal(d.search_calls, 1);
    assert.equal(d.em, 1);
    assert.equal(d.f1, 1);
    // The harness asked for topk 1 although the model said 5 (h0: top-1 whatever topk says).
    const ev = t.events.find((e) => e.type === 'tool')!;
    assert.deepEqual((ev.args as { topk: number }).topk, 1);
    // Retrieval hit is true exactly when a returned passage holds the gold answer as a word.
    const gold = searchqaPrivate(tasks.find((x) => x.id === t.taskId)!).answers[0].toLowerCase();
    const passages = (JSON.parse(ev.observation!) as { results: { passages: { contents: string }[] }[] }).results[0].passages;
    assert.equal(passages.length, 1);
    assert.equal(
      d.retrieval_hit,
      passages.some((p) => ` ${p.contents.toLowerCase().replace(/[.,"]/g, ' ')} `.includes(` ${gold} `)),
    );
  }
  // Two model calls each; the first carries the paper's system prompt and the answer-tag instruction.
  assert.equal(backend.requests.length, 48);
  const first = backend.requests.find((r) => r.messages.length === 2)!;
  assert.deepEqual(first.messages[0], { role: 'system', content: 'Answer factual questions using search when needed.' });
  assert.match(first.messages[1].content, /inside <answer> and <\/answer>/);
  // The tool message shows one passage, Search-R1 style, at most 200 tokens.
  const second = backend.requests.find((r) => r.messages.some((m) => m.role === 'tool'))!;
  const shown = second.messages.find((m) => m.role === 'tool')!.content;
  assert.match(shown, /^Doc 1\(Title: \w+\) /);
  assert.ok(shown.split(/\s+/).length <= 202);
  // BM25 finds the fact of a 1-hop question: the hit rate on 1-hop sources is high, on 2-hop lower (one search).
  const rate = (multi: boolean) => {
    const xs = trajs.filter((t) => ['hotpotqa', '2wikimultihopqa', 'musique', 'bamboogle'].includes(String(t.diagnostics!.data_source)) === multi);
    return xs.filter((t) => t.diagnostics!.retrieval_hit).length / Math.max(1, xs.length);
  };
  assert.ok(rate(false) >= 0.5, `1-hop retrieval hit ${rate(false)}`);
});

test('searchqa h0: wrong, malformed and over-budget replies get their verdicts and diagnostics', async () => {
  const domain = await loadDomain('searchqa', { sizes: { val: 6 } });
  const tasks = domain.tasks('val');
  const wrong = await roll(domain, () => '<answer> Atlantis </answer>', tasks);
  for (const t of wrong.trajs) {
    assert.equal(t.termination, 'answered');
    assert.equal(t.verdict.pass, false);
    assert.match(t.verdict.reason, /^expected .+, got atlantis \(F1 0\.00\)$/);
    assert.deepEqual(
      { ...t.diagnostics, data_source: 'x' },
      { data_source: 'x', retrieval_hit: false, format_ok: true, answer_extracted: true, search_calls: 0, passages_seen: 0, em: 0, f1: 0 },
    );
  }
  // No tags, no search: h0 (strict) gives up after the first turn.
  const malformed = await roll(domain, (messages) => `the answer is ${goldOf(domain, messages)}`, tasks);
  for (const t of malformed.trajs) {
    assert.equal(t.termination, 'no_answer');
    assert.equal(t.verdict.reason, 'no answer');
    assert.equal(t.diagnostics!.format_ok, false);
    assert.equal(t.diagnostics!.answer_extracted, false);
    assert.equal(t.modelCalls.length, 1);
  }
  // A reply longer than the domain's 512 tokens per call is cut before its answer tag.
  const long = await roll(domain, (messages) => `${'word '.repeat(600)}<answer> ${goldOf(domain, messages)} </answer>`, tasks);
  for (const t of long.trajs) {
    assert.equal(t.modelCalls[0].finishReason, 'length');
    assert.equal(t.verdict.pass, false);
    assert.equal(t.diagnostics!.format_ok, false);
  }
  // Searching on every turn: h0's two turns are spent, no answer.
  const searcher = await roll(domain, () => searchCall('Lodos'), tasks);
  for (const t of searcher.trajs) {
    assert.equal(t.termination, 'no_answer');
    assert.equal(t.modelCalls.length, 2);
    assert.equal(t.diagnostics!.search_calls, 1);
  }
});

test('searchqa: a candidate asking for 40 turns is clamped to the domain limit of 16 model calls', async () => {
  const domain = await loadDomain('searchqa', { sizes: { val: 2 } });
  const dir = mkdtempSync(path.join(tmpdir(), 'whale-sq-cand-'));
  cpSync(H0, dir, { recursive: true });
  const manifest = JSON.parse(readFileSync(path.join(dir, 'harness.json'), 'utf8')) as {
    knobs: Record<string, { max?: number }>;
    settings: Record<string, unknown>;
  };
  manifest.knobs.maxTurns.max = 40;
  manifest.settings.maxTurns = 40;
  writeFileSync(path.join(dir, 'harness.json'), JSON.stringify(manifest));
  // The harness reads its limit from ctx.limits; make it ignore that to see the gateway refuse.
  const src = readFileSync(path.join(dir, 'harness.ts'), 'utf8').replace('Math.min(Number(k.maxTurns ?? 2), ctx.limits.maxTurns)', 'Number(k.maxTurns ?? 2)');
  writeFileSync(path.join(dir, 'harness.ts'), src);
  const { trajs } = await roll(domain, () => searchCall('Lodos pet'), domain.tasks('val'), { harness: dir, maxTurns: 40 });
  for (const t of trajs) {
    assert.equal(t.modelCalls.length, 16);
    assert.notEqual(t.termination, 'infra_error');
    assert.equal(t.verdict.pass, false);
  }
});

test('searchqa: the retriever down, or answering 500 or garbage, makes the rollout an infra_error (not a wrong answer)', async () => {
  const dead = createServer();
  await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
  const port = (dead.address() as AddressInfo).port;
  await new Promise<void>((r) => dead.close(() => r()));
  const failing = createServer((req, res) => {
    if (req.url === '/bad/retrieve') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"oops": true}');
      return;
    }
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end('{"detail": "CUDA out of memory"}');
  });
  await new Promise<void>((r) => failing.listen(0, '127.0.0.1', r));
  const fport = (failing.address() as AddressInfo).port;
  try {
    for (const [url, why] of [
      [`http://127.0.0.1:${port}/retrieve`, /unreachable: ECONNREFUSED/],
      [`http://127.0.0.1:${fport}/retrieve`, /HTTP 500.*CUDA out of memory/],
      [`http://127.0.0.1:${fport}/bad/retrieve`, /without a result list per query/],
    ] as const) {
      const domain = await loadDomain('searchqa', {
        files: path.join(REPO, 'resources/domains/searchqa/sample/flashrag/popqa/test.jsonl'),
        retriever: { url },
        sizes: { val: 3 },
      });
      const { trajs } = await roll(
        domain,
        (messages) => (messages.some((m) => m.role === 'tool') ? '<answer> x </answer>' : searchCall('Lodos')),
        domain.tasks('val'),
      );
      assert.equal(trajs.length, 3);
      for (const t of trajs) {
        assert.equal(t.termination, 'infra_error', `${url}: ${t.termination}`);
        assert.equal(t.infra?.source, 'tool');
        assert.match(t.infra!.message, why);
        assert.match(t.verdict.reason, /^infrastructure failure \(not scored\)/);
        assert.equal(t.diagnostics, undefined);
      }
    }
  } finally {
    failing.closeAllConnections();
    await new Promise<void>((r) => failing.close(() => r()));
  }
});

test('searchqa is harness-dominated on the sample: a reader policy solves 2-hop questions only when a candidate gives it 3 turns and 3 passages', async () => {
  const domain = await loadDomain('searchqa');
  const twoHop = [...domain.tasks('val'), ...domain.tasks('test')].filter((t) => / of the (friend|boss) of /.test(t.public.question)).slice(0, 24);
  // A policy that only reads: it searches the question, then the person its passages name, then copies a value it was shown.
  const reader: Script = (messages) => {
    const q = /What is the (\w+) of the (\w+) of (\w+) \?/.exec(messages.find((m) => m.role === 'user')!.content)!;
    const [, attr, rel, name] = q;
    const seen = messages
      .filter((m) => m.role === 'tool')
      .map((m) => m.content)
      .join('\n');
    const middle = new RegExp(`the ${rel} of ${name} is (\\w+)`).exec(seen)?.[1];
    const value = middle ? new RegExp(`the ${attr} of ${middle} is (\\w+)`).exec(seen)?.[1] : undefined;
    if (value) return `<answer> ${value} </answer>`;
    if (middle) return searchCall(`the ${attr} of ${middle}`);
    return searchCall(`the ${rel} of ${name}`);
  };
  const dir = mkdtempSync(path.join(tmpdir(), 'whale-sq-better-'));
  cpSync(H0, dir, { recursive: true });
  const manifest = JSON.parse(readFileSync(path.join(dir, 'harness.json'), 'utf8')) as { settings: Record<string, unknown> };
  Object.assign(manifest.settings, { maxTurns: 3, passagesShown: 3 });
  writeFileSync(path.join(dir, 'harness.json'), JSON.stringify(manifest));
  const passRate = (ts: Trajectory[]) => ts.filter((t) => t.verdict.pass).length / ts.length;
  const h0 = await roll(domain, reader, twoHop);
  const better = await roll(domain, reader, twoHop, { harness: dir });
  assert.equal(passRate(h0.trajs), 0, 'two turns leave no turn to answer after two searches');
  assert.ok(passRate(better.trajs) >= 0.75, `3 turns, 3 passages: ${passRate(better.trajs)}`);
  assert.ok(better.trajs.every((t) => t.termination !== 'infra_error'));
  const hits = (ts: Trajectory[]) => ts.filter((t) => t.diagnostics!.retrieval_hit).length / ts.length;
  assert.ok(hits(better.trajs) > hits(h0.trajs), `retrieval hit ${hits(h0.trajs)} → ${hits(better.trajs)}`);
  console.log(
    `2-hop pass ${passRate(h0.trajs)} → ${passRate(better.trajs)}, retrieval hit ${hits(h0.trajs).toFixed(2)} → ${hits(better.trajs).toFixed(2)} (n=${twoHop.length})`,
  );
});
