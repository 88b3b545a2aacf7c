/** `whale data fetch math` against a local HTTP server laid out like the Hugging Face hub (…/datasets/<repo>/resolve/main/<file>). */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeDapoParquet } from '../../scripts/gen-math-sample.js';
import { DOMAIN_DATA, fetchDomainData, remoteUrl } from '../../src/domains/data/fetch.js';
import { loadDomain } from '../../src/domains/index.js';
import { REPO } from './domain-helpers.js';

const dev = fileURLToPath(new URL('../../src/cli/dev.ts', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/tsx/dist/esm/index.mjs', import.meta.url));

let server: Server;
let endpoint: string;
const hits: string[] = [];
const files = new Map<string, Buffer>();

before(async () => {
  const src = mkdtempSync(path.join(tmpdir(), 'whale-hub-'));
  // DAPO's AIME-2024 layout: the DAPO columns, each problem repeated (DAPO repeats each 32 times).
  const aime = path.join(src, 'aime-2024.parquet');
  const problems = ['Find the remainder when $2^{10}$ is divided by $1000$.', 'How many positive divisors does $12$ have?'];
  const rows = [0, 1, 0, 1, 0, 1];
  writeDapoParquet(
    aime,
    rows.map((i, k) => ({ prompt: problems[i], answer: ['24', '6'][i], index: `aime-${k}` })),
  );
  files.set(
    '/datasets/BytedTsinghua-SIA/DAPO-Math-17k/resolve/main/data/dapo-math-17k.parquet',
    readFileSync(path.join(REPO, 'resources', 'data', 'math', 'dapo-math-sample.parquet')),
  );
  files.set('/datasets/BytedTsinghua-SIA/AIME-2024/resolve/main/data/aime-2024.parquet', readFileSync(aime));
  files.set(
    '/datasets/math-ai/aime25/resolve/main/test.jsonl',
    Buffer.from(
      ['{"problem": "Find $x$ if $x+1=3$.", "answer": "2", "id": "0"}', '{"problem": "What is $7 \\\\cdot 6$?", "answer": "42", "id": "1"}'].join('\n') + '\n',
    ),
  );
  server = createServer((req, res) => {
    hits.push(req.url ?? '');
    if (req.url === '/datasets/broken/resolve/main/cut.bin') {
      res.writeHead(200, { 'content-length': '1000' });
      res.write(Buffer.alloc(100));
      setTimeout(() => res.destroy(), 20);
      return;
    }
    const body = files.get(req.url ?? '');
    if (!body) return void res.writeHead(404).end('not found');
    res.writeHead(200, { 'content-length': body.length }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  endpoint = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
after(() => server.close());

function whale(args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, ['--import', tsx, dev, ...args], { cwd });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    c.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    c.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

test("the URLs are the hub's resolve URLs", () => {
  assert.equal(remoteUrl(DOMAIN_DATA.math.files[0]), 'https://huggingface.co/datasets/BytedTsinghua-SIA/DAPO-Math-17k/resolve/main/data/dapo-math-17k.parquet');
});

test('whale data fetch math downloads the three files, prints options that load as the math domain; a second fetch downloads nothing', async () => {
  const cwd = mkdtempSync(path.join(tmpdir(), 'whale-fetch-'));
  const r = await whale(['data', 'fetch', 'math', '--endpoint', endpoint], cwd);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(readdirSync(path.join(cwd, 'data', 'math')).sort(), ['aime-2024.parquet', 'aime-2025.jsonl', 'dapo-math-17k.parquet']);
  assert.ok(
    readFileSync(path.join(cwd, 'data', 'math', 'dapo-math-17k.parquet')).equals(
      readFileSync(path.join(REPO, 'resources', 'data', 'math', 'dapo-math-sample.parquet')),
    ),
  );
  const options = JSON.parse(/"options": (\{.*\}) \}/.exec(r.stdout)?.[1] ?? 'null') as Record<string, unknown>;
  assert.ok(options, r.stdout);
  const d = await loadDomain('math', options, { baseDir: cwd });
  assert.equal(d.splitSizes.harness, 320, 'the sample has fewer rows than the harness share');
  assert.equal(d.splitSizes.val, 2, 'DAPO AIME-2024 repeats deduplicated');
  assert.equal(d.splitSizes.test, 2);
  assert.equal((d.tasks('test')[1].private as { answer: string }).answer, '42');
  const before = hits.length;
  const again = await whale(['data', 'fetch', 'math', '--endpoint', endpoint], cwd);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /done/);
  assert.equal(hits.length, before, 'nothing fetched twice');
});

test('a missing file and a cut-off download fail with the URL, leaving no file behind', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'whale-fetch-bad-'));
  const save = DOMAIN_DATA.math.files;
  try {
    DOMAIN_DATA.math.files = [{ repo: 'nobody/none', file: 'x.parquet', local: 'x.parquet' }];
    await assert.rejects(fetchDomainData('math', { dir, endpoint }), /download of .*nobody\/none.* failed: HTTP 404/);
    DOMAIN_DATA.math.files = [{ repo: 'broken', file: 'cut.bin', local: 'cut.bin' }];
    await assert.rejects(fetchDomainData('math', { dir, endpoint }), /download of .*cut\.bin (interrupted|ended early)/);
    assert.equal(existsSync(path.join(dir, 'cut.bin')), false);
  } finally {
    DOMAIN_DATA.math.files = save;
  }
  const r = await whale(['data', 'fetch', 'nosuch'], dir);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /no download for domain 'nosuch'/);
});
