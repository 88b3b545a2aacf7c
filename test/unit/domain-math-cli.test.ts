/** The Math domain from the command line: `whale sandbox serve`, and `whale init --domain math` + `whale run --method harness-only` on the embedded backend. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCodeSandbox } from '../../src/domains/math/sandboxService.js';

const dev = fileURLToPath(new URL('../../src/cli/dev.ts', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/tsx/dist/esm/index.mjs', import.meta.url));

function whale(args: string[], cwd: string) {
  const r = spawnSync(process.execPath, ['--import', tsx, dev, ...args], { cwd, encoding: 'utf8', timeout: 400_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('whale sandbox serve: prints its URL, runs code over HTTP, stops on SIGTERM with exit 0', async () => {
  const child = spawn(process.execPath, ['--import', tsx, dev, 'sandbox', 'serve', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no URL printed: ${out}`)), 30_000);
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        const m = /POST (http:\/\/127\.0\.0\.1:\d+)\/run_code/.exec(out);
        if (m) {
          clearTimeout(t);
          resolve(m[1]);
        }
      });
      child.on('exit', () => reject(new Error(`exited early: ${out}`)));
    });
    const r = await fetch(`${url}/run_code`, { method: 'POST', body: JSON.stringify({ code: 'print(2**10)', language: 'python' }) });
    const body = (await r.json()) as { status: string; run_result: { stdout: string } };
    assert.equal(body.status, 'Success');
    assert.equal(body.run_result.stdout, '1024\n');
  } finally {
    const code = await new Promise<number | null>((resolve) => {
      child.on('exit', (c) => resolve(c));
      child.kill('SIGTERM');
    });
    assert.equal(code, 0);
  }
});

test('whale sandbox with a wrong subcommand exits 2', () => {
  const r = whale(['sandbox', 'start'], tmpdir());
  assert.equal(r.code, 2);
  assert.match(r.stderr, /usage: whale sandbox serve/);
});

test('whale init --domain math --template tiny, then whale run --method harness-only finishes on the embedded backend (scores ≈ 0: the h0 prompt does not fit its 256-token context)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'whale-math-cli-'));
  const init = whale(['init', dir, '--domain', 'math', '--template', 'tiny'], dir);
  assert.equal(init.code, 0, init.stderr);
  const sb = await startCodeSandbox();
  try {
    const cfgFile = join(dir, 'whale.config.json');
    const cfg = JSON.parse(readFileSync(cfgFile, 'utf8')) as { domain: { options: Record<string, unknown> } };
    cfg.domain.options.sandboxUrl = sb.url;
    writeFileSync(cfgFile, JSON.stringify(cfg, null, 2));
    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const c = spawn(process.execPath, ['--import', tsx, dev, 'run', '--method', 'harness-only'], { cwd: dir });
      let stdout = '';
      let stderr = '';
      c.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      c.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      c.on('exit', (code) => resolve({ code, stdout, stderr }));
    });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /schedule complete/);
    assert.match(run.stdout, /sealed test of the best pair: mean@1 \d+\.\d% ± /);
    // Rollouts really ran and were scored (not infrastructure failures): the refusal is recorded on each.
    const results = join(dir, '.whale', 'results');
    const trajs = readdirSync(results).flatMap((a) =>
      readdirSync(join(results, a)).flatMap((b) =>
        readFileSync(join(results, a, b, 'trajectories.jsonl'), 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { termination: string; terminationDetail?: string }),
      ),
    );
    assert.ok(trajs.length >= 16, `${trajs.length} trajectories`);
    assert.equal(trajs.filter((t) => t.termination === 'infra_error').length, 0);
    assert.ok(trajs.every((t) => t.termination !== 'crash' || /context/.test(t.terminationDetail ?? '')));
  } finally {
    await sb.close();
  }
});
