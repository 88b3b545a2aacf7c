// The recording gateway over real HTTP: per-rollout URL and token, OpenAI-compatible replies,
// refusals (streaming, function calling, bad token), tool calls recorded as events.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { Gateway } from '../../src/harness/gateway.js';
import { RolloutSession } from '../../src/harness/rolloutSession.js';
import { ScriptedBackend } from '../../src/harness/testing/scriptedBackend.js';
import { fixtureDomain, fixturePolicyReply, fixtureTasks } from '../fixtures/harnesses/fixtureDomain.js';
import { TEST_SAMPLING } from '../fixtures/harnesses/helpers.js';

const gateway = new Gateway();
const backend = new ScriptedBackend((m) => fixturePolicyReply(m), { version: 'v7' });
const task = fixtureTasks('val', 1)[0];

function newSession(limits = { maxTurns: 2, maxTokens: 100, maxTokensPerCall: 8 }): RolloutSession {
  return new RolloutSession({ task, tools: fixtureDomain().tools, backend, limits, sampling: TEST_SAMPLING, seed: 1 });
}

async function post(url: string, token: string | undefined, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe('recording gateway', () => {
  before(() => gateway.start());
  after(() => gateway.close());

  it('serves OpenAI-compatible chat completions at the rollout URL and records the call', async () => {
    const s = newSession();
    const info = gateway.register(s, { viaSocket: false });
    assert.match(info.baseUrl, new RegExp(`^http://127\\.0\\.0\\.1:\\d+/rollout/${s.id}/v1$`));
    const r = await post(`${info.baseUrl}/chat/completions`, info.token, {
      model: 'anything',
      messages: [{ role: 'user', content: [{ type: 'text', text: task.public.question }] }],
      temperature: 0,
    });
    assert.equal(r.status, 200);
    const choice = (r.json.choices as { message: { content: string }; finish_reason: string }[])[0];
    assert.equal(choice.message.content, 'search alba');
    assert.equal(choice.finish_reason, 'stop');
    assert.equal(r.json.model, 'v7');
    assert.equal((r.json.usage as { completion_tokens: number }).completion_tokens, 2);
    assert.equal(s.modelCalls.length, 1);
    assert.equal(s.modelCalls[0].messages[0].content, task.public.question); // content parts flattened
    assert.equal(s.modelCalls[0].params.temperature, TEST_SAMPLING.temperature, "the session's sampling, not the harness's temperature 0");
    assert.equal(s.modelCalls[0].params.requested_temperature, 0);
    assert.equal(s.modelCalls[0].params.max_tokens, 8);
    gateway.unregister(s);
  });

  it('refuses a wrong token, an unknown rollout, streaming and function calling', async () => {
    const s = newSession();
    const info = gateway.register(s, { viaSocket: false });
    const msg = { messages: [{ role: 'user', content: 'hi' }] };
    assert.equal((await post(`${info.baseUrl}/chat/completions`, 'wrong', msg)).status, 401);
    assert.equal((await post(`${info.baseUrl}/chat/completions`, undefined, msg)).status, 401);
    assert.equal((await post(info.baseUrl.replace(s.id, 'abcdef'), info.token, msg)).status, 404);
    const stream = await post(`${info.baseUrl}/chat/completions`, info.token, { ...msg, stream: true });
    assert.equal(stream.status, 400);
    assert.match(String((stream.json.error as { message: string }).message), /streaming is not supported/);
    assert.equal((await post(`${info.baseUrl}/chat/completions`, info.token, { ...msg, tools: [{ type: 'function' }] })).status, 400);
    assert.equal((await post(`${info.baseUrl}/chat/completions`, info.token, { messages: [] })).status, 400);
    assert.equal(s.modelCalls.length, 0, 'refused requests are not model calls');
    gateway.unregister(s);
    assert.equal((await post(`${info.baseUrl}/chat/completions`, info.token, msg)).status, 404, 'a finished rollout is gone');
  });

  it('runs domain tools in the parent with the private task, recording args and observation', async () => {
    const s = newSession();
    const info = gateway.register(s, { viaSocket: false });
    const ok = await post(`${info.toolsUrl}/search`, info.token, { query: 'alba' });
    assert.equal(ok.status, 200);
    assert.equal(ok.json.observation, 'alba colour red\nalba home boro');
    const bad = await post(`${info.toolsUrl}/search`, info.token, { q: 1 });
    assert.equal(bad.status, 400);
    const unknown = await post(`${info.toolsUrl}/shell`, info.token, {});
    assert.equal(unknown.status, 404);
    assert.deepEqual(
      s.events.map((e) => [e.type, e.name, e.observation ?? e.message]),
      [
        ['tool', 'search', 'alba colour red\nalba home boro'],
        ['tool', 'search', 'error: search needs a string query'],
        ['error', 'shell', "unknown tool 'shell'"],
      ],
    );
    gateway.unregister(s);
  });

  it('answers the same routes over its unix socket', { skip: process.platform === 'win32' }, async () => {
    const s = newSession();
    const info = gateway.register(s, { viaSocket: true });
    assert.ok(info.socketPath);
    const body = JSON.stringify({ messages: [{ role: 'user', content: task.public.question }] });
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        {
          socketPath: info.socketPath,
          path: new URL(`${info.baseUrl}/chat/completions`).pathname,
          method: 'POST',
          headers: { authorization: `Bearer ${info.token}`, 'content-type': 'application/json' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    assert.equal(status, 200);
    assert.equal(s.modelCalls.length, 1);
    gateway.unregister(s);
  });

  it('counts turns before awaiting, so parallel calls cannot overrun the limit', async () => {
    const s = newSession({ maxTurns: 2, maxTokens: 100, maxTokensPerCall: 8 });
    const info = gateway.register(s, { viaSocket: false });
    const results = await Promise.all(
      Array.from({ length: 5 }, () => post(`${info.baseUrl}/chat/completions`, info.token, { messages: [{ role: 'user', content: 'hi' }] })),
    );
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 200, 429, 429, 429]);
    assert.equal(s.limitHit?.termination, 'turn_limit');
    assert.equal(s.modelCalls.length, 2);
    gateway.unregister(s);
  });
});
