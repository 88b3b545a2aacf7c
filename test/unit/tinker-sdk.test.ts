// Code nobody here wrote against `whale serve`: the official `tinker` Python SDK — pinned 0.24.1 (the
// last that speaks JSON) and 0.38.0 (the newest: protobuf forward_backward, protobuf results,
// client/config, GET samplers/{id}) — runs a tinker-cookbook-style supervised loop (the loss computed
// from loss_fn_outputs logprobs, forward() first), samples through a sampling session and a named
// checkpoint, and loads the server's tokenizer with get_tokenizer() offline; the official `openai`
// Python client chats with token ids and logprobs and meets clear refusals. The venvs come from
// .ci/run (WHALE_PY_CLIENTS, WHALE_PY_TINKER_NEW); without one its test says it skipped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadChatTokenizer } from '../../src/policy/tinker/chatTokenizer.js';
import { loadTokenizer } from '../../src/policy/embedded/tokenizer.js';
import { resourcesDir } from '../../src/core/resources.js';
import { startServe } from './serve-helpers.js';

const python = process.env.WHALE_PY_CLIENTS;
const skip = python ? undefined : 'WHALE_PY_CLIENTS (a python with tinker==0.24.1 and openai installed) is not set; .ci/run sets it';
if (skip) console.log(`# tinker-sdk: skipped — ${skip}`);
const script = (name: string) => fileURLToPath(new URL(`../python/${name}`, import.meta.url));

const pythonNew = process.env.WHALE_PY_TINKER_NEW;
const skipNew = pythonNew ? undefined : 'WHALE_PY_TINKER_NEW (a python with tinker==0.38.0, jinja2) is not set; .ci/run sets it';
if (skipNew) console.log(`# tinker-sdk 0.38: skipped — ${skipNew}`);

function py(args: string[], exe = python!): unknown {
  // HF_HUB_OFFLINE: get_tokenizer() must load the folder whale serve reports, never the hub
  const r = spawnSync(exe, args, { encoding: 'utf8', timeout: 300_000, env: { ...process.env, HF_HUB_OFFLINE: '1' } });
  assert.equal(r.status, 0, `${args[0]}: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!);
}

interface LoopResult {
  sdk: string;
  forward_loss: number;
  tokenizer_id: string;
  encoded: number[][];
  decoded: string[];
  chat: number[][] | null;
  losses: number[];
  sampled: number[];
  named_path: string;
  named_sampled: number[];
}

const TEXTS = ['What colour is the sky?', 'the pet of Ann is a cat .\n', 'zebra  Ünïcode\ttabs'];

/** The supervised loop with one SDK; checks what every SDK version must get right. */
async function sdkLoop(exe: string, version: string): Promise<LoopResult> {
  const served = await startServe(join(mkdtempSync(join(tmpdir(), 'whale-sdk-')), 'server'));
  try {
    const chat = await loadChatTokenizer('embedded');
    const word = loadTokenizer(join(resourcesDir(), 'model', 'base', 'vocab.json'));
    const prompt = chat.encodeChat([{ role: 'user', content: 'What colour is the sky?' }], { addGenerationPrompt: true });
    const completion = [...word.encode(' the sky is blue'), word.idOf('<|end|>')!];
    const r = py([script('tinker_sdk_loop.py'), served.url, JSON.stringify({ prompt, completion, steps: 8, lr: 3e-3, texts: TEXTS })], exe) as LoopResult;
    assert.equal(r.sdk, version, 'the pinned SDK ran');
    assert.equal(r.losses.length, 8);
    assert.ok(r.losses[0] > 1, `the first loss comes from real logprobs: ${r.losses[0]}`);
    assert.ok(Math.abs(r.forward_loss - r.losses[0]) < 1e-4, `forward() accumulates nothing: ${r.forward_loss} then ${r.losses[0]}`);
    assert.ok(r.losses.at(-1)! < r.losses[0] / 3, `the supervised loop trains: ${r.losses.map((x) => x.toFixed(2)).join(' ')}`);
    assert.deepEqual(r.sampled, completion, 'the sampling session samples the trained weights (greedy = the trained completion)');
    assert.match(r.named_path, /^tinker:\/\/model_\w+\/sampler_weights\/whale-sdk-named$/, 'the checkpoint keeps its name');
    assert.deepEqual(r.named_sampled, completion, 'the named checkpoint samples by its path');
    // get_tokenizer(): AutoTokenizer on the local folder whale serve reports, the same ids as WHALE's tokenizer
    assert.ok(r.tokenizer_id.startsWith('/'), `a local folder: ${r.tokenizer_id}`);
    assert.deepEqual(
      r.encoded,
      TEXTS.map((t) => word.encode(t)),
    );
    assert.deepEqual(r.decoded, TEXTS);
    return r;
  } finally {
    await served.stop();
  }
}

test('official tinker SDK 0.38.0 (protobuf) × whale serve: supervised loop, sampling, get_tokenizer', { skip: skipNew, timeout: 600_000 }, async () => {
  const r = await sdkLoop(pythonNew!, '0.38.0');
  const word = loadTokenizer(join(resourcesDir(), 'model', 'base', 'vocab.json'));
  assert.deepEqual(
    r.chat,
    TEXTS.map((t) => word.encodeChat([{ role: 'user', content: t }], { addGenerationPrompt: true })),
    'apply_chat_template renders WHALE’s chat template',
  );
});

test('official tinker SDK 0.24.1 and openai Python client × whale serve', { skip, timeout: 600_000 }, async () => {
  await sdkLoop(python!, '0.24.1');
  const served = await startServe(join(mkdtempSync(join(tmpdir(), 'whale-sdk-')), 'server'));
  try {
    const o = py([script('openai_client.py'), `${served.url}/v1`]) as {
      token_ids: number[];
      logprobs: number[];
      refused: Record<string, { status: number; param: string; code: string } | null>;
    };
    assert.ok(o.token_ids.length > 0 && o.logprobs.length === o.token_ids.length, 'token ids and one logprob per token');
    for (const p of ['top_logprobs', 'tools', 'n', 'stream']) assert.deepEqual(o.refused[p], { status: 400, param: p, code: 'unsupported_parameter' }, p);
  } finally {
    await served.stop();
  }
});
