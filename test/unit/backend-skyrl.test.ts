// WHALE's Tinker client against SkyRL's real Tinker server (PyPI skyrl 0.3.0 on CPU JAX, a tiny random
// Qwen3 with Qwen3's real tokenizer; scripts/skyrl-setup.sh): int32 seeds, the end-of-turn stop,
// RSFT that changes the greedy reply, a version reopened and trained in a new process, a server
// restart, a lost optim_step reply that is not applied twice, 50 invocations (some killed) that do
// not exhaust max_lora_adapters, and `backend connect`'s rank check. Skips only when SkyRL is not set up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TinkerBackend } from '../../src/policy/tinker/backend.js';
import { parseSamplerPath } from '../../src/policy/tinker/protocol.js';
import { unpackedAdapterPath } from '../../src/policy/split/unpack.js';
import type { TrainExample } from '../../src/policy/types.js';
import { loadChatTokenizer } from '../../src/policy/tinker/chatTokenizer.js';
import { skyrlSkipReason, startSkyrl, type SkyrlServer } from './skyrl-helpers.js';
import { whale } from './serve-helpers.js';
import { getDomain } from '../../src/domains/index.js';
import { RunStore } from '../../src/archive/runStore.js';
import { Journal } from '../../src/archive/journal.js';

const skip = skyrlSkipReason();
if (skip) console.log(`# backend-skyrl: skipped — ${skip}`);
const tsx = fileURLToPath(new URL('../../node_modules/tsx/dist/esm/index.mjs', import.meta.url));
const child = fileURLToPath(new URL('./skyrl-child.ts', import.meta.url));
const PROMPT = [{ role: 'user' as const, content: 'Say yes.' }];

function open(s: SkyrlServer, store: string, extra: Partial<Parameters<typeof TinkerBackend.open>[0]> = {}) {
  return TinkerBackend.open({ baseUrl: s.url, baseModel: s.baseModel, tokenizer: join(s.baseModel, 'tokenizer.json'), loraRank: 8, storeDir: store, ...extra });
}

function runChild(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ['--import', tsx, child, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.once('exit', (code) => resolve({ code, out, err }));
  });
}

/** Starts a child that holds its model, and SIGKILLs it once it has sampled (a crashed CLI invocation). */
function killedChild(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--import', tsx, child, ...args, 'hold'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.stdout.on('data', () => p.kill('SIGKILL'));
    p.once('exit', (_code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`held child exited on its own: ${err}`))));
  });
}

/** The LoRA weights in a sampler checkpoint (SkyRL writes <checkpoints>/<model>/sampler_weights/<name>.tar.gz). */
function adapterBytes(s: SkyrlServer, version: string): Buffer {
  const p = parseSamplerPath(version)!;
  const tgz = join(s.checkpoints, p.modelId, 'sampler_weights', `${p.checkpoint}.tar.gz`);
  const out = mkdtempSync(join(tmpdir(), 'whale-adapter-'));
  const r = spawnSync('tar', ['xzf', tgz, '-C', out]);
  assert.equal(r.status, 0, String(r.stderr));
  return readFileSync(join(out, 'adapter_model.safetensors'));
}

