// `whale eval --candidate HASH --policy VERSION`: an archived candidate evaluated under a saved
// policy (what the cockpit's Evaluate runs from an archive row), on a real tiny project: after one
// weight phase, the candidate h0 under "policy after phase 0" on val is the phase's own validation,
// answered from the run store; bad hashes and unknown versions are input errors (exit 2).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const bin = join(import.meta.dirname, '../../bin/whale.js');
const dir = mkdtempSync(join(tmpdir(), 'whale-eval-candidate-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const whale = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8', timeout: 300_000 });

test('whale eval --candidate --policy: an archived candidate under a saved policy, cached; bad input exits 2', { timeout: 600_000 }, () => {
  assert.equal(whale('init', '.', '--domain', 'kbqa', '--template', 'tiny').status, 0);
  const step = whale('step');
  assert.equal(step.status, 0, step.stderr);
  const [run] = readdirSync(join(dir, '.whale', 'runs'));
  const journal = readFileSync(join(dir, '.whale', 'runs', run, 'journal.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const h0 = String(journal.find((e) => e.type === 'run_started')!.h0);
  const after0 = String(journal.find((e) => e.type === 'phase_completed')!.version);
  const validation = journal.find((e) => e.type === 'validation' && e.phase === 0)!;

  const r = whale('eval', '--candidate', h0.slice(0, 8), '--policy', after0, '--split', 'val', '--json');
  assert.equal(r.status, 0, r.stderr);
  const s = JSON.parse(r.stdout) as { cacheHit: boolean; keyHash: string; key: { harnessHash: string; policyVersion: string; split: string } };
  assert.deepEqual([s.key.harnessHash, s.key.policyVersion, s.key.split], [h0, after0, 'val']);
  assert.equal(s.keyHash, validation.keyHash, "the same evaluation as the phase's validation");
  assert.equal(s.cacheHit, true, 'answered from the run store: no rollout paid twice');

  for (const [args, message] of [
    [['--candidate', 'zz'], /--candidate: 'zz' is not a candidate's tree hash/],
    [['--candidate', 'abcd1234'], /--candidate: no candidate abcd1234 in /],
    [['--candidate', h0, '--harness', 'harnesses/h0'], /give --harness DIR or --candidate HASH, not both/],
    [['--candidate', h0, '--policy', 'deadbeefdeadbeef'], /--policy: the embedded backend cannot sample policy version deadbeefdeadbeef/],
  ] as const) {
    const bad = whale('eval', ...args);
    assert.equal(bad.status, 2, `${args.join(' ')}: ${bad.stderr}`);
    assert.match(bad.stderr, message);
    assert.doesNotMatch(bad.stderr, /\n\s+at /, 'no stack trace');
  }
});
