// The split backend across TWO `whale serve` processes: a trainer (Tinker routes, writing each saved
// version to a shared folder) and a sampler (OpenAI routes plus vLLM's runtime LoRA routes, playing
// vLLM). A trained version is published by POST /v1/load_lora_adapter and sampled by its adapter
// name; a real weight phase runs through it; a publish that fails loses no training; a resumed
// backend does not publish twice.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBackend } from '../../src/policy/index.js';
import type { BackendConfig } from '../../src/core/config.js';
import { BackendSchema } from '../../src/core/config.js';
import { SplitBackend } from '../../src/policy/split/splitBackend.js';
import { PublishError } from '../../src/policy/split/vllmLora.js';
import { Journal } from '../../src/archive/journal.js';
import { RunStore } from '../../src/archive/runStore.js';
import type { TrainExample, TrainHyper } from '../../src/policy/types.js';
import { startServe, tinyProject, whaleAsync } from './serve-helpers.js';

const PROMPT = [{ role: 'user' as const, content: 'What colour is the sky?' }];
const TARGET = ' the sky is blue and the sea is green';
const HYPER: TrainHyper = { learningRate: 3e-3, minibatchSize: 2, epochs: 6, seed: 7 };
const GREEDY = { temperature: 0, max_tokens: 12 };

async function models(url: string): Promise<{ id: string; root?: string }[]> {
  return ((await (await fetch(`${url}/v1/models`)).json()) as { data: { id: string; root?: string }[] }).data;
}

/** Four copies of one answer, on the prompt ids the sampler itself rendered (as rollouts give them). */
async function examples(promptTokenIds: number[]): Promise<TrainExample[]> {
  const { loadTokenizer } = await import('../../src/policy/embedded/tokenizer.js');
  const { resourcesDir } = await import('../../src/core/resources.js');
  const word = loadTokenizer(join(resourcesDir(), 'model', 'base', 'vocab.json'));
  const completionTokenIds = [...word.encode(TARGET), word.idOf('<|end|>')!];
  return [0, 1, 2, 3].map(() => ({ promptTokenIds, completionTokenIds, lossMask: completionTokenIds.map(() => 1) }));
}

/** The trainer process (exporting saved versions to a shared folder) and the sampler process. */
async function twoProcesses() {
  const root = mkdtempSync(join(tmpdir(), 'whale-split-'));
  const shared = join(root, 'shared-adapters');
  const trainer = await startServe(join(root, 'trainer'), 0, ['--export-dir', shared]);
  const sampler = await startServe(join(root, 'sampler'));
  return { root, shared, trainer, sampler, baseId: (await models(sampler.url))[0].id };
}

function splitConfig(sampler: string, samplerModel: string, trainer: string, adapterDir: string, publish: Record<string, unknown> = {}): BackendConfig {
  return BackendSchema.parse({
    kind: 'split',
    sampler: { kind: 'openai-compatible', baseUrl: `${sampler}/v1`, model: samplerModel },
    trainer: { kind: 'tinker', baseUrl: trainer, baseModel: 'embedded', tokenizer: 'embedded' },
    publish: { kind: 'vllm-lora', adapterDir, ...publish },
  });
}

