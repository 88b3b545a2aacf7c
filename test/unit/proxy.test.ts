// HTTPS_PROXY / HTTP_PROXY / NO_PROXY end to end on Node 20, through a real proxy on 127.0.0.1 that
// counts requests: both LLM SDKs (in this process, after installEnvProxy) and the engine's own fetch
// (the whale CLI as a child, over a CONNECT tunnel to an HTTPS upstream with a self-signed cert).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { installEnvProxy, proxyFromEnv } from '../../src/core/proxy.js';
import { editorProxyEnv } from '../../src/extension/model/proxyEnv.js';
import { CountingProxy } from '../support/countingProxy.js';
import { FakeLlmServer } from '../support/fakeLlmServer.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tsx = join(root, 'node_modules/tsx/dist/esm/index.mjs');

test('proxyFromEnv: either case, HTTPS falls back to HTTP_PROXY, loopback always bypasses', () => {
  assert.equal(proxyFromEnv({}), undefined);
  assert.deepEqual(proxyFromEnv({ http_proxy: 'http://p:1', NO_PROXY: 'corp.example, .internal' }), {
    httpProxy: 'http://p:1',
    httpsProxy: 'http://p:1',
    noProxy: 'corp.example,.internal,localhost,127.0.0.1,::1,[::1]',
  });
  assert.equal(proxyFromEnv({ HTTPS_PROXY: 'http://s:2' })?.httpsProxy, 'http://s:2');
});

test('both LLM SDKs go through HTTP_PROXY; NO_PROXY hosts and loopback do not', async () => {
  const proxy = await new CountingProxy().start();
  const llm = await new FakeLlmServer(() => ({ text: 'hello' })).start();
  const port = new URL(llm.openaiBaseUrl).port;
  try {
    await installEnvProxy({ HTTP_PROXY: proxy.url, NO_PROXY: 'direct.whale.test' });
    const openai = new OpenAI({ apiKey: 'k', baseURL: `http://llm.whale.test:${port}/v1`, maxRetries: 0 });
    const o = await openai.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(o.choices[0].message.content, 'hello');
    const anthropic = new Anthropic({ apiKey: 'k', baseURL: `http://llm.whale.test:${port}`, maxRetries: 0 });
    const a = await anthropic.messages.create({ model: 'm', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(a.content[0].type === 'text' && a.content[0].text, 'hello');
    // undici's proxy agent tunnels plain HTTP too (CONNECT host:port), as it does HTTPS.
    assert.deepEqual(
      proxy.seen.map((s) => `${s.method} ${s.target}`),
      [`CONNECT llm.whale.test:${port}`, `CONNECT llm.whale.test:${port}`],
    );
    assert.deepEqual(
      llm.requests.map((r) => r.path),
      ['/v1/chat/completions', '/v1/messages'],
    );

    const direct = new OpenAI({ apiKey: 'k', baseURL: llm.openaiBaseUrl, maxRetries: 0 });
    await direct.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'direct' }] });
    assert.equal(proxy.seen.length, 2, 'the loopback call did not pass the proxy');
    const bypass = new OpenAI({ apiKey: 'k', baseURL: `http://direct.whale.test:${port}/v1`, maxRetries: 0 });
    await assert.rejects(bypass.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }), /Connection error/);
    assert.equal(proxy.seen.length, 2, 'a NO_PROXY host was resolved directly (and does not exist), not proxied');
    assert.equal(llm.requests.length, 3);
  } finally {
    await llm.close();
    await proxy.close();
  }
});

test(
  'the engine (whale backend connect) reaches an HTTPS backend through HTTPS_PROXY by CONNECT; NO_PROXY sends it direct',
  { timeout: 120_000, skip: spawnSync('openssl', ['version']).status === 0 ? false : 'openssl is not installed' },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'whale-proxy-'));
    const gen = spawnSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=llm.whale.test',
        '-addext',
        'subjectAltName=DNS:llm.whale.test',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { encoding: 'utf8' },
    );
    assert.equal(gen.status, 0, gen.stderr);
    const seen: string[] = [];
    const upstream = createServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }, (req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.writeHead(200, { 'content-type': 'application/json' });
      if (req.url === '/v1/models') return res.end(JSON.stringify({ data: [{ id: 'm', max_model_len: 2048 }] }));
      res.end(
        JSON.stringify({
          id: 'c',
          object: 'chat.completion',
          model: 'm',
          choices: [{ index: 0, message: { role: 'assistant', content: 'x' }, finish_reason: 'length', logprobs: null }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const port = (upstream.address() as AddressInfo).port;
    const proxy = await new CountingProxy().start();
    const whale = (env: Record<string, string>) =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        const child = spawn(
          process.execPath,
          ['--import', tsx, join(root, 'src/cli/dev.ts'), 'backend', 'connect', `https://llm.whale.test:${port}/v1`, '--model', 'm', '--dry-run'],
          { cwd: dir, env: { ...process.env, NODE_EXTRA_CA_CERTS: join(dir, 'cert.pem'), ...env } },
        );
        let out = '';
        child.stdout.on('data', (d) => (out += d));
        child.stderr.on('data', (d) => (out += d));
        child.on('close', (code) => resolve({ code, out }));
      });
    try {
      const via = await whale({ HTTPS_PROXY: proxy.url });
      assert.equal(via.code, 0, via.out);
      assert.ok(proxy.seen.length >= 1 && proxy.seen.every((s) => s.method === 'CONNECT' && s.target === `llm.whale.test:${port}`), JSON.stringify(proxy.seen));
      assert.ok(seen.includes('GET /v1/models') && seen.includes('POST /v1/chat/completions'), seen.join(', '));
      const before = proxy.seen.length;
      const bypass = await whale({ HTTPS_PROXY: proxy.url, NO_PROXY: '.whale.test' });
      assert.notEqual(bypass.code, 0);
      assert.equal(proxy.seen.length, before, 'NO_PROXY: the proxy saw nothing');
    } finally {
      await proxy.close();
      upstream.closeAllConnections();
      await new Promise<void>((resolve) => upstream.close(() => resolve()));
    }
  },
);

test("VS Code's http.proxy and http.noProxy become the engine's env, winning over an inherited proxy", async () => {
  assert.deepEqual(editorProxyEnv({}), {});
  assert.deepEqual(editorProxyEnv({ proxy: '  ', noProxy: ['x'] }), {});
  const env = editorProxyEnv({ proxy: 'http://editor:3128', noProxy: ['corp.example', '.internal'] });
  assert.equal(env.HTTPS_PROXY, 'http://editor:3128');
  assert.equal(env.NO_PROXY, 'corp.example,.internal');
  // The child's environment as engineProcess.ts builds it: inherited, then the editor's settings.
  const merged = { https_proxy: 'http://inherited:1', NO_PROXY: 'old', ...env };
  assert.deepEqual(proxyFromEnv(merged), {
    httpProxy: 'http://editor:3128',
    httpsProxy: 'http://editor:3128',
    noProxy: 'corp.example,.internal,localhost,127.0.0.1,::1,[::1]',
  });
});
