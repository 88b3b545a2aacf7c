// `whale backend connect`: probes a real `whale serve` process (OpenAI routes, vLLM's LoRA routes,
// Tinker routes), reports what it detected, and writes the backend section of a commented config
// with a minimal edit; an unreachable URL changes nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/core/config.js';
import { setConfigSection } from '../../src/core/configEdit.js';
import { InputError } from '../../src/core/errors.js';
import { startServe, whaleAsync } from './serve-helpers.js';

const COMMENTED = `{
  // my project
  "name": "connect",
  "domain": { "id": "ramble" },
  "harness": "h0", // the seed harness
  "backend": { "kind": "embedded" },
  /* the rest stays */
  "evaluation": { "k": 1 }
}
`;

test('config edit: only the section changes; comments and formatting stay; broken JSON is refused with its line', () => {
  const out = setConfigSection(COMMENTED, 'whale.config.json', 'backend', { kind: 'openai-compatible', baseUrl: 'http://h:8000/v1', model: 'm' });
  assert.ok(out.includes('// my project') && out.includes('// the seed harness') && out.includes('/* the rest stays */'));
  const before = COMMENTED.split('\n');
  const after = out.split('\n');
  assert.deepEqual(after.slice(0, 5), before.slice(0, 5), 'lines before the section unchanged');
  assert.deepEqual(after.slice(-4), before.slice(-4), 'lines after the section unchanged');
  assert.match(out, /"backend": \{\n {4}"kind": "openai-compatible",\n {4}"baseUrl": "http:\/\/h:8000\/v1",\n {4}"model": "m"\n {2}\}/);
  const added = setConfigSection('{\n\t"name": "x"\n}\n', 'f.json', 'backend', { kind: 'embedded' });
  assert.match(added, /\t"backend": \{\n\t\t"kind": "embedded"\n\t\}/, 'tab indentation kept');
  assert.throws(
    () => setConfigSection('{\n  "name": "x",\n  oops\n}', 'f.json', 'backend', {}),
    (e: unknown) => e instanceof InputError && /f\.json:3.*not valid JSON/.test(e.message),
  );
});

test(
  'whale backend connect: detects token ids, logprobs, LoRA loading and training on a real server, writes openai-compatible / tinker / split sections, and leaves the file alone when the URL does not answer',
  { timeout: 600_000 },
  async () => {
    const root = mkdtempSync(join(tmpdir(), 'whale-connect-'));
    const served = await startServe(join(root, 'server'));
    try {
      const dir = join(root, 'project');
      const { mkdirSync } = await import('node:fs');
      mkdirSync(dir);
      const file = join(dir, 'whale.config.json');
      writeFileSync(file, COMMENTED);

      const oai = await whaleAsync(['backend', 'connect', served.url], dir);
      assert.equal(oai.code, 0, oai.stderr);
      const r1 = JSON.parse(oai.stdout) as {
        backend: { kind: string; baseUrl: string; model: string };
        detected: { tokenIds: boolean; logprobs: boolean; loraLoading: boolean; training: string };
      };
      assert.deepEqual([r1.backend.kind, r1.backend.baseUrl], ['openai-compatible', `${served.url}/v1`]);
      assert.match(r1.backend.model, /^[0-9a-f]{16}$/, 'the first listed model');
      assert.deepEqual([r1.detected.tokenIds, r1.detected.logprobs, r1.detected.loraLoading, r1.detected.training], [true, true, true, 'none']);
      assert.match(oai.stderr, /token ids returned, logprobs returned.*runtime LoRA loading yes/);
      let text = readFileSync(file, 'utf8');
      assert.ok(text.includes('// my project') && text.includes('/* the rest stays */'));
      assert.equal(loadConfig(file).backend.kind, 'openai-compatible', 'the written config loads');

      const noKey = await whaleAsync(['backend', 'connect', served.url, '--kind', 'tinker', '--api-key-env', 'MY_TINKER_KEY'], dir, { MY_TINKER_KEY: '' });
      assert.equal(noKey.code, 1);
      assert.match(noKey.stderr, /the API key variable MY_TINKER_KEY is not set/);
      assert.doesNotMatch(noKey.stderr, /internal error/);
      const tk = await whaleAsync(['backend', 'connect', served.url, '--kind', 'tinker', '--api-key-env', 'MY_TINKER_KEY'], dir, { MY_TINKER_KEY: 'k-test' });
      assert.equal(tk.code, 0, tk.stderr);
      assert.deepEqual(JSON.parse(tk.stdout).backend, {
        kind: 'tinker',
        baseUrl: served.url,
        baseModel: 'embedded',
        tokenizer: 'embedded',
        apiKeyEnv: 'MY_TINKER_KEY',
      });
      assert.match(tk.stderr, /\(Tinker\): training full/);

      const split = await whaleAsync(['backend', 'connect', served.url, '--kind', 'split', '--trainer', served.url, '--adapter-dir', '/shared/adapters'], dir);
      assert.equal(split.code, 0, split.stderr);
      const cfg = loadConfig(file).backend;
      assert.equal(cfg.kind, 'split');
      if (cfg.kind === 'split')
        assert.deepEqual(
          [cfg.sampler.baseUrl, cfg.trainer.baseUrl, cfg.publish.adapterDir, cfg.publish.keepLoaded],
          [`${served.url}/v1`, served.url, '/shared/adapters', 2],
        );

      text = readFileSync(file, 'utf8');
      const down = await whaleAsync(['backend', 'connect', 'http://127.0.0.1:9', '--kind', 'openai-compatible'], dir);
      assert.notEqual(down.code, 0);
      assert.match(down.stderr, /127\.0\.0\.1:9\/v1\/models/);
      assert.equal(readFileSync(file, 'utf8'), text, 'unchanged');
      const key = await whaleAsync(['backend', 'connect', served.url, '--api-key-env', 'sk-123 secret'], dir);
      assert.equal(key.code, 2);
      assert.match(key.stderr, /not an environment variable name/);
    } finally {
      await served.stop();
    }
  },
);