test('tinker client × SkyRL 0.3.0 (real server, tiny Qwen3)', { skip, timeout: 1_800_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'whale-skyrl-'));
  const store = join(dir, 'store');
  mkdirSync(store);
  const t0 = Date.now();
  const lap = (what: string) => console.log(`# backend-skyrl: ${what} at ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  let server = await startSkyrl(join(dir, 'server'), { maxLoraAdapters: 4 });
  lap('server up');
  const backend = await open(server, store);
  const yes = 9693; // "yes" in Qwen3's vocabulary
  assert.equal(backend.tokenizer.decode([yes]), 'yes');
  const imEnd = backend.tokenizer.endOfTurn!.ids[0];
  assert.equal(backend.tokenizer.endOfTurn!.texts[0], '<|im_end|>');
  const examples: TrainExample[] = [0, 1, 2, 3].map(() => ({ promptTokenIds: backend.encodeChat(PROMPT), completionTokenIds: [yes, imEnd], lossMask: [1, 1] }));
  try {
    let trained = '';

    await t.test(
      "backend connect reads the server's max LoRA rank: an asked rank above it is bad input (exit 2, no stack trace); none asked comes down to it",
      () => {
        const cwd = mkdtempSync(join(tmpdir(), 'whale-connect-'));
        const tok = join(server.baseModel, 'tokenizer.json');
        const bad = whale(['backend', 'connect', server.url, '--kind', 'tinker', '--tokenizer', tok, '--lora-rank', '16', '--dry-run'], cwd);
        assert.equal(bad.code, 2, bad.stderr);
        assert.match(bad.stderr, /--lora-rank: LoRA rank 16 is above the server's maximum 8/);
        assert.doesNotMatch(bad.stderr, /internal error|\n\s+at /);
        const good = whale(['backend', 'connect', server.url, '--kind', 'tinker', '--tokenizer', tok, '--dry-run'], cwd);
        assert.equal(good.code, 0, good.stderr);
        const section = JSON.parse(good.stdout.trim().split('\n').at(-1)!).backend;
        assert.equal(section.loraRank, 8);
        assert.equal(section.baseModel, server.baseModel);
      },
    );

    await t.test('seeds beyond int32 and 8 concurrent rollouts of the base model all sample', async () => {
      const seeds = Array.from({ length: 8 }, (_, i) => 2 ** 32 - 1 - i);
      const rs = await Promise.all(seeds.map((seed) => backend.chat({ messages: PROMPT, params: { temperature: 1, max_tokens: 6, seed } })));
      for (const r of rs)
        assert.ok(r.completionTokenIds!.length >= 1 && r.completionTokenIds!.length <= 6 && r.logprobs!.length === r.completionTokenIds!.length);
      lap('8 base samples');
    });

    await t.test('RSFT on "yes<|im_end|>" trains: the greedy reply becomes "yes" and stops at the end-of-turn token', async () => {
      const before = await backend.chat({ messages: PROMPT, params: { temperature: 0, max_tokens: 8 } });
      const r = await backend.train(examples, { learningRate: 0.02, minibatchSize: 4, epochs: 12 });
      lap(`12 optimizer steps (losses ${r.losses.map((x) => x.toFixed(2)).join(' ')})`);
      assert.equal(r.optimizerSteps, 12);
      assert.ok(r.losses.at(-1)! < r.losses[0] / 4, `the loss fell: ${r.losses.join(' ')}`);
      await backend.publish(r.version);
      const after = await backend.chat({ messages: PROMPT, params: { temperature: 0, max_tokens: 8 } });
      assert.deepEqual(after.completionTokenIds, [yes, imEnd], `before: ${JSON.stringify(before.text)}, after: ${JSON.stringify(after.text)}`);
      assert.equal(after.text, 'yes');
      assert.equal(after.finishReason, 'stop');
      trained = r.version;
      // The split publisher hands vLLM a folder: SkyRL's sampler .tar.gz is unpacked beside it.
      const p = parseSamplerPath(r.version)!;
      const folder = unpackedAdapterPath(join(server.checkpoints, p.modelId, 'sampler_weights', `${p.checkpoint}.tar.gz`));
      assert.equal(JSON.parse(readFileSync(join(folder, 'adapter_config.json'), 'utf8')).r, 8);
      assert.ok(existsSync(join(folder, 'adapter_model.safetensors')));
    });

    await t.test('a new process opened at the trained version trains from its weights (load_weights from the recorded checkpoint)', async () => {
      const r = await runChild([server.url, store, trained, 'train', JSON.stringify(examples)]);
      assert.equal(r.code, 0, r.err);
      const out = JSON.parse(r.out.trim().split('\n').at(-1)!);
      assert.ok(out.losses[0] < 0.5, `it starts where training ended (loss ${out.losses[0]}), not at the base model's`);
      lap('second weight phase in a new process');
    });

    await t.test('after a server restart the trained version samples again (put back on demand) and training continues', async () => {
      await server.stop();
      server = await startSkyrl(join(dir, 'server'), { port: server.port, maxLoraAdapters: 4 });
      lap('server restarted');
      const r = await backend.chat({ messages: PROMPT, params: { temperature: 0, max_tokens: 8 } });
      assert.deepEqual(r.completionTokenIds, [yes, imEnd]);
      const tr = await backend.train(examples.slice(0, 2), { learningRate: 0.01, minibatchSize: 2, epochs: 1 });
      assert.equal(tr.parentVersion, trained);
      assert.ok(tr.losses[0] < 0.5, `trained from the trained weights: ${tr.losses}`);
      lap('sampled and trained after the restart');
    });

    await t.test('50 invocations in a row, five of them killed while they hold a model, never exhaust max_lora_adapters (3 slots)', async () => {
      for (let i = 1; i <= 50; i++) {
        if (i % 10 === 5) {
          await killedChild([server.url, store, trained]);
          continue;
        }
        const r = await runChild([server.url, store, trained, 'chat']);
        assert.equal(r.code, 0, `invocation ${i}: ${r.err}`);
        assert.equal(JSON.parse(r.out.trim().split('\n').at(-1)!).text, 'yes', `invocation ${i}`);
      }
      lap('50 invocations');
      assert.doesNotMatch(server.log(), /Maximum number of LoRA adapters/);
    });
    await backend.close();
    const recorded = readdirSync(join(store, 'tinker')).flatMap((k) =>
      existsSync(join(store, 'tinker', k, 'models')) ? readdirSync(join(store, 'tinker', k, 'models')) : [],
    );
    assert.deepEqual(recorded, [], 'no model left on record once the last invocation closed');
  } finally {
    await backend.close();
    await server.stop();
  }
});