test(
  'split: the trainer process trains, the sampler process loads the published version by name and samples differently; old adapters are unloaded; a failed publish loses no training; a reopened backend does not publish twice',
  { timeout: 900_000 },
  async () => {
    const { root, shared, trainer, sampler, baseId } = await twoProcesses();
    try {
      const store = join(root, 'client');
      const cfg = splitConfig(sampler.url, baseId, trainer.url, shared, { keepLoaded: 1 });
      const b = (await createBackend(cfg, { storeDir: store, runId: 'r1' })) as SplitBackend;
      const caps = await b.capabilities();
      assert.deepEqual([caps.update, caps.tokenIds, caps.logprobs], ['full', true, true], 'training from the trainer, token ids and logprobs from the sampler');
      assert.equal(b.currentVersion(), 'base:embedded');
      const before = await b.chat({ messages: PROMPT, params: GREEDY });
      assert.equal(before.version, 'base:embedded');

      // A publish that fails (the sampler cannot read the path): a clear error, nothing made current.
      const wrong = (await createBackend(splitConfig(sampler.url, baseId, trainer.url, join(root, 'not-shared')), {
        storeDir: store,
        runId: 'r2',
      })) as SplitBackend;
      const ex = await examples(before.promptTokenIds!);
      let steps = 0;
      const r = await wrong.train(ex, HYPER, { onStep: () => steps++ });
      assert.equal(steps, 12, 'trained: 4 examples, minibatch 2, 6 epochs');
      await assert.rejects(
        wrong.publish(r.version),
        (e: unknown) =>
          e instanceof PublishError &&
          /could not publish policy version tinker:\/\/.*loading adapter 'whale-r2-v1' from '.*not-shared\/[0-9a-f]{16}' failed.*No adapter found.*--enable-lora.*VLLM_ALLOW_RUNTIME_LORA_UPDATING=True/s.test(
            e.message,
          ),
      );
      assert.equal(wrong.currentVersion(), 'base:embedded', 'the unpublished version did not become current');
      await wrong.close();
      // Run again with the path fixed (the same run store record): the training is not done again.
      const fixed = (await createBackend(splitConfig(sampler.url, baseId, trainer.url, shared), { storeDir: store, runId: 'r2' })) as SplitBackend;
      steps = 0;
      const again = await fixed.train(ex, HYPER, { onStep: () => steps++ });
      assert.equal(steps, 0, 'no optimizer step ran again');
      assert.deepEqual(again, r, 'the recorded training result');
      await fixed.publish(again.version);
      assert.equal(fixed.currentVersion(), r.version);
      await fixed.close();

      // The round trip on run r1: train on the trainer process, publish, sample on the sampler process.
      const t = await b.train(ex, HYPER);
      assert.equal(t.version.split('/').at(-1), r.version.split('/').at(-1), 'the same weights (deterministic training from the same version and examples)');
      await b.publish(t.version);
      const after = await b.chat({ messages: PROMPT, params: GREEDY });
      assert.equal(after.version, t.version, 'rollouts record the trainer version id');
      assert.notDeepEqual(after.completionTokenIds, before.completionTokenIds, 'the published version samples differently');
      const listed = await models(sampler.url);
      const v1 = listed.find((m) => m.id === 'whale-r1-v1');
      assert.ok(v1, `the sampler lists the adapter: ${listed.map((m) => m.id).join(', ')}`);
      assert.ok(t.version.endsWith(v1.root!), 'served from the exported snapshot of that version');
      const base = await b.chat({ messages: PROMPT, params: GREEDY, version: 'base:embedded' });
      assert.deepEqual(base.completionTokenIds, before.completionTokenIds, 'the base stays samplable and unchanged');

      // A second version: with keepLoaded 1 the first is unloaded, and reloaded when asked for.
      const t2 = await b.train(ex.slice(0, 2), { ...HYPER, epochs: 1 });
      await b.publish(t2.version);
      let names = (await models(sampler.url)).map((m) => m.id);
      assert.ok(names.includes('whale-r1-v2') && !names.includes('whale-r1-v1'), names.join(', '));
      const old = await b.chat({ messages: PROMPT, params: GREEDY, version: t.version });
      assert.deepEqual(old.completionTokenIds, after.completionTokenIds, 'an unloaded version is loaded again on demand, same samples');
      const record = JSON.parse(readFileSync(join(store, 'runs', 'r1', 'published-adapters.json'), 'utf8')) as {
        adapters: { version: string; name: string }[];
      };
      assert.deepEqual(
        record.adapters.map((a) => a.name),
        ['whale-r1-v1', 'whale-r1-v2'],
        'one name per version, recorded in the run store',
      );
      await b.close();

      // Reopened (a resumed run at v2): v2 is loaded already ("already loaded" means done), no new
      // name is given, and v1 (reloaded on demand above) is unloaded as outside the kept window.
      const resumed = (await createBackend(cfg, { storeDir: store, runId: 'r1', version: t2.version })) as SplitBackend;
      assert.equal(resumed.currentVersion(), t2.version);
      const r2 = await resumed.chat({ messages: PROMPT, params: GREEDY });
      assert.equal(r2.version, t2.version);
      names = (await models(sampler.url)).map((m) => m.id);
      assert.deepEqual(
        names.filter((n) => n.startsWith('whale-r1-')),
        ['whale-r1-v2'],
      );
      assert.equal(
        (JSON.parse(readFileSync(join(store, 'runs', 'r1', 'published-adapters.json'), 'utf8')) as { adapters: unknown[] }).adapters.length,
        2,
        'no new name on resume',
      );

      // The sampler process restarts (vLLM forgets runtime adapters): the next rollout loads it again.
      await sampler.stop();
      const sampler2 = await startServe(join(root, 'sampler'), sampler.port);
      try {
        assert.ok(!(await models(sampler2.url)).some((m) => m.id.startsWith('whale-')), 'the restarted sampler holds no adapter');
        const r3 = await resumed.chat({ messages: PROMPT, params: GREEDY });
        assert.deepEqual(r3.completionTokenIds, r2.completionTokenIds, 'same version, same greedy sample after the sampler restarted');
        await resumed.close();
      } finally {
        await sampler2.stop();
      }
    } finally {
      await sampler.stop();
      await trainer.stop();
    }
  },
);

