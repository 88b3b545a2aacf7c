/**
 * `whale data fetch chess` against a real HTTP server on 127.0.0.1 serving a real .csv.zst (made
 * with the zstd 1.5 command-line tool from the shipped sample: test/fixtures/chess/puzzles.csv.zst;
 * regenerate it with `zstd -19 resources/data/chess/puzzles.csv -o …` when the sample changes).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { main } from '../../src/cli/main.js';
import { CHESS_SAMPLE, createChessDomain } from '../../src/domains/chess/index.js';
import { fetchChessPuzzles } from '../../src/domains/chess/fetch.js';
import { REPO } from './domain-helpers.js';

const ZST = readFileSync(path.join(REPO, 'test', 'fixtures', 'chess', 'puzzles.csv.zst'));
const CSV = readFileSync(CHESS_SAMPLE);
const dir = mkdtempSync(path.join(tmpdir(), 'whale-chess-fetch-'));
let server: Server;
let base = '';
let bytesSent = 0;

before(async () => {
  server = createServer(async (req, res) => {
    const body =
      req.url === '/puzzles.csv.zst' ? ZST : req.url === '/puzzles.csv' ? CSV : req.url === '/truncated.csv.zst' ? ZST.subarray(0, ZST.length - 2000) : null;
    if (!body) {
      res.writeHead(404).end('not found');
      return;
    }
    res.on('error', () => {}); // the client hangs up after --max-rows
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    // Small chunks with pauses: the client must stream, and may hang up early.
    for (let i = 0; i < body.length && !res.destroyed; i += 1024) {
      res.write(body.subarray(i, i + 1024));
      bytesSent += Math.min(1024, body.length - i);
      await new Promise((r) => setTimeout(r, 1));
    }
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a .csv.zst streams through fzstd into the exact CSV, which the chess domain loads', async () => {
  const out = path.join(dir, 'all.csv');
  const r = await fetchChessPuzzles({ url: `${base}/puzzles.csv.zst`, out });
  assert.deepEqual(readFileSync(out), CSV);
  assert.equal(r.compressed, true);
  assert.equal(r.rows, CSV.toString().trim().split('\n').length - 1);
  assert.equal(r.bytesIn, ZST.length);
  const d = await createChessDomain({ files: out });
  assert.equal(d.splitSizes.val, (await createChessDomain({})).splitSizes.val);
});

test('--max-rows keeps the header and the first N puzzles and stops downloading', async () => {
  const out = path.join(dir, 'first.csv');
  bytesSent = 0;
  const r = await fetchChessPuzzles({ url: `${base}/puzzles.csv`, out, maxRows: 10 });
  const lines = readFileSync(out, 'utf8').split('\n');
  assert.deepEqual(lines, [...CSV.toString().split('\n').slice(0, 11), '']);
  assert.equal(r.rows, 10);
  assert.equal(r.compressed, false);
  await new Promise((res) => setTimeout(res, 100));
  assert.ok(bytesSent < CSV.length / 2, `sent ${bytesSent} of ${CSV.length} bytes`);
  const z = await fetchChessPuzzles({ url: `${base}/puzzles.csv.zst`, out: path.join(dir, 'firstz.csv'), maxRows: 25 });
  assert.equal(z.rows, 25);
  assert.equal(readFileSync(path.join(dir, 'firstz.csv'), 'utf8'), CSV.toString().split('\n').slice(0, 26).join('\n') + '\n');
});

test('a missing file or a truncated stream is an error and leaves no file', async () => {
  const out = path.join(dir, 'bad.csv');
  await assert.rejects(fetchChessPuzzles({ url: `${base}/nothing.csv.zst`, out }), /cannot download .*: HTTP 404/);
  await assert.rejects(fetchChessPuzzles({ url: `${base}/truncated.csv.zst`, out }), /cannot read .*truncated/);
  await assert.rejects(fetchChessPuzzles({ url: 'http://127.0.0.1:1/x.csv.zst', out }), /cannot download/);
  assert.equal(existsSync(out), false);
  assert.equal(existsSync(`${out}.part`), false);
});

test('whale data fetch chess: exit 0 with the file written; a bad --max-rows is exit 2', async () => {
  const out = path.join(dir, 'cli', 'lichess_db_puzzle.csv');
  assert.equal(await main(['data', 'fetch', 'chess', '--url', `${base}/puzzles.csv.zst`, '--dir', path.dirname(out), '--max-rows', '5']), 0);
  assert.equal(readFileSync(out, 'utf8').split('\n').length, 7);
  assert.equal(await main(['data', 'fetch', 'chess', '--max-rows', 'many']), 2);
  assert.equal(await main(['data', 'fetch', 'go']), 2);
});