const cli = fileURLToPath(new URL('./skyrl-cli.ts', import.meta.url));
function whaleCoin(args: string[], cwd: string): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', tsx, cli, ...args], { cwd, encoding: 'utf8', timeout: 1_200_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test(
  'whale CLI × SkyRL: a weight-only run trains (accepted > 0), its second phase in a new process, a --resume after a server restart',
  { skip, timeout: 2_400_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'whale-skyrl-run-'));
    const t0 = Date.now();
    const lap = (what: string) => console.log(`# backend-skyrl (run): ${what} at ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    let server = await startSkyrl(join(dir, 'server'), { maxLoraAdapters: 4 });
    const project = join(dir, 'project');
    mkdirSync(project);
    cpSync(getDomain('ramble').h0Dir, join(project, 'h0'), { recursive: true });
    writeFileSync(
      join(project, 'whale.config.json'),
      JSON.stringify({
        name: 'skyrl',
        method: 'weight-only',
        domain: { id: 'coin', options: { sizes: { weight: 8, harness: 4, val: 4, test: 4 } } },
        harness: 'h0',
        backend: { kind: 'tinker', baseUrl: server.url, baseModel: server.baseModel, tokenizer: join(server.baseModel, 'tokenizer.json'), loraRank: 8 },
        evaluation: { k: 1, concurrency: 8 },
        rsft: { batchPrompts: 4, groupSize: 2, minibatch: 4, learningRate: 0.001 },
        schedule: { epochs: 0.5, iterations: 1, cycles: 2 }, // weight-only: 2 × cycles phases of one step
        sandbox: { wallMs: 600_000, cpuMs: 120_000 },
      }),
    );
    const journal = () => {
      const runs = new RunStore(join(project, '.whale'));
      const id = runs.current();
      return id ? [...new Journal(runs.journalFile(id)).all()] : [];
    };
    try {
      const first = whaleCoin(['step', '--new'], project);
      assert.equal(first.code, 0, first.stderr);
      lap('phase 1 (one process)');
      const second = whaleCoin(['step'], project);
      assert.equal(second.code, 0, second.stderr);
      lap('phase 2 (a new process)');
      await server.stop();
      server = await startSkyrl(join(dir, 'server'), { port: server.port, maxLoraAdapters: 4 });
      const resumed = whaleCoin(['run', '--resume'], project);
      assert.equal(resumed.code, 0, resumed.stderr);
      lap('phases 3 and 4 (run --resume after a server restart)');
      const j = journal();
      const steps = j.filter((e) => e.type === 'weight_step') as unknown as {
        accepted: number;
        versionBefore: string;
        versionAfter: string;
        optimizerSteps?: number;
      }[];
      assert.equal(steps.length, 4, 'four weight phases of one step');
      for (const s of steps) {
        assert.ok(s.accepted > 0, `accepted rollouts in every step: ${JSON.stringify(s)}`);
        assert.match(s.versionAfter, /^tinker:\/\/model_/, 'every step trained a new version');
      }
      for (let i = 1; i < steps.length; i++)
        assert.equal(steps[i].versionBefore, steps[i - 1].versionAfter, 'each phase continues from the version the previous one made');
      assert.equal(j.filter((e) => e.type === 'phase_completed').length, 4);
      assert.ok(j.some((e) => e.type === 'run_completed'));
      assert.doesNotMatch(server.log(), /Maximum number of LoRA adapters/);
    } finally {
      await server.stop();
    }
  },
);

test(
  'tinker client × SkyRL: a lost optim_step reply is not applied twice — the call reruns from the parent and gives the same weights as a clean run',
  { skip, timeout: 1_200_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'whale-skyrl-opt-'));
    const t0 = Date.now();
    const lap = (what: string) => console.log(`# backend-skyrl (optim_step): ${what} at ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    const server = await startSkyrl(join(dir, 'server'), { maxLoraAdapters: 4 });
    const tok = await loadChatTokenizer(join(server.baseModel, 'tokenizer.json'));
    const examples: TrainExample[] = [0, 1, 2, 3].map(() => ({
      promptTokenIds: tok.encodeChat(PROMPT, { addGenerationPrompt: true }),
      completionTokenIds: [9693, tok.endOfTurn!.ids[0]],
      lossMask: [1, 1],
    }));
    try {
      const calls: string[] = [];
      let failed = false;
      const proxy = createServer((req: IncomingMessage, res: ServerResponse) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          calls.push(req.url!);
          const up = httpRequest({ host: '127.0.0.1', port: server.port, path: req.url, method: req.method, headers: req.headers }, (ur) => {
            const body: Buffer[] = [];
            ur.on('data', (c: Buffer) => body.push(c));
            ur.on('end', () => {
              if (req.url === '/api/v1/optim_step' && !failed) {
                failed = true; // applied on the server; the client only sees a 500
                res.writeHead(500, { 'content-type': 'application/json' }).end('{"detail":"proxy: reply lost"}');
                return;
              }
              res.writeHead(ur.statusCode!, ur.headers).end(Buffer.concat(body));
            });
          });
          up.end(Buffer.concat(chunks));
        });
      });
      await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
      const proxied = { ...server, url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` };
      try {
        const hyper = { learningRate: 0.05, minibatchSize: 2, epochs: 1 };
        const clean = await open(server, join(dir, 'clean'), { loraSeed: 11 });
        const a = await clean.train(examples, hyper);
        await clean.close();
        const faulty = await open(proxied, join(dir, 'faulty'), { loraSeed: 11 });
        const b = await faulty.train(examples, hyper);
        await faulty.close();
        assert.ok(failed, 'the fault was injected');
        assert.equal(calls.filter((c) => c === '/api/v1/optim_step').length, 3, 'one optim_step lost, then the call ran again from the base: 1 + 2');
        assert.deepEqual(b.losses, a.losses);
        assert.ok(adapterBytes(server, a.version).equals(adapterBytes(server, b.version)), 'bit-identical LoRA weights');
        lap('retried optim_step');
      } finally {
        proxy.close();
      }
    } finally {
      await server.stop();
    }
  },
);
