// The Tinker client against the embedded backend's Tinker routes over real HTTP: a training round
// trip that changes what the model samples, agreement with local training (the same loss and
// Adam), and faults (500s, a slow reply, a lost optim_step reply) that apply nothing twice.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedBackend, startEmbeddedServer } from '../../src/policy/embedded/index.js';
import { EmbeddedTinkerService } from '../../src/policy/embedded/tinkerService.js';
import { TinkerBackend } from '../../src/policy/tinker/backend.js';
import { parseSamplerPath } from '../../src/policy/tinker/protocol.js';
import { loadChatTokenizer } from '../../src/policy/tinker/chatTokenizer.js';
import type { TrainExample, TrainHyper } from '../../src/policy/types.js';
import { startServe } from './serve-helpers.js';

const PROMPT = [{ role: 'user' as const, content: 'What colour is the sky?' }];
const TARGET = ' the sky is blue and the sea is green';
const HYPER: TrainHyper = { learningRate: 3e-3, minibatchSize: 2, epochs: 6, seed: 7 };

/** Four copies of one answer to one question (an extreme batch, so a few steps change the greedy sample). */
async function examples(): Promise<TrainExample[]> {
  const tok = await loadChatTokenizer('embedded');
  const promptTokenIds = tok.encodeChat(PROMPT, { addGenerationPrompt: true });
  const { loadTokenizer } = await import('../../src/policy/embedded/tokenizer.js');
  const { resourcesDir } = await import('../../src/core/resources.js');
  const word = loadTokenizer(join(resourcesDir(), 'model', 'base', 'vocab.json'));
  const completionTokenIds = [...word.encode(TARGET), word.idOf('<|end|>')!];
  return [0, 1, 2, 3].map(() => ({ promptTokenIds, completionTokenIds, lossMask: completionTokenIds.map(() => 1) }));
}

test(
  'tinker: the client trains the embedded backend over HTTP (separate process) and the trained version samples differently; local training gives the same weights',
  { timeout: 900_000 },
  async () => {
    const store = mkdtempSync(join(tmpdir(), 'whale-tinker-'));
    const served = await startServe(join(store, 'server'));
    try {
      const b = await TinkerBackend.open({ baseUrl: served.url, baseModel: 'embedded', tokenizer: 'embedded', loraRank: 8 });
      const caps = await b.capabilities();
      assert.equal(caps.update, 'full', 'the embedded server trains all parameters (no LoRA config in get_info)');
      assert.equal(b.currentVersion(), 'base:embedded');
      const greedy = { temperature: 0, max_tokens: 12 };
      const before = await b.chat({ messages: PROMPT, params: greedy });
      assert.ok(before.completionTokenIds!.length > 0 && before.logprobs!.length === before.completionTokenIds!.length);

      const ex = await examples();
      const steps: number[] = [];
      const r = await b.train(ex, HYPER, { onStep: (_s, loss) => steps.push(loss) });
      assert.equal(r.optimizerSteps, 12, '4 examples, minibatch 2, 6 epochs');
      assert.equal(r.parentVersion, 'base:embedded');
      assert.ok(parseSamplerPath(r.version), `a tinker sampler path: ${r.version}`);
      assert.ok(r.losses.at(-1)! < r.losses[0] * 0.7, `the loss fell: ${r.losses.map((x) => x.toFixed(2)).join(' ')}`);
      await b.publish(r.version);
      const after = await b.chat({ messages: PROMPT, params: greedy });
      assert.notDeepEqual(after.completionTokenIds, before.completionTokenIds, 'the trained version samples differently');
      const base = await b.chat({ messages: PROMPT, params: greedy, version: 'base:embedded' });
      assert.deepEqual(base.completionTokenIds, before.completionTokenIds, 'the base version is still samplable and unchanged');

      // The same examples and settings trained locally: the same Adam on the same loss gives the same weights.
      const local = await EmbeddedBackend.open({ versionsDir: join(store, 'local') });
      try {
        const lr = await local.train(ex, HYPER);
        assert.equal(lr.version, parseSamplerPath(r.version)!.checkpoint, 'bit-identical weights (content-addressed version ids agree)');
        assert.deepEqual(
          lr.losses.map((x) => x.toFixed(5)),
          r.losses.map((x) => x.toFixed(5)),
        );
      } finally {
        await local.close();
      }

      // A second train call continues from the version the first saved (the training model holds it).
      const r2 = await b.train(ex.slice(0, 2), { ...HYPER, epochs: 1 });
      assert.equal(r2.parentVersion, r.version);
      assert.equal(r2.optimizerSteps, 1);
    } finally {
      await served.stop();
    }
  },
);