test('split: a weight phase of a real WHALE run trains on one process and rolls out on the other', { timeout: 900_000 }, async () => {
  const { shared, trainer, sampler, baseId } = await twoProcesses();
  try {
    const dir = tinyProject(
      {
        kind: 'split',
        sampler: { kind: 'openai-compatible', baseUrl: `${sampler.url}/v1`, model: baseId },
        trainer: { kind: 'tinker', baseUrl: trainer.url, baseModel: 'embedded', tokenizer: 'embedded' },
        publish: { kind: 'vllm-lora', adapterDir: shared },
      },
      { method: 'weight-only', schedule: { epochs: 0.375, iterations: 2, cycles: 1 }, sandbox: { wallMs: 300_000, cpuMs: 60_000 } },
    );
    // The same sampler behind a proxy that answers the LoRA routes as vLLM does when started
    // without VLLM_ALLOW_RUNTIME_LORA_UPDATING (FastAPI's plain 404): refused before any rollout.
    const noLora = await withoutLoraRoutes(sampler.url);
    try {
      const refusedDir = tinyProject(
        {
          kind: 'split',
          sampler: { kind: 'openai-compatible', baseUrl: `${noLora.url}/v1`, model: baseId },
          trainer: { kind: 'tinker', baseUrl: trainer.url, baseModel: 'embedded', tokenizer: 'embedded' },
          publish: { kind: 'vllm-lora', adapterDir: shared },
        },
        { method: 'weight-only' },
      );
      const refused = await whaleAsync(['run'], refusedDir);
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr, /has no runtime LoRA loading.*--enable-lora --max-lora-rank.*VLLM_ALLOW_RUNTIME_LORA_UPDATING=True/);
      assert.ok(!existsSync(join(refusedDir, '.whale', 'results')) || readdirSync(join(refusedDir, '.whale', 'results')).length === 0, 'no rollout ran');
      assert.ok(noLora.chats() <= 1, 'at most the capability probe reached chat completions');
    } finally {
      noLora.close();
    }

    const r = await whaleAsync(['run'], dir);
    assert.equal(r.code, 0, r.stderr);
    const runs = new RunStore(join(dir, '.whale'));
    const runId = runs.current()!;
    const j = new Journal(runs.journalFile(runId)).all();
    const steps = j.filter((e) => e.type === 'weight_step');
    assert.equal(steps.length, 2);
    const trained = steps.filter((s) => s.trained);
    assert.ok(trained.length >= 1 && trained.every((s) => String(s.versionAfter).startsWith('tinker://')), 'a step trained on the trainer process');
    const record = JSON.parse(readFileSync(join(dir, '.whale', 'runs', runId, 'published-adapters.json'), 'utf8')) as {
      adapters: { version: string; name: string }[];
    };
    const last = String(steps.at(-1)!.versionAfter);
    const published = record.adapters.find((a) => a.version === last);
    assert.ok(published && published.name.startsWith(`whale-${runId}-v`), JSON.stringify(record.adapters));
    assert.ok(
      (await models(sampler.url)).some((m) => m.id === published.name),
      'the current version is loaded in the sampler',
    );
    if (steps[1].versionBefore !== 'base:embedded')
      assert.ok(existsSync(join(shared, String(steps[1].versionBefore).split('/').at(-1)!)), 'the version the second step rolled out with was exported');
  } finally {
    await sampler.stop();
    await trainer.stop();
  }
});

/** Forwards to `target`, except the runtime LoRA routes, answered as a vLLM without them would. */
function withoutLoraRoutes(target: string): Promise<{ url: string; chats(): number; close(): void }> {
  let chats = 0;
  const server = createServer((req, res) => {
    if (/_lora_adapter$/.test(req.url ?? '')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ detail: 'Not Found' }));
    }
    if ((req.url ?? '').includes('/chat/completions')) chats++;
    const up = httpRequest(`${target}${req.url}`, { method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    req.pipe(up);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, chats: () => chats, close: () => server.close() }),
    ),
  );
}
