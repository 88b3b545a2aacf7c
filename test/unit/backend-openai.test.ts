// The openai-compatible backend against real servers: `whale serve` in its own process (which
// returns token ids and logprobs) and a plain OpenAI-shaped server that does not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RunStore } from '../../src/archive/runStore.js';
import { ResultStore } from '../../src/archive/resultStore.js';
import { Journal, type JournalEntry } from '../../src/archive/journal.js';
import { OpenAICompatibleBackend } from '../../src/policy/remote/openaiBackend.js';
import { startServe, tinyProject, whale, whaleAsync } from './serve-helpers.js';

function journalOf(dir: string): JournalEntry[] {
  const runs = new RunStore(join(dir, '.whale'));
  const id = runs.current();
  assert.ok(id, 'a current run');
  return [...new Journal(runs.journalFile(id)).all()];
}

test(
  'openai-compatible: probe finds token ids and logprobs on whale serve; a harness-only search runs completely; a weight method is refused before any rollout',
  { timeout: 900_000 },
  async () => {
    const serverStore = tinyProject({ kind: 'embedded' });
    const served = await startServe(join(serverStore, '.whale-server'));
    try {
      const listed = (await (await fetch(`${served.url}/v1/models`)).json()) as { data: { id: string }[] };
      const model = listed.data[0].id;
      const b = await OpenAICompatibleBackend.open({ baseUrl: `${served.url}/v1`, model });
      const caps = await b.capabilities();
      assert.deepEqual(
        { update: caps.update, tokenIds: caps.tokenIds, logprobs: caps.logprobs, chatTemplate: caps.chatTemplate },
        { update: 'none', tokenIds: true, logprobs: true, chatTemplate: 'server' },
      );
      const r = await b.chat({ messages: [{ role: 'user', content: 'hello' }], params: { max_tokens: 6, temperature: 1, seed: 3 } });
      assert.ok(r.completionTokenIds && r.completionTokenIds.length === r.usage.completionTokens && r.usage.completionTokens > 0);
      assert.equal(r.logprobs!.length, r.completionTokenIds.length);
      assert.ok(r.logprobs!.every((x) => x <= 0));
      await assert.rejects(() => b.train([], { learningRate: 1e-3, minibatchSize: 1 }), /samples only: it cannot train/);

      const backend = { kind: 'openai-compatible', baseUrl: `${served.url}/v1`, model };
      const dir = tinyProject(backend);
      const refused = whale(['run', '--method', 'whale'], dir);
      assert.equal(refused.code, 1, refused.stderr);
      assert.match(refused.stderr, /method 'whale' has weight phases, but the 'openai-compatible' backend cannot train/);
      assert.ok(!existsSync(join(dir, '.whale', 'results')) || readdirSync(join(dir, '.whale', 'results')).length === 0, 'no rollout was run');
      assert.equal(new RunStore(join(dir, '.whale')).list().length, 0, 'no run left behind');

      const ran = await whaleAsync(['run', '--method', 'harness-only'], dir);
      assert.equal(ran.code, 0, ran.stderr);
      const j = journalOf(dir);
      const started = j.find((e) => e.type === 'run_started')!;
      assert.equal((started.backend as { kind: string }).kind, 'openai-compatible');
      assert.equal((started.backend as { capabilities: { tokenIds: boolean } }).capabilities.tokenIds, true);
      const scored = j.filter((e) => e.type === 'candidate_scored');
      assert.ok(scored.length >= 3, `h0 and two proposals scored (got ${scored.length})`);
      assert.ok(j.some((e) => e.type === 'phase_completed' && e.kind === 'harness'));
      const results = new ResultStore(join(dir, '.whale'));
      const trajectories = results.loadTrajectories(String(scored[0].keyHash));
      assert.equal(trajectories.length, 6, 'one rollout per search task (k = 1)');
      const call = trajectories.flatMap((t) => t.modelCalls)[0];
      assert.ok(
        call.promptTokenIds!.length > 0 && call.completionTokenIds!.length > 0 && call.logprobs!.length === call.completionTokenIds!.length,
        'the server-side ids and logprobs are recorded',
      );

      // Asked to, weight phases run and record their accepted batches for later training.
      const rec = tinyProject({ ...backend, recordRsft: true }, { method: 'weight-only', schedule: { epochs: 0.375, iterations: 2, cycles: 1 } });
      const recorded = await whaleAsync(['run'], rec);
      assert.equal(recorded.code, 0, recorded.stderr);
      const steps = journalOf(rec).filter((e) => e.type === 'weight_step');
      assert.equal(steps.length, 2);
      assert.ok(
        steps.every((s) => s.versionAfter === model),
        'the policy did not change',
      );
      const batchDir = join(rec, '.whale', 'rsft-batches');
      const files = existsSync(batchDir) ? readdirSync(batchDir) : [];
      assert.equal(files.length, steps.filter((s) => Number(s.accepted) > 0).length, 'one batch file per step with accepted rollouts');
      assert.ok(files.length >= 1, `some step accepted rollouts (accepted: ${steps.map((s) => s.accepted).join(', ')})`);
      for (const f of files) {
        const [header, ...examples] = readFileSync(join(batchDir, f), 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as Record<string, unknown>);
        assert.equal(header.format, 'whale-rsft-batch');
        assert.equal(header.policyVersion, model);
        assert.equal(examples.length, header.examples);
        assert.ok(
          examples.every((e) => (e.completionTokenIds as number[]).length === (e.lossMask as number[]).length && (e.promptTokenIds as number[]).length > 0),
        );
      }
    } finally {
      await served.stop();
    }
  },
);