/**
 * A fault-injecting proxy: 500 on the first forward_backward and the first asample, a reply held
 * past the client's deadline for the second asample, and the first optim_step forwarded to the
 * server but its reply cut (the client cannot know it was applied, so it retries).
 */
function faultyProxy(target: string) {
  const seen = new Map<string, number>();
  const injected: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const route = (req.url ?? '').replace(/^\/api\/v1\//, '');
    const n = (seen.get(route) ?? 0) + 1;
    seen.set(route, n);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if ((route === 'forward_backward' || route === 'asample') && n === 1) {
        injected.push(`500 ${route}`);
        res.writeHead(500, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ detail: 'injected failure' }));
      }
      const forward = () => {
        const up = httpRequest(`${target}${req.url}`, { method: req.method, headers: req.headers }, (r) => {
          const body: Buffer[] = [];
          r.on('data', (c: Buffer) => body.push(c));
          r.on('end', () => {
            if (route === 'optim_step' && n === 1) {
              injected.push('cut optim_step reply');
              return res.socket?.destroy();
            }
            res.writeHead(r.statusCode ?? 502, r.headers);
            res.end(Buffer.concat(body));
          });
        });
        // The slow reply may be forwarded after the test has closed the backend: answer 502, don't crash.
        up.on('error', () => {
          if (!res.headersSent) res.writeHead(502).end();
        });
        up.end(Buffer.concat(chunks));
      };
      if (route === 'asample' && n === 2) {
        injected.push('slow asample');
        setTimeout(forward, 4_000);
      } else forward();
    });
  });
  return new Promise<{ url: string; injected: string[]; close(): void }>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, injected, close: () => server.close() })),
  );
}

test(
  'tinker faults: 500s and a slow reply are retried; a retried optim_step is applied once (the server dedups by idempotency key)',
  { timeout: 900_000 },
  async () => {
    const store = mkdtempSync(join(tmpdir(), 'whale-tinker-faults-'));
    const backend = await EmbeddedBackend.open({ versionsDir: join(store, 'server') });
    const tinker = new EmbeddedTinkerService(backend);
    const server = await startEmbeddedServer({ backend, tinker });
    const proxy = await faultyProxy(server.url);
    const retries: string[] = [];
    try {
      const b = await TinkerBackend.open({
        baseUrl: proxy.url,
        baseModel: 'embedded',
        tokenizer: 'embedded',
        loraRank: 8,
        timeoutMs: 2_000,
        backoffMs: 50,
        onRetry: (r) => retries.push(r.reason),
      });
      const s1 = await b.chat({ messages: PROMPT, params: { temperature: 0, max_tokens: 4 } }); // 500, then fine
      const s2 = await b.chat({ messages: PROMPT, params: { temperature: 0, max_tokens: 4 } }); // held past the deadline, then retried
      assert.deepEqual(s2.completionTokenIds, s1.completionTokenIds);
      const ex = await examples();
      const r = await b.train(ex, { ...HYPER, epochs: 2 });
      assert.equal(r.optimizerSteps, 4);
      assert.deepEqual(proxy.injected.sort(), ['500 asample', '500 forward_backward', 'cut optim_step reply', 'slow asample']);
      assert.ok(
        retries.some((x) => /HTTP 500/.test(x)) && retries.some((x) => /no reply within 2000 ms/.test(x)) && retries.some((x) => /unreachable/.test(x)),
        retries.join('; '),
      );
      assert.equal(tinker.counters.optimSteps, 4, 'four optimizer steps applied, not five');
      assert.ok(tinker.counters.deduplicated >= 1, 'the retried optim_step was recognised by its key');
      assert.equal(tinker.counters.forwardBackward, 4);

      // The same training without faults (locally) gives the same weights: nothing was applied twice.
      const local = await EmbeddedBackend.open({ versionsDir: join(store, 'local') });
      try {
        const lr = await local.train(ex, { ...HYPER, epochs: 2 });
        assert.equal(lr.version, parseSamplerPath(r.version)!.checkpoint);
      } finally {
        await local.close();
      }
    } finally {
      proxy.close();
      await server.close();
      tinker.close();
      await backend.close();
    }
  },
);
