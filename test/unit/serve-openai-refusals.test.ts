// `whale serve`'s chat route with the official openai Node SDK: what it cannot do (top_logprobs > 0,
// tools, n > 1, stream) is refused with a 400 naming the parameter, never silently ignored.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { EmbeddedBackend, startEmbeddedServer } from '../../src/policy/embedded/index.js';
import { EmbeddedTinkerService } from '../../src/policy/embedded/tinkerService.js';

test('openai SDK × whale serve: unsupported chat parameters are refused by name', { timeout: 300_000 }, async () => {
  const backend = await EmbeddedBackend.open({ versionsDir: join(mkdtempSync(join(tmpdir(), 'whale-oai-')), 'v') });
  const server = await startEmbeddedServer({ backend });
  try {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'none', maxRetries: 0 });
    const base = { model: 'current', messages: [{ role: 'user' as const, content: 'hello' }], max_tokens: 3 };
    const ok = await client.chat.completions.create({ ...base, logprobs: true, top_logprobs: 0 });
    assert.equal(
      ok.choices[0].logprobs!.content!.length,
      ok.usage!.completion_tokens,
      'top_logprobs 0 is served: one chosen-token logprob per completion token',
    );
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

test("openai SDK × whale serve: /v1/completions, GET /v1/models/{id}, and vLLM's LoRA error codes", { timeout: 300_000 }, async () => {
  const backend = await EmbeddedBackend.open({ versionsDir: join(mkdtempSync(join(tmpdir(), 'whale-oai-')), 'v') });
  const server = await startEmbeddedServer({ backend });
  try {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'none', maxRetries: 0 });
    const c = await client.completions.create({
      model: 'current',
      prompt: 'the sky is',
      max_tokens: 4,
      temperature: 0,
      logprobs: 0,
      return_token_ids: true,
    } as never);
    const choice = c.choices[0] as unknown as { text: string; token_ids: number[]; logprobs: { token_logprobs: number[]; tokens: string[] } };
    assert.ok(choice.token_ids.length >= 1 && choice.token_ids.length <= 4);
    assert.equal(choice.logprobs.token_logprobs.length, choice.token_ids.length);
    assert.ok(choice.logprobs.token_logprobs.every((x) => x <= 0));
    assert.equal(c.usage!.completion_tokens, choice.token_ids.length);
    const viaIds = await client.completions.create({
      model: 'current',
      prompt: (c as unknown as { prompt_token_ids: number[] }).prompt_token_ids ?? [],
      max_tokens: 4,
      temperature: 0,
      return_token_ids: true,
    } as never);
    assert.deepEqual((viaIds.choices[0] as unknown as { token_ids: number[] }).token_ids, choice.token_ids, 'token-id prompts sample the same as their text');

    const current = backend.currentVersion();
    assert.equal((await client.models.retrieve(current)).id, current);
    await assert.rejects(
      client.models.retrieve('no-such-model'),
      (e: InstanceType<typeof OpenAI.APIError>) => e.status === 404 && e.code === 'model_not_found',
    );

    const post = (route: string, body: unknown) =>
      fetch(`${server.url}/v1/${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const missing = await post('load_lora_adapter', { lora_name: 'a', lora_path: '/nonexistent/adapter' });
    assert.equal(missing.status, 404, 'vLLM answers a path without an adapter with 404');
    assert.deepEqual(
      { ...((await missing.json()) as { error: object }).error, message: undefined },
      { message: undefined, type: 'NotFoundError', code: 404, param: 'lora_name' },
    );
    const unknown = await post('unload_lora_adapter', { lora_name: 'never-loaded' });
    assert.equal(unknown.status, 404);
    assert.match(((await unknown.json()) as { error: { message: string } }).error.message, /cannot be found/);
  } finally {
    await server.close();
    await backend.close();
  }
});

test("whale serve dedups the official tinker SDK's X-Idempotency-Key as it does Idempotency-Key", { timeout: 300_000 }, async () => {
  const backend = await EmbeddedBackend.open({ versionsDir: join(mkdtempSync(join(tmpdir(), 'whale-xidem-')), 'v') });
  const tinker = new EmbeddedTinkerService(backend);
  const server = await startEmbeddedServer({ backend, tinker });
  try {
    const post = async (route: string, body: unknown, headers: Record<string, string> = {}) => {
      const r = await fetch(`${server.url}/api/v1/${route}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
      assert.equal(r.status, 200, `${route}: ${await r.clone().text()}`);
      return (await r.json()) as Record<string, string>;
    };
    const { session_id } = await post('create_session', { tags: [], sdk_version: '0.24.1' });
    const { model_id } = await post('create_model', { session_id, base_model: 'embedded', lora_config: { rank: 8 } });
    const adam = { model_id, adam_params: { learning_rate: 1e-3 } };
    const first = await post('optim_step', adam, { 'X-Idempotency-Key': 'sdk-retry-1' });
    const retried = await post('optim_step', adam, { 'X-Idempotency-Key': 'sdk-retry-1' });
    const other = await post('optim_step', adam, { 'X-Idempotency-Key': 'sdk-retry-2' });
    assert.equal(retried.request_id, first.request_id, "the retry gets the first request's future");
    assert.notEqual(other.request_id, first.request_id);
    assert.equal(tinker.counters.deduplicated, 1);
  } finally {
    await server.close();
    tinker.close();
    await backend.close();
  }
});