test(
  'openai-compatible: a server that ignores return_token_ids and logprobs is the labelled fallback (no ids recorded, training refused)',
  { timeout: 120_000 },
  async () => {
    const seen: Record<string, unknown>[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        if (req.headers.authorization !== 'Bearer s3cret-key') {
          res.statusCode = 401;
          return res.end(JSON.stringify({ error: { message: 'invalid API key', type: 'authentication_error' } }));
        }
        if (req.url === '/v1/models') return res.end(JSON.stringify({ object: 'list', data: [{ id: 'plain-model', object: 'model' }] }));
        const b = JSON.parse(body) as Record<string, unknown>;
        seen.push(b);
        res.end(
          JSON.stringify({
            id: 'x',
            object: 'chat.completion',
            choices: [{ index: 0, message: { role: 'assistant', content: 'fine thanks' }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
          }),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
      // The key comes from the environment variable the config names, and never shows in an error.
      await assert.rejects(
        async () => OpenAICompatibleBackend.open({ baseUrl: url, model: 'plain-model', apiKeyEnv: 'WHALE_TEST_UNSET_KEY' }),
        /the API key variable WHALE_TEST_UNSET_KEY is not set/,
      );
      process.env.WHALE_TEST_KEY = 'wrong-key';
      await assert.rejects(
        () => OpenAICompatibleBackend.open({ baseUrl: url, model: 'plain-model', apiKeyEnv: 'WHALE_TEST_KEY' }),
        (e: Error) => /HTTP 401: invalid API key/.test(e.message) && !e.message.includes('wrong-key'),
      );
      process.env.WHALE_TEST_KEY = 's3cret-key';
      await assert.rejects(
        () => OpenAICompatibleBackend.open({ baseUrl: url, model: 'other', apiKeyEnv: 'WHALE_TEST_KEY' }),
        /does not serve model 'other' \(it lists: plain-model\)/,
      );
      const b = await OpenAICompatibleBackend.open({ baseUrl: url, model: 'plain-model', apiKeyEnv: 'WHALE_TEST_KEY' });
      assert.match(b.probe.summary, /token ids NOT returned \(fallback/);
      const caps = await b.capabilities();
      assert.equal(caps.tokenIds, false);
      assert.equal(caps.logprobs, false);
      const r = await b.chat({ messages: [{ role: 'user', content: 'how are you' }], params: { temperature: 0.5 } });
      assert.equal(r.text, 'fine thanks');
      assert.equal(r.completionTokenIds, undefined);
      assert.equal(seen.at(-1)!.return_token_ids, undefined, 'not asked again once the probe found the server ignores it');
      const { backendMismatch } = await import('../../src/engine/backendFit.js');
      assert.match(backendMismatch('weight-only', b.kind, caps)!, /cannot train/);
      assert.equal(backendMismatch('harness-only', b.kind, caps), undefined);
      assert.match(backendMismatch('whale', 'x', { ...caps, update: 'full' })!, /does not return them/);
    } finally {
      server.close();
    }
  },
);
