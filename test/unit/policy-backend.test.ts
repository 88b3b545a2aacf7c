import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTf } from '../../src/policy/embedded/tf.js';
import { createModel } from '../../src/policy/embedded/model.js';
import { EmbeddedBackend } from '../../src/policy/embedded/backend.js';
import { saveModelFolder } from '../../src/policy/embedded/store.js';
import { tinyConfig, tinyTokenizer } from './policy-fixtures.js';

const tok = tinyTokenizer();
let dir: string;
let backend: EmbeddedBackend;

before(async () => {
  await loadTf();
  dir = mkdtempSync(join(tmpdir(), 'whale-backend-'));
  saveModelFolder(join(dir, 'model', 'base'), createModel(tinyConfig(tok.size), 31), tok, { parent: null, note: 'test base' });
  backend = await EmbeddedBackend.open({ versionsDir: join(dir, 'versions'), baseModelDir: join(dir, 'model', 'base') });
});

after(async () => {
  await backend.close();
  rmSync(dir, { recursive: true, force: true });
});

const user = (content: string) => [{ role: 'user' as const, content }];

test('capabilities, chat with token ids and logprobs, encodeChat matches the prompt ids', async () => {
  assert.deepEqual(await backend.capabilities(), { update: 'full', tokenIds: true, logprobs: true, maxContext: 64, chatTemplate: 'client' });
  const r = await backend.chat({ messages: user('hello'), params: { temperature: 0, max_tokens: 5 } });
  assert.equal(r.version, backend.currentVersion());
  assert.deepEqual(r.promptTokenIds, backend.encodeChat(user('hello')));
  assert.equal(r.logprobs!.length, r.completionTokenIds!.length);
});

test('train → new content-addressed version with its parent; publish makes it current; reload from disk', async () => {
  const base = backend.currentVersion();
  const prompt = backend.encodeChat(user('count'));
  const target = tok.encode('a b c');
  const examples = Array.from({ length: 4 }, () => ({ promptTokenIds: prompt, completionTokenIds: [...target, tok.endId], lossMask: [1, 1, 1, 1] }));
  const steps: number[] = [];
  const r = await backend.train(examples, { learningRate: 1e-2, minibatchSize: 2, epochs: 3, seed: 1 }, { onStep: (s) => steps.push(s) });
  assert.equal(r.parentVersion, base);
  assert.notEqual(r.version, base);
  assert.equal(r.optimizerSteps, 6);
  assert.equal(r.losses.length, 6);
  assert.equal(r.trainedTokens, 4 * 4 * 3);
  assert.equal(backend.currentVersion(), base, 'train does not publish');
  assert.ok(backend.versions().includes(r.version));
  const meta = backend.store.readMeta(r.version);
  assert.equal(meta.parent, base);
  // Both versions sample side by side.
  const [a, b] = await Promise.all([
    backend.chat({ messages: user('count'), params: { temperature: 0, max_tokens: 3 }, version: base }),
    backend.chat({ messages: user('count'), params: { temperature: 0, max_tokens: 3 }, version: r.version }),
  ]);
  assert.equal(a.version, base);
  assert.equal(b.version, r.version);
  await backend.publish(r.version);
  assert.equal(backend.currentVersion(), r.version);
  const reopened = await EmbeddedBackend.open({ versionsDir: join(dir, 'versions'), initialVersion: r.version });
  const c = await reopened.chat({ messages: user('count'), params: { temperature: 0, max_tokens: 3 } });
  assert.deepEqual(c.completionTokenIds, b.completionTokenIds, 'same weights from disk, same output');
  await reopened.close();
  await assert.rejects(backend.chat({ messages: user('x'), params: {}, version: '0123456789abcdef' }), /unknown policy version/);
  await backend.publish(base);
});

