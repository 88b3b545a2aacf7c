// Issue 12 §6: on a host with neither bubblewrap nor user namespaces a command harness would run
// unconfined. It is refused unless the config opts in (sandbox.allowUnconfined), the opt-in warns
// loudly, and a grandchild holding the harness's pipes cannot keep `whale eval` from exiting.
// Real `whale eval` processes; "no bwrap, no unshare" is made by giving the engine a PATH without them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fixture } from '../fixtures/harnesses/helpers.js';

const dev = fileURLToPath(new URL('../../src/cli/dev.ts', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/tsx/dist/esm/index.mjs', import.meta.url));
const linux = process.platform === 'linux';

/** A PATH with what the engine needs but no bwrap and no unshare. */
function barePath(): string {
  const bin = mkdtempSync(join(tmpdir(), 'whale-bare-bin-'));
  for (const tool of ['git', 'python3', 'prlimit', 'setpriv', 'sleep', 'setsid']) {
    const found = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim();
    if (found) symlinkSync(found, join(bin, tool));
  }
  return bin;
}

function project(allowUnconfined: boolean | undefined): string {
  const dir = mkdtempSync(join(tmpdir(), 'whale-unconfined-'));
  mkdirSync(join(dir, 'h'));
  cpSync(join(fixture('py-probe'), 'probe.py'), join(dir, 'h', 'probe.py'));
  // A harness that answers at once but leaves a grandchild in its own session holding its stdout and stderr.
  writeFileSync(
    join(dir, 'h', 'escape.py'),
    'import json, subprocess, sys\nsys.stdin.readline()\nsubprocess.Popen(["sleep", "45.678"], start_new_session=True)\nprint(json.dumps({"type": "ready", "protocol": 1}), flush=True)\nprint(json.dumps({"type": "result", "answer": None}), flush=True)\n',
  );
  writeFileSync(join(dir, 'h', 'harness.json'), JSON.stringify({ name: 'escaper', runtime: 'command', command: ['python3', '-I', 'escape.py'] }));
  writeFileSync(
    join(dir, 'whale.config.json'),
    JSON.stringify({
      name: 'unconfined',
      domain: { id: 'kbqa', options: { sizes: { weight: 2, harness: 2, val: 2, test: 2 } } },
      harness: 'h',
      evaluation: { k: 1, concurrency: 2 },
      sandbox: { wallMs: 60_000, ...(allowUnconfined === undefined ? {} : { allowUnconfined }) },
    }),
  );
  return dir;
}

function evalIn(dir: string, path: string) {
  const t0 = Date.now();
  const r = spawnSync(process.execPath, ['--import', tsx, dev, 'eval'], { cwd: dir, encoding: 'utf8', timeout: 120_000, env: { ...process.env, PATH: path } });
  return { code: r.status, stderr: r.stderr, stdout: r.stdout, ms: Date.now() - t0 };
}

test(
  'unconfined command harnesses are refused unless sandbox.allowUnconfined is set; the opt-in warns; a grandchild holding the pipes does not hold the engine',
  { skip: !linux, timeout: 300_000 },
  () => {
    const path = barePath();
    const refused = project(undefined);
    const allowed = project(true);
    try {
      const r = evalIn(refused, path);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /sandbox\.allowUnconfined/);
      assert.match(r.stderr, /bubblewrap/);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');

      const ok = evalIn(allowed, path);
      assert.equal(ok.code, 0, ok.stderr);
      assert.match(ok.stderr, /WARNING.*UNCONFINED/s);
      assert.ok(ok.ms < 40_000, `whale eval took ${ok.ms} ms: it waited on the grandchild's pipes`);
    } finally {
      for (const d of [refused, allowed, path]) rmSync(d, { recursive: true, force: true });
      spawnSync('sh', ['-c', 'for p in $(pgrep -f "sleep 45.678"); do kill -9 $p; done']);
    }
  },
);
