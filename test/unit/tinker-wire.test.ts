// WHALE's Tinker client in both dialects against `whale serve` as a real process: protobuf (what tinker
// SDK >= 0.25, SkyRL >= 0.4 and hosted Tinker speak) and JSON (SDK <= 0.24, SkyRL 0.3.0). A recording
// proxy in between shows what travelled; the same training and sampling give the same numbers either way.
// (The switch to protobuf on a 415 is exercised against SkyRL 0.4.0 itself in backend-skyrl.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TinkerBackend } from '../../src/policy/tinker/backend.js';
import { TinkerClient, type TinkerWire } from '../../src/policy/tinker/client.js';
import type { Datum } from '../../src/policy/tinker/protocol.js';
import { loadChatTokenizer } from '../../src/policy/tinker/chatTokenizer.js';
import type { TrainExample, TrainHyper } from '../../src/policy/types.js';
import { startServe } from './serve-helpers.js';

const PROMPT = [{ role: 'user' as const, content: 'What colour is the sky?' }];
const HYPER: TrainHyper = { learningRate: 3e-3, minibatchSize: 2, epochs: 2, seed: 11 };

interface Exchange {
  route: string;
  sent: string;
  answered: string;
  status: number;
}

/** Forwards everything to `target` and notes each exchange's route and content types. */
function recordingProxy(target: string) {
  const log: Exchange[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const up = httpRequest(`${target}${req.url}`, { method: req.method, headers: req.headers }, (r) => {
        const body: Buffer[] = [];
        r.on('data', (c: Buffer) => body.push(c));
        r.on('end', () => {
          const route = (req.url ?? '').replace(/^\/api\/v1\//, '');
          log.push({ route, sent: String(req.headers['content-type'] ?? ''), answered: String(r.headers['content-type'] ?? ''), status: r.statusCode ?? 0 });
          res.writeHead(r.statusCode ?? 502, r.headers);
          res.end(Buffer.concat(body));
        });
      });
      up.on('error', () => {
        if (!res.headersSent) res.writeHead(502).end();
      });
      up.end(Buffer.concat(chunks));
    });
  });
  return new Promise<{ url: string; log: Exchange[]; close(): void }>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, log, close: () => server.close() })),
  );
}

async function examples(): Promise<TrainExample[]> {
  const tok = await loadChatTokenizer('embedded');
  const promptTokenIds = tok.encodeChat(PROMPT, { addGenerationPrompt: true });
  const completionTokenIds = tok.encodeChat([...PROMPT, { role: 'assistant', content: 'the sky is blue' }], {}).slice(promptTokenIds.length);
  return [0, 1, 2, 3].map(() => ({ promptTokenIds, completionTokenIds, lossMask: completionTokenIds.map(() => 1) }));
}

/** Samples, trains and samples the trained version through one wire; answers the numbers and what travelled. */
async function roundTrip(serverUrl: string, wire: TinkerWire) {
  const proxy = await recordingProxy(serverUrl);
  try {
    const b = await TinkerBackend.open({ baseUrl: proxy.url, baseModel: 'embedded', tokenizer: 'embedded', loraRank: 8, wire });
    try {
      const greedy = { temperature: 0, max_tokens: 8 };
      const before = await b.chat({ messages: PROMPT, params: greedy });
      const r = await b.train(await examples(), HYPER);
      await b.publish(r.version);
      const after = await b.chat({ messages: PROMPT, params: greedy });
      return { wire: await b.client.forwardBackwardWire(), before, losses: r.losses, after, log: proxy.log };
    } finally {
      await b.close();
    }
  } finally {
    proxy.close();
  }
}

