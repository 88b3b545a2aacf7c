// Issue 12 §9: config errors beyond the schema are found before the store is touched: exit 2,
// naming file and field; `current-run` never names a run that does not exist.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { domainH0Dir } from '../../src/domains/index.js';
import { whale } from './serve-helpers.js';

function projectWith(config: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'whale-cfgcheck-'));
  writeFileSync(
    join(dir, 'whale.config.json'),
    JSON.stringify({ name: 'x', domain: { id: 'ramble', options: { sizes: { weight: 4, harness: 2, val: 2, test: 2 } } }, harness: 'h0', ...config }),
  );
  return dir;
}

for (const cmd of [['run'], ['step'], ['eval']]) {
  test(`whale ${cmd[0]}: a missing harness folder is exit 2 naming whale.config.json and 'harness', and the store is untouched`, { timeout: 120_000 }, () => {
    const dir = projectWith({ harness: 'no-such-folder' });
    try {
      const r = whale(cmd, dir);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /whale\.config\.json: harness: .*no-such-folder/);
      assert.doesNotMatch(r.stderr, /internal error|\n\s+at /);
      assert.ok(!existsSync(join(dir, '.whale', 'current-run')), 'current-run written for a run that never started');
      assert.ok(!existsSync(join(dir, '.whale', 'runs')), 'the store was touched');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('an unknown domain is exit 2 naming the file and domain.id', { timeout: 120_000 }, () => {
  const dir = projectWith({ domain: { id: 'no-such-domain' } });
  try {
    const r = whale(['run'], dir);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /whale\.config\.json: domain\.id: unknown domain 'no-such-domain'/);
    assert.ok(!existsSync(join(dir, '.whale')), 'the store was touched');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('current-run is not left pointing at a run whose start failed', { timeout: 120_000 }, () => {
  // A harness folder without a valid manifest: the run is created, then fails to open.
  const dir = projectWith({});
  mkdirSync(join(dir, 'h0'));
  writeFileSync(join(dir, 'h0', 'harness.json'), '{ "name": 1 }');
  try {
    const r = whale(['run'], dir);
    assert.notEqual(r.code, 0);
    const f = join(dir, '.whale', 'current-run');
    if (existsSync(f)) assert.ok(existsSync(join(dir, '.whale', 'runs', readFileSync(f, 'utf8').trim())), 'current-run names a run that does not exist');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('whale init and whale domain new over existing files: exit 2 naming the path (bad input, not an internal failure)', { timeout: 240_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'whale-exists-'));
  try {
    writeFileSync(join(dir, 'whale.config.json'), '{}');
    let r = whale(['init', dir, '--domain', 'ramble', '--template', 'tiny'], dir);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /whale\.config\.json: exists; pass --force/);
    assert.doesNotMatch(r.stderr, /internal error|\n\s+at /);
    mkdirSync(join(dir, 'domains', 'mine'), { recursive: true });
    writeFileSync(join(dir, 'domains', 'mine', 'index.ts'), '// mine\n');
    r = whale(['domain', 'new', 'mine'], dir);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /domains\/mine: exists and is not empty; pass --force/);
    assert.equal(readFileSync(join(dir, 'domains', 'mine', 'index.ts'), 'utf8'), '// mine\n', 'the existing file was overwritten');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a weight batch larger than the weight split is exit 2 naming rsft.batchPrompts, before any rollout', { timeout: 120_000 }, () => {
  const dir = projectWith({ rsft: { batchPrompts: 5 } });
  cpSync(domainH0Dir('ramble'), join(dir, 'h0'), { recursive: true });
  try {
    const r = whale(['run'], dir);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /whale\.config\.json: rsft\.batchPrompts: B 5 is larger than the weight split \(4 tasks\)/);
    assert.doesNotMatch(r.stderr, /internal error|\n\s+at /);
    assert.ok(!existsSync(join(dir, '.whale', 'runs')), 'no run was started');
    assert.equal(
      whale(['run', '--method', 'harness-only', '--budget-rollouts', '1'], dir).stderr.match(/rsft\.batchPrompts/),
      null,
      'harness-only trains nothing',
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
