import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WhaleError } from '../../src/core/errors.js';
import { downloadFile } from '../../src/domains/data/download.js';

test('downloadFile: fetches, keeps a finished file, restarts when the server ignores Range, completes a full .part on 416, fails on 404', async () => {
  const body = Buffer.from('x'.repeat(5000) + 'end\n');
  const ranges: (string | undefined)[] = [];
  let honourRange = true;
  const server = createServer((req, res) => {
    ranges.push(req.headers.range);
    if (req.url !== '/f') return void res.writeHead(404).end('no');
    const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    if (m && honourRange) {
      const from = Number(m[1]);
      if (from >= body.length) return void res.writeHead(416, { 'content-range': `bytes */${body.length}` }).end();
      return void res.writeHead(206, { 'content-length': body.length - from }).end(body.subarray(from));
    }
    res.writeHead(200, { 'content-length': body.length }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const dir = mkdtempSync(join(tmpdir(), 'whale-dl-'));
  try {
    const a = await downloadFile(`${url}/f`, join(dir, 'sub', 'a'));
    assert.deepEqual([a.how, a.bytes], ['fetched', body.length]);
    assert.deepEqual(readFileSync(join(dir, 'sub', 'a')), body);
    assert.equal((await downloadFile(`${url}/f`, join(dir, 'sub', 'a'))).how, 'done');
    assert.equal(ranges.length, 1, 'a finished file is not fetched again');
    // A stale half-file and a server that ignores Range: start over, not append.
    honourRange = false;
    writeFileSync(join(dir, 'b.part'), 'garbage-garbage');
    const b = await downloadFile(`${url}/f`, join(dir, 'b'));
    assert.equal(b.how, 'fetched');
    assert.deepEqual(readFileSync(join(dir, 'b')), body);
    // Every byte already in the .part: the server says 416, the file is complete.
    honourRange = true;
    writeFileSync(join(dir, 'c.part'), body);
    assert.equal((await downloadFile(`${url}/f`, join(dir, 'c'))).how, 'resumed');
    assert.deepEqual(readFileSync(join(dir, 'c')), body);
    await assert.rejects(downloadFile(`${url}/missing`, join(dir, 'd')), (e: unknown) => e instanceof WhaleError && /HTTP 404/.test(e.message));
    assert.ok(!existsSync(join(dir, 'd')));
  } finally {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
});
