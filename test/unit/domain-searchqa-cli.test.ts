/**
 * SearchQA from the command line: `whale init --domain searchqa` + `whale run --method harness-only`
 * on the embedded backend (the tiny model does not know this text: scores near zero are expected),
 * `whale report` with its by-source table, `whale retriever serve` as a process, and `whale data
 * fetch searchqa` against a local HTTP server that drops a download half-way (resumed with Range).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { loadDomain } from '../../src/domains/index.js';
import { SEARCHQA_REMOTE, searchqaOptionsFor } from '../../src/domains/searchqa/fetch.js';
import { closeEmbeddedRetrievers, sampleDir } from '../../src/domains/searchqa/index.js';
import { SPLITS } from '../../src/domains/types.js';

const dev = fileURLToPath(new URL('../../src/cli/dev.ts', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/tsx/dist/esm/index.mjs', import.meta.url));
const run = promisify(execFile);

/** Runs the CLI as a child without blocking this process's event loop (the test's servers live here). */
async function whale(args: string[], cwd: string, timeout = 300_000): Promise<{ status: number; out: string }> {
  try {
    const r = await run(process.execPath, ['--import', tsx, dev, ...args], { cwd, encoding: 'utf8', timeout });
    return { status: 0, out: r.stdout + r.stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { status: typeof x.code === 'number' ? x.code : -1, out: (x.stdout ?? '') + (x.stderr ?? '') };
  }
}

test('whale init --domain searchqa, then run --method harness-only on the embedded backend: finishes, no infra errors, report by source', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'whale-sq-cli-'));
  const init = await whale(['init', dir, '--domain', 'searchqa', '--template', 'tiny'], dir);
  assert.equal(init.status, 0, init.out);
  assert.ok(existsSync(join(dir, 'harnesses', 'h0', 'harness.ts')));
  const r = await whale(['run', '--method', 'harness-only', '--config', join(dir, 'whale.config.json')], dir);
  assert.equal(r.status, 0, r.out);
  assert.match(r.out, /schedule complete/);
  const results = join(dir, '.whale', 'results');
  const files = readdirSync(results, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('trajectories.jsonl'));
  const trajs = files.flatMap((f) =>
    readFileSync(join(results, f), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { termination: string; diagnostics?: Record<string, unknown>; modelCalls: { usage: { promptTokens: number } }[] }),
  );
  assert.ok(trajs.length >= 40, `${trajs.length} trajectories`);
  // The prompts outgrow the tiny model's 256-token context: the backend keeps their tail instead of failing.
  assert.deepEqual(trajs.filter((t) => t.termination === 'infra_error').length, 0);
  assert.ok(trajs.some((t) => t.modelCalls[0].usage.promptTokens > 100));
  for (const t of trajs) assert.ok(typeof t.diagnostics?.data_source === 'string' && 'retrieval_hit' in t.diagnostics);
  const rep = await whale(['report', '--config', join(dir, 'whale.config.json')], dir);
  assert.equal(rep.status, 0, rep.out);
  const md = readFileSync(/\S+report\.md/.exec(rep.out)![0], 'utf8');
  assert.match(md, /By data source \(sealed test evaluation/);
  assert.match(
    md,
    /\| source \| rollouts \| pass \(%\) \| answer_extracted \(%\) \| em \(mean\) \| f1 \(mean\) \| format_ok \(%\) \| passages_seen \(mean\) \| retrieval_hit \(%\) \| search_calls \(mean\) \|/,
  );
  assert.match(md, /\| (nq|triviaqa|popqa|hotpotqa|2wikimultihopqa|musique|bamboogle) \| \d+ \| \d+\.\d \|/);
});

test('whale retriever serve: answers Search-R1 requests until SIGTERM; a broken corpus is exit 2 naming the line', async () => {
  const child = spawn(process.execPath, ['--import', tsx, dev, 'retriever', 'serve', '--corpus', join(sampleDir(), 'corpus.jsonl'), '--port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        const m = /POST (http:\/\/127\.0\.0\.1:\d+\/retrieve)/.exec(out);
        if (m) resolve(m[1]);
      });
      child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
    });
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ queries: ['the pet of Lodos'], topk: 3, return_scores: true }),
    });
    const body = (await res.json()) as { result: { document: { contents: string }; score: number }[][] };
    assert.equal(body.result[0].length, 3);
    assert.match(body.result[0][0].document.contents, /^"Lodos"\nLodos is a person \. the pet of Lodos is \w+ \.$/);
  } finally {
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
  }
  const dir = mkdtempSync(join(tmpdir(), 'whale-sq-serve-'));
  writeFileSync(join(dir, 'c.jsonl'), '{"id": "1", "contents": "\\"A\\"\\ntext"}\n{"id": "2", "contents": ""}\n');
  const bad = await whale(['retriever', 'serve', '--corpus', 'c.jsonl', '--port', '0'], dir, 60_000);
  assert.equal(bad.status, 2, bad.out);
  assert.match(bad.out, /c\.jsonl:2: contents: must be a non-empty string/);
  assert.doesNotMatch(bad.out, /at .*\.ts:\d+/, 'no stack trace');
});

