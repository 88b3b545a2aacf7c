// The vLLM publisher tells "the adapter is already gone" (vLLM's 404 "… cannot be found.") from "the
// unload route is not there" (the framework's plain 404 Not Found: vLLM without
// VLLM_ALLOW_RUNTIME_LORA_UPDATING): only the first counts as unloaded. vLLM cannot run here (no GPU),
// so a small HTTP server answers as each would (the bodies are vLLM's and FastAPI's own).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JsonHttp } from '../../src/policy/remote/http.js';
import { PublishError, VllmLoraPublisher } from '../../src/policy/split/vllmLora.js';

async function sampler(unload: { status: number; body: unknown }) {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/v1/load_lora_adapter') return res.writeHead(200, { 'content-type': 'text/plain' }).end('Success: LoRA adapter added successfully.');
      res.writeHead(unload.status, { 'content-type': 'application/json' }).end(JSON.stringify(unload.body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, close: () => server.close() };
}

function publisher(url: string) {
  const file = join(mkdtempSync(join(tmpdir(), 'whale-unload-')), 'published.json');
  return new VllmLoraPublisher(
    new JsonHttp({ baseUrl: url, retries: 0, outageMs: 0 }),
    { kind: 'vllm-lora', adapterDir: '/adapters', pathTemplate: '{adapterDir}/{checkpoint}', namePrefix: 'whale', keepLoaded: 1 },
    { file, runTag: 'r', baseVersion: 'base:m', baseModel: 'm' },
  );
}

test('unloading: vLLM\'s "cannot be found" means done; a missing unload route is an error that says so', async () => {
  const gone = await sampler({
    status: 404,
    body: { error: { message: "The lora adapter 'whale-r-v1' cannot be found.", type: 'NotFoundError', param: null, code: 404 } },
  });
  try {
    const p = publisher(gone.url);
    await p.publish('tinker://m1/sampler_weights/a');
    await p.publish('tinker://m1/sampler_weights/b');
    assert.equal(p.adapters()[0].loaded, false, 'the first adapter counts as unloaded');
  } finally {
    gone.close();
  }
  const noRoute = await sampler({ status: 404, body: { detail: 'Not Found' } });
  try {
    const p = publisher(noRoute.url);
    await p.publish('tinker://m1/sampler_weights/a');
    await assert.rejects(
      p.publish('tinker://m1/sampler_weights/b'),
      (e: unknown) => e instanceof PublishError && /unload_lora_adapter is not there.*VLLM_ALLOW_RUNTIME_LORA_UPDATING=True/.test((e as Error).message),
    );
    assert.notEqual(p.adapters()[0].loaded, false, 'nothing was unloaded');
  } finally {
    noRoute.close();
  }
});
