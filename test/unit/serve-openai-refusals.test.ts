// `whale serve`'s chat route with the official openai Node SDK: what it cannot do (top_logprobs > 0,
// tools, n > 1, stream) is refused with a 400 naming the parameter, never silently ignored.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { EmbeddedBackend, startEmbeddedServer } from '../../src/policy/embedded/index.js';

test('openai SDK × whale serve: unsupported chat parameters are refused by name', { timeout: 300_000 }, async () => {
  const backend = await EmbeddedBackend.open({ versionsDir: join(mkdtempSync(join(tmpdir(), 'whale-oai-')), 'v') });
  const server = await startEmbeddedServer({ backend });
  try {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'none', maxRetries: 0 });
    const base = { model: 'current', messages: [{ role: 'user' as const, content: 'hello' }], max_tokens: 3 };
    const ok = await client.chat.completions.create({ ...base, logprobs: true, top_logprobs: 0 });
    assert.equal(ok.choices[0].logprobs!.content!.length, ok.usage!.completion_tokens, 'top_logprobs 0 is served: one chosen-token logprob per completion token');
    const refused = async (extra: Record<string, unknown>, param: string) => {
      await assert.rejects(client.chat.completions.create({ ...base, ...extra } as never), (e: InstanceType<typeof OpenAI.APIError>) => {
        assert.equal(e.status, 400);
        assert.equal(e.param, param);
        assert.equal(e.code, 'unsupported_parameter');
        return true;
      });
    };
    await refused({ logprobs: true, top_logprobs: 2 }, 'top_logprobs');
    await refused({ tools: [{ type: 'function', function: { name: 'search', parameters: { type: 'object', properties: {} } } }] }, 'tools');
    await refused({ n: 2 }, 'n');
    await refused({ stream: true }, 'stream');
  } finally {
    await server.close();
    await backend.close();
  }
});