test('whale data fetch searchqa: downloads every QA file from an HF-style endpoint, resumes a dropped download with Range', async () => {
  const content = new Map<string, Buffer>();
  for (const f of SEARCHQA_REMOTE.filter((x) => x.group === 'data')) {
    const set = f.file.split('/')[0];
    const rows = Array.from({ length: 40 }, (_, i) =>
      JSON.stringify({
        id: `${f.file.includes('train') ? 'train' : 'test'}_${i}`,
        question: `question ${i} of ${set}?`,
        golden_answers: [`answer ${i}`],
        metadata: {},
      }),
    );
    content.set(`/datasets/${f.repo}/resolve/main/${f.file}`, Buffer.from(rows.join('\n') + '\n'));
  }
  const seen: { path: string; range?: string }[] = [];
  let dropped = false;
  const server = createServer((req: IncomingMessage, res) => {
    const body = content.get(req.url ?? '');
    seen.push({ path: req.url ?? '', ...(req.headers.range ? { range: req.headers.range } : {}) });
    if (!body) {
      res.writeHead(404).end('Entry not found');
      return;
    }
    const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    if (m) {
      const from = Number(m[1]);
      res.writeHead(206, { 'content-length': body.length - from, 'content-range': `bytes ${from}-${body.length - 1}/${body.length}` }).end(body.subarray(from));
      return;
    }
    if (!dropped && req.url!.endsWith('musique/dev.jsonl')) {
      // The connection drops after half the file.
      dropped = true;
      res.writeHead(200, { 'content-length': body.length });
      res.write(body.subarray(0, body.length >> 1), () => setTimeout(() => res.socket?.destroy(), 50));
      return;
    }
    res.writeHead(200, { 'content-length': body.length }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const dir = mkdtempSync(join(tmpdir(), 'whale-sq-fetch-'));
  try {
    const first = await whale(['data', 'fetch', 'searchqa', '--dir', 'data', '--endpoint', endpoint], dir, 120_000);
    assert.equal(first.status, 1, first.out);
    assert.match(first.out, /musique\/dev\.jsonl.*(interrupted|ended early).*run again to resume/s);
    assert.ok(existsSync(join(dir, 'data', 'flashrag', 'musique', 'dev.jsonl.part')));
    const second = await whale(['data', 'fetch', 'searchqa', '--dir', 'data', '--endpoint', endpoint], dir, 120_000);
    assert.equal(second.status, 0, second.out);
    assert.match(second.out, /resumed .*musique\/dev\.jsonl/);
    assert.match(second.out, /done .*nq\/train\.jsonl/);
    const resumed = seen.filter((s) => s.path.endsWith('musique/dev.jsonl'));
    assert.equal(resumed.length, 2);
    assert.match(resumed[1].range ?? '', /^bytes=\d+-$/);
    for (const f of SEARCHQA_REMOTE.filter((x) => x.group === 'data')) {
      assert.deepEqual(readFileSync(join(dir, 'data', f.local)), content.get(`/datasets/${f.repo}/resolve/main/${f.file}`));
    }
    // The options it prints load the downloaded sets into the four splits.
    const d = await loadDomain('searchqa', searchqaOptionsFor('data'), { baseDir: dir });
    // 80 train rows: half to the harness split (fewer than the 256 asked for); 280 test rows: 140 val, 140 test.
    assert.deepEqual(
      SPLITS.map((s) => d.tasks(s).length),
      [40, 40, 140, 140],
    );
    assert.match(second.out, /"trainFiles":\["data\/flashrag\/nq\/train\.jsonl","data\/flashrag\/hotpotqa\/train\.jsonl"\]/);
    const bad = await whale(['data', 'fetch', 'searchqa', '--what', 'everything'], dir, 60_000);
    assert.equal(bad.status, 2);
    assert.match(bad.out, /--what: unknown part\(s\) everything \(parts of searchqa: data, corpus, index\)/);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    await closeEmbeddedRetrievers();
  }
});
