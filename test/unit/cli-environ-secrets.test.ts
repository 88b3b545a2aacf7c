// API keys leave the engine's /proc/<pid>/environ (where an unconfined command harness read them)
// while the engine still uses them: a real `whale eval` against a local OpenAI-compatible server
// that checks the Authorization header and, while the engine waits on it, reads the engine's environ.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { tinyProject } from './serve-helpers.js';

const dev = fileURLToPath(new URL('../../src/cli/dev.ts', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/tsx/dist/esm/index.mjs', import.meta.url));

const KEYS = {
  WHALE_FAKE_BACKEND_KEY: 'backend-key-0b7e21', // named by the config's backend.apiKeyEnv
  OPENAI_API_KEY: 'sk-openai-5c2f90',
  ANTHROPIC_API_KEY: 'sk-ant-a81d44',
  TINKER_API_KEY: 'tml-tinker-77c3e0',
};

test(
  'whale eval: no API key in the engine’s /proc/<pid>/environ, and the backend still receives its key',
  { skip: process.platform !== 'linux' && 'Linux /proc only', timeout: 240_000 },
  async () => {
    let enginePid = 0;
    const environSeen: string[] = [];
    const auth = new Set<string>();
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        auth.add(req.headers.authorization ?? '(none)');
        if (enginePid) environSeen.push(readFileSync(`/proc/${enginePid}/environ`, 'latin1'));
        if (req.headers.authorization !== `Bearer ${KEYS.WHALE_FAKE_BACKEND_KEY}`) {
          res.statusCode = 401;
          return res.end(JSON.stringify({ error: { message: 'invalid API key', type: 'authentication_error' } }));
        }
        if (req.url === '/v1/models') return res.end(JSON.stringify({ object: 'list', data: [{ id: 'plain-model', object: 'model' }] }));
        res.end(
          JSON.stringify({
            id: 'x',
            object: 'chat.completion',
            choices: [{ index: 0, message: { role: 'assistant', content: 'answer blue' }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
          }),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const dir = tinyProject({
      kind: 'openai-compatible',
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
      model: 'plain-model',
      apiKeyEnv: 'WHALE_FAKE_BACKEND_KEY',
    });
    try {
      const child = spawn(process.execPath, ['--import', tsx, dev, 'eval', '--limit', '2', '--k', '1'], {
        cwd: dir,
        env: { ...process.env, ...KEYS },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      enginePid = child.pid!;
      let out = '';
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
      const code = await new Promise<number | null>((r) => child.once('exit', r));
      assert.equal(code, 0, out);
      assert.deepEqual([...auth], [`Bearer ${KEYS.WHALE_FAKE_BACKEND_KEY}`], 'every request carried the key');
      assert.ok(environSeen.length >= 3, `the server read the engine's environ ${environSeen.length} times`);
      for (const env of environSeen) {
        assert.match(env, /(^|\0)PATH=/, 'this is the environ of a real process');
        for (const [name, value] of Object.entries(KEYS)) assert.ok(!env.includes(value), `${name}'s value is in the engine's /proc/<pid>/environ`);
      }
    } finally {
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
