import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dev = fileURLToPath(new URL('../../src/cli/dev.ts', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/tsx/dist/esm/index.mjs', import.meta.url));

function whale(args: string[], cwd: string) {
  const r = spawnSync(process.execPath, ['--import', tsx, dev, ...args], { cwd, encoding: 'utf8', timeout: 240_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('whale eval on a config with a wrong field exits 2 naming file, line and field', () => {
  const dir = mkdtempSync(join(tmpdir(), 'whale-cli-'));
  writeFileSync(
    join(dir, 'whale.config.json'),
    '{\n  "name": "x",\n  "domain": { "id": "kbqa" },\n  "harness": "h0",\n  "sampling": { "temperature": "hot" }\n}\n',
  );
  const r = whale(['eval'], dir);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /whale\.config\.json:5:\d+: sampling\.temperature: /);
});

test('the test split is sealed', () => {
  const dir = mkdtempSync(join(tmpdir(), 'whale-cli-'));
  const r = whale(['eval', '--domain', 'kbqa', '--split', 'test'], dir);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /test split is sealed/);
});

test('whale eval prints mean@k ± se, and the identical second call is a cache hit', () => {
  const dir = mkdtempSync(join(tmpdir(), 'whale-cli-'));
  const args = ['eval', '--domain', 'ramble', '--split', 'val', '--k', '2', '--limit', '8'];
  const first = whale(args, dir);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /ramble val mean@2 = \d+\.\d% ± \d+\.\d \(se over 8 tasks; 16 rollouts\)/);
  assert.match(first.stdout, /16 new rollouts/);
  const second = whale(args, dir);
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stdout, /cache hit: answered from the run store, 0 new rollouts/);
  assert.equal(first.stdout.split('\n')[0], second.stdout.split('\n')[0]);
});

test("whale eval --temperature sets the run config's sampling, which the gateway enforces over what a harness asks", () => {
  const dir = mkdtempSync(join(tmpdir(), 'whale-cli-'));
  const h = join(dir, 'hot-harness');
  cpSync(fileURLToPath(new URL('../../resources/harnesses/ramble-h0', import.meta.url)), h, { recursive: true });
  const src = readFileSync(join(h, 'harness.ts'), 'utf8');
  writeFileSync(join(h, 'harness.ts'), src.replace('ctx.chat(messages, { max_tokens:', 'ctx.chat(messages, { temperature: 0.2, max_tokens:'));
  const r = whale(['eval', '--domain', 'ramble', '--harness', h, '--split', 'val', '--k', '1', '--limit', '3', '--temperature', '0.5', '--json'], dir);
  assert.equal(r.code, 0, r.stderr);
  const file = (JSON.parse(r.stdout) as { trajectoriesFile: string }).trajectoriesFile;
  const calls = readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => (JSON.parse(l) as { modelCalls: { params: Record<string, unknown> }[] }).modelCalls[0].params);
  assert.equal(calls.length, 3);
  for (const p of calls) assert.deepEqual([p.temperature, p.requested_temperature], [0.5, 0.2]);
});

test('unknown command and unknown domain are usage errors', () => {
  const dir = mkdtempSync(join(tmpdir(), 'whale-cli-'));
  assert.equal(whale(['frobnicate'], dir).code, 2);
  const r = whale(['eval', '--domain', 'nosuch'], dir);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /unknown domain 'nosuch' \(known domains: kbqa, ramble, /);
});
