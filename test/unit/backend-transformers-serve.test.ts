// A third-party OpenAI-compatible server, real and on CPU: `transformers serve` (Hugging Face
// transformers' own server, torch on CPU) with the tiny random Qwen3 of scripts/tiny-qwen3.py.
// WHALE's openai-compatible backend probes it (no token ids, no logprobs: the labelled fallback),
// its token accounting agrees with WHALE's own Qwen3 chat tokenizer, a stop string ends a reply
// (and is not left in the text), `whale eval` runs a domain against it, and WHALE's vLLM LoRA
// publisher sees that the server has no runtime LoRA routes. The venv and model come from .ci/run
// (WHALE_TSERVE_PY, WHALE_TSERVE_MODEL); without them the test says it skipped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OpenAICompatibleBackend } from '../../src/policy/remote/openaiBackend.js';
import { JsonHttp } from '../../src/policy/remote/http.js';
import { probeLoraLoading } from '../../src/policy/split/vllmLora.js';
import { loadChatTokenizer } from '../../src/policy/tinker/chatTokenizer.js';
import type { Trajectory } from '../../src/core/trajectory.js';
import { tinyProject, whaleAsync } from './serve-helpers.js';

const python = process.env.WHALE_TSERVE_PY;
const model = process.env.WHALE_TSERVE_MODEL;
const skip = python && model ? undefined : 'WHALE_TSERVE_PY / WHALE_TSERVE_MODEL are not set (.ci/run sets them: transformers serve on CPU and the tiny Qwen3)';
if (skip) console.log(`# backend-transformers-serve: skipped — ${skip}`);

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

test(
  'openai-compatible × transformers serve (CPU, tiny Qwen3): fallback probe, token accounting, stop strings, whale eval, no LoRA routes',
  { skip, timeout: 1_200_000 },
  async () => {
    const port = await freePort();
    const hfCache = mkdtempSync(join(tmpdir(), 'whale-hf-'));
    // `transformers serve MODEL`: the model preloaded and used for every request; offline, an empty hub cache.
    const proc = spawn(
      python!,
      ['-c', 'from transformers.cli.transformers import main; main()', 'serve', model!, '--device', 'cpu', '--host', '127.0.0.1', '--port', String(port)],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
        env: { ...process.env, HF_HUB_OFFLINE: '1', HF_HUB_CACHE: hfCache, TRANSFORMERS_NO_ADVISORY_WARNINGS: '1' },
      },
    );
    let log = '';
    proc.stdout!.on('data', (d: Buffer) => (log += d.toString()));
    proc.stderr!.on('data', (d: Buffer) => (log += d.toString()));
    const exited = new Promise<void>((r) => proc.once('exit', () => r()));
    const base = `http://127.0.0.1:${port}/v1`;
    try {
      for (let i = 0; ; i++) {
        if (proc.exitCode !== null) assert.fail(`transformers serve exited with ${proc.exitCode}: ${log.slice(-2000)}`);
        const up = await fetch(`http://127.0.0.1:${port}/health`).then(
          (r) => r.ok,
          () => false,
        );
        if (up) break;
        if (i > 180) assert.fail(`transformers serve did not answer /health in 180 s: ${log.slice(-2000)}`);
        await new Promise((r) => setTimeout(r, 1000));
      }

      const b = await OpenAICompatibleBackend.open({ baseUrl: base, model: model! });
      const caps = await b.capabilities();
      assert.deepEqual({ tokenIds: caps.tokenIds, logprobs: caps.logprobs, update: caps.update }, { tokenIds: false, logprobs: false, update: 'none' });
      assert.match(b.probe.summary, /token ids NOT returned \(fallback: calls recorded without ids; RSFT impossible\)/);

      // Token accounting: the server's prompt_tokens is WHALE's own rendering of Qwen3's chat template.
      const qwen = await loadChatTokenizer(join(model!, 'tokenizer.json'));
      const messages = [{ role: 'user' as const, content: 'What is the capital of France?' }];
      const r = await b.chat({ messages, params: { max_tokens: 12, temperature: 0, seed: 1 } });
      assert.equal(r.usage.promptTokens, qwen.encodeChat(messages, { addGenerationPrompt: true }).length, 'prompt_tokens = the chat template’s tokens');
      assert.equal(r.finishReason, 'length');
      assert.equal(r.usage.completionTokens, 12, 'a reply cut at max_tokens counts max_tokens');
      assert.equal(r.completionTokenIds, undefined, 'no ids were invented');

      // A stop string (the way WHALE ends turns on servers that do not stop by themselves) ends the
      // reply; transformers serve leaves the stop string in the text, WHALE strips it as OpenAI does.
      const words = r.text.trim().split(/\s+/);
      assert.ok(words.length >= 3, `the greedy reply has words to stop on: ${JSON.stringify(r.text)}`);
      const stopAt = words[1];
      const stopped = await b.chat({ messages, params: { max_tokens: 12, temperature: 0, seed: 1, stop: [stopAt] } });
      assert.equal(stopped.finishReason, 'stop');
      assert.ok(stopped.usage.completionTokens < 12, `stopped early: ${stopped.usage.completionTokens} tokens`);
      assert.equal(stopped.text, r.text.slice(0, r.text.indexOf(stopAt)), 'the text up to, not including, the stop string');

      // No runtime LoRA routes: WHALE's vLLM publisher says so instead of taking a 404 for a missing adapter.
      assert.equal(await probeLoraLoading(new JsonHttp({ baseUrl: base })), false);

      // whale eval on a domain, end to end through the CLI.
      const dir = tinyProject({ kind: 'openai-compatible', baseUrl: base, model: model! });
      const ev = await whaleAsync(['eval', '--json'], dir);
      assert.equal(ev.code, 0, ev.stderr);
      const summary = JSON.parse(ev.stdout) as { rollouts: number; terminations: Record<string, number>; trajectoriesFile: string };
      assert.equal(summary.rollouts, 6);
      assert.equal(summary.terminations.infra_error, undefined, `no rollout failed for the server’s sake: ${JSON.stringify(summary.terminations)}`);
      const calls = readFileSync(summary.trajectoriesFile, 'utf8')
        .trim()
        .split('\n')
        .flatMap((l) => (JSON.parse(l) as Trajectory).modelCalls);
      assert.ok(calls.length >= 6);
      for (const c of calls) {
        assert.equal(c.completionTokenIds, undefined, 'recorded without ids (the fallback)');
        assert.ok(c.usage.promptTokens > 0 && c.usage.completionTokens > 0 && c.usage.completionTokens <= Number(c.params.max_tokens), JSON.stringify(c.usage));
      }
    } finally {
      try {
        process.kill(-proc.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
      await exited;
    }
  },
);
