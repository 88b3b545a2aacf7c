// readRequestBody (src/core/requestBody.ts), the body reader of the embedded policy server, the harness
// gateway, the local retriever and the code sandbox: the text as sent, and a refusal past the cap.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BodyTooLargeError, readRequestBody } from '../../src/core/requestBody.js';

test('a body within the cap is read whole (multi-byte UTF-8 counted in bytes); one past it throws BodyTooLargeError naming the cap', async () => {
  const seen: (string | Error)[] = [];
  const server = createServer((req, res) => {
    readRequestBody(req, 64).then(
      (text) => {
        seen.push(text);
        res.end('ok');
      },
      (e: Error) => {
        seen.push(e);
        res.destroy();
      },
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  try {
    const body = 'é'.repeat(32); // 64 bytes: exactly the cap
    assert.equal((await fetch(url, { method: 'POST', body })).status, 200);
    assert.equal(seen[0], body);
    await fetch(url, { method: 'POST', body: 'x'.repeat(65) }).catch(() => undefined);
    assert.ok(seen[1] instanceof BodyTooLargeError, String(seen[1]));
    assert.equal((seen[1] as BodyTooLargeError).limit, 64);
    assert.equal((seen[1] as Error).message, 'request body over 64 bytes');
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});