test('the OpenAI-compatible server answers chat completions with token ids and logprobs', async () => {
  const { baseUrl, model } = await backend.endpoint();
  assert.match(baseUrl, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
  assert.equal(model, backend.currentVersion());
  const post = (body: unknown) =>
    fetch(`${baseUrl}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const res = await post({ model: 'current', messages: user('hello'), temperature: 0, max_tokens: 6, return_token_ids: true, logprobs: true, stop: '\n' });
  assert.equal(res.status, 200);
  const j = (await res.json()) as {
    model: string;
    prompt_token_ids: number[];
    choices: {
      message: { role: string; content: string };
      finish_reason: string;
      token_ids: number[];
      logprobs: { content: { token: string; logprob: number }[] };
    }[];
    usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  };
  assert.equal(j.model, backend.currentVersion());
  assert.deepEqual(j.prompt_token_ids, backend.encodeChat(user('hello')));
  const ch = j.choices[0];
  assert.equal(ch.message.role, 'assistant');
  assert.equal(ch.logprobs.content.length, ch.token_ids.length);
  assert.equal(ch.logprobs.content[0].token, tok.tokens[ch.token_ids[0]]);
  assert.equal(j.usage.completion_tokens, ch.token_ids.length);
  // Same as the in-process API.
  const direct = await backend.chat({ messages: user('hello'), params: { temperature: 0, max_tokens: 6, stop: ['\n'] } });
  assert.deepEqual(ch.token_ids, direct.completionTokenIds);
  assert.equal(ch.message.content, direct.text);

  const models = (await (await fetch(`${baseUrl}/models`)).json()) as { data: { id: string }[] };
  assert.ok(models.data.some((m) => m.id === backend.currentVersion()));
  const stream = await post({ messages: user('hi'), stream: true });
  assert.equal(stream.status, 400);
  assert.match(((await stream.json()) as { error: { message: string } }).error.message, /stream/);
  const missing = await post({ model: 'nope', messages: user('hi') });
  assert.equal(missing.status, 404);
  assert.equal(((await missing.json()) as { error: { code: string } }).error.code, 'model_not_found');
  const bad = await post({ messages: [] });
  assert.equal(bad.status, 400);
  const tooLong = await post({ messages: user('a '.repeat(100)) });
  assert.equal(tooLong.status, 400);
  assert.equal(((await tooLong.json()) as { error: { code: string } }).error.code, 'context_length_exceeded');
  // In process (what the engine's rollouts use) the same prompt keeps <bos> and its tail, with room to answer.
  const full = backend.encodeChat(user('a '.repeat(100)));
  const C = (await backend.capabilities()).maxContext;
  assert.ok(full.length >= C);
  const cut = await backend.chat({ messages: user('a '.repeat(100)), params: { temperature: 0, max_tokens: 5 } });
  assert.deepEqual(cut.promptTokenIds, [full[0], ...full.slice(full.length - (C - 5 - 1))]);
  assert.ok(cut.completionTokenIds!.length >= 1 && cut.completionTokenIds!.length <= 5);
  const n2 = await post({ messages: user('hi'), n: 2 });
  assert.equal(n2.status, 400);
});

test('concurrent HTTP requests are batched by the sampler', async () => {
  const { baseUrl } = await backend.endpoint();
  const before = backend.samplerStats()!.maxBatch;
  const replies = await Promise.all(
    Array.from({ length: 8 }, (_, i) =>
      fetch(`${baseUrl}/chat/completions`, { method: 'POST', body: JSON.stringify({ messages: user('hello'), max_tokens: 20, seed: i }) }).then((r) =>
        r.json(),
      ),
    ),
  );
  assert.equal(replies.length, 8);
  assert.ok(backend.samplerStats()!.maxBatch > Math.max(1, before - 1), `max batch ${backend.samplerStats()!.maxBatch}`);
  assert.ok(backend.samplerStats()!.maxBatch > 1);
});

test('a resumed process continues training with the saved Adam moments: same result as never stopping', async () => {
  const examples = [0, 1, 2, 3].map((i) => {
    const prompt = tok.encodeChat(user(`count ${'abcd'[i]}`), { addGenerationPrompt: true });
    const completion = tok.encode(' answer the world is hello');
    return { promptTokenIds: prompt, completionTokenIds: completion, lossMask: completion.map(() => 1) };
  });
  const hyper = { learningRate: 1e-2, minibatchSize: 2, seed: 1 };
  const versionsDir = join(dir, 'adam-versions');
  const a = await EmbeddedBackend.open({ versionsDir, baseModelDir: join(dir, 'model', 'base') });
  const a1 = await a.train(examples, hyper);
  await a.publish(a1.version);
  const a2 = await a.train(examples, hyper);
  await a.close();
  // The same second step in a fresh process-like backend opened at step 1's version.
  const b = await EmbeddedBackend.open({ versionsDir, initialVersion: a1.version });
  const b2 = await b.train(examples, hyper);
  await b.close();
  assert.equal(b2.version, a2.version, 'resuming from saved moments gives the same weights as never stopping');
});