test('tinker wire: protobuf and JSON against whale serve (real process) carry the same training and sampling', { timeout: 900_000 }, async () => {
  const served = await startServe(mkdtempSync(join(tmpdir(), 'whale-tinker-wire-')));
  try {
    const proto = await roundTrip(served.url, 'protobuf');
    const json = await roundTrip(served.url, 'json');
    const auto = await roundTrip(served.url, 'auto');

    const PB = /application\/x-protobuf/;
    const fb = (x: typeof proto) => x.log.filter((e) => e.route === 'forward_backward');
    assert.equal(fb(proto).length, 4, '4 examples, minibatch 2, 2 epochs');
    assert.ok(
      fb(proto).every((e) => PB.test(e.sent) && e.status === 200),
      `every forward_backward went as protobuf: ${JSON.stringify(fb(proto))}`,
    );
    const protoResults = proto.log.filter((e) => e.route === 'retrieve_future' && PB.test(e.answered));
    const submitted = proto.log.filter((e) => e.route === 'forward_backward' || e.route === 'asample');
    assert.equal(protoResults.length, submitted.length, 'every sample and forward_backward result came back as protobuf');
    assert.ok(
      proto.log.filter((e) => e.route !== 'forward_backward').every((e) => !PB.test(e.sent)),
      'only forward_backward is sent as protobuf',
    );

    assert.equal(json.wire, 'json');
    assert.ok(
      json.log.every((e) => !PB.test(e.sent) && !PB.test(e.answered)),
      'the JSON wire sends and receives no protobuf (SkyRL 0.3.0 reads only JSON)',
    );
    assert.equal(fb(json).length, 4);

    assert.equal(auto.wire, 'protobuf', "auto picks protobuf: whale serve's client/config answers the SDK >= 0.25 flags");
    assert.ok(fb(auto).every((e) => PB.test(e.sent)));

    // The same model, seed and data: the two dialects must carry the same numbers.
    assert.deepEqual(proto.before.completionTokenIds, json.before.completionTokenIds);
    assert.deepEqual(proto.losses, json.losses, `losses: protobuf ${proto.losses.join(' ')} / json ${json.losses.join(' ')}`);
    assert.deepEqual(auto.losses, proto.losses);
    assert.ok(proto.losses.every(Number.isFinite) && proto.losses.at(-1)! < proto.losses[0], `the loss fell: ${proto.losses.join(' ')}`);
    assert.deepEqual(proto.after.completionTokenIds, json.after.completionTokenIds, 'the trained version samples the same greedy reply');
    // Protobuf carries float32 logprobs; whale serve's JSON carries the doubles it computed: equal to float32 precision.
    const [pl, jl] = [proto.after.logprobs!, json.after.logprobs!];
    assert.equal(pl.length, jl.length);
    assert.ok(
      pl.every((x, i) => x === Math.fround(jl[i])),
      `the same logprobs as float32: ${pl.join(' ')} / ${jl.join(' ')}`,
    );
    assert.ok(proto.after.logprobs!.length > 0 && proto.after.logprobs!.every((x) => Number.isFinite(x) && x <= 0));

    // Per-token logprobs of forward_backward (the loss above is the server's loss:sum metric): the same
    // datum on a fresh model through each wire, and −Σ w·logprob is the server's own loss.
    const [ex] = await examples();
    const full = [...ex.promptTokenIds, ...ex.completionTokenIds];
    const weights = full.slice(1).map((_, t) => (t + 1 >= ex.promptTokenIds.length ? 1 : 0));
    const datum: Datum = {
      model_input: { chunks: [{ type: 'encoded_text', tokens: full.slice(0, -1) }] },
      loss_fn_inputs: { target_tokens: { data: full.slice(1), dtype: 'int64' }, weights: { data: weights, dtype: 'float32' } },
    };
    const outputs = await Promise.all(
      (['protobuf', 'json'] as const).map(async (wire) => {
        const c = new TinkerClient({ baseUrl: served.url, wire });
        const model = await c.createModel(await c.createSession(), 'embedded', 8);
        const out = await c.forwardBackward(model, [datum], {});
        await c.unloadModel(model);
        return out;
      }),
    );
    const [pOut, jOut] = outputs.map((o) => o.loss_fn_outputs[0].logprobs.data);
    assert.equal(pOut.length, full.length - 1);
    assert.ok(
      pOut.every((x, i) => x === Math.fround(jOut[i])),
      'forward_backward logprobs agree to float32',
    );
    const loss = -pOut.reduce((a, lp, t) => a + lp * weights[t], 0);
    assert.ok(Math.abs(loss - outputs[0].metrics['loss:sum']) < 1e-4 * Math.max(1, loss), `−Σ w·logprob ${loss} = loss:sum ${outputs[0].metrics['loss:sum']}`);
  } finally {
    await served.stop();
  }
});
