// The Runs view's rounds (vscode-free model): round → candidates (score ± se, turns, or the validator's
// reasons) → the accepted one and by which rule, folded from journal events as harnessPhase.ts
// writes them; policies and harnesses named one way everywhere (identity.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { JournalEntry } from '../../src/archive/journal.js';
import { describeEvaluation, policyNames } from '../../src/extension/model/identity.js';
import { describeAcceptance, describeRoundCandidate, phaseTooltip, runModel } from '../../src/extension/model/runsModel.js';

const at = 't';
const H0 = 'aaaaaaaa11111111111111111111111111111111';
const A = 'bbbbbbbb22222222222222222222222222222222';
const B = 'cccccccc33333333333333333333333333333333';
const C = 'dddddddd44444444444444444444444444444444';
const V0 = '0123456789abcdef';
const V1 = 'fedcba9876543210';

function journal(acceptance: Record<string, unknown>): JournalEntry[] {
  return [
    { type: 'run_started', at, runId: 'r', method: 'whale', version: V0, harness: H0 },
    { type: 'phase_started', at, phase: 0, kind: 'weight', cycle: 0, version: V0, harness: H0 },
    { type: 'weight_step', at, phase: 0, globalStep: 0, versionAfter: V1, meanReward: 0.5 },
    { type: 'phase_completed', at, phase: 0, kind: 'weight', version: V1, harness: H0 },
    { type: 'phase_started', at, phase: 1, kind: 'harness', cycle: 0, version: V1, harness: H0 },
    { type: 'candidate_scored', at, phase: 1, round: 0, treeHash: H0, version: V1, mean: 0.5, se: 0.1, meanTurns: 2, cacheHit: false },
    {
      type: 'proposal',
      at,
      phase: 1,
      round: 1,
      candidates: [{ dir: 'x' }, { dir: 'y' }, { dir: 'z' }],
      report: 'tried topk',
      dollars: 0.25,
      proposer: 'llm',
      sessionLog: 'proposer/phase-1-round-1.jsonl',
    },
    { type: 'candidate_scored', at, phase: 1, round: 1, treeHash: A, version: V1, mean: 0.625, se: 0.05, meanTurns: 3.5, cacheHit: false },
    { type: 'candidate_invalid', at, phase: 1, round: 1, treeHash: B, reasons: ['bundle: Cannot find module x', 'smoke rollout crashed'] },
    { type: 'candidate_invalid', at, phase: 1, round: 1, treeHash: null, dir: '/tmp/gone', reasons: ['the proposer reported a folder that does not exist'] },
    { type: 'round_done', at, phase: 1, round: 1, bestTreeHash: A, bestMean: 0.625 },
    { type: 'proposal', at, phase: 1, round: 2, candidates: [{ dir: 'w' }], report: 'crossover', dollars: 0.25, proposer: 'llm' },
    { type: 'candidate_scored', at, phase: 1, round: 2, treeHash: C, version: V1, mean: 0.6, se: 0.05, meanTurns: 3, cacheHit: true },
    { type: 'round_done', at, phase: 1, round: 2, bestTreeHash: A, bestMean: 0.625 },
    { type: 'acceptance', at, phase: 1, incumbent: H0, archiveBest: A, archiveBestMean: 0.625, ...acceptance },
    { type: 'phase_completed', at, phase: 1, kind: 'harness', version: V1, harness: String(acceptance.chosen) },
    { type: 'validation', at, phase: 1, version: V1, harness: String(acceptance.chosen), mean: 0.55, se: 0.04, k: 4 },
  ];
}

test('runs model: a harness phase as rounds → candidates with scores or reasons → the accepted one and its rule', () => {
  const run = runModel('r', journal({ rule: 'archive-best', chosen: A }), { isAlive: () => false });
  const phase = run.cycles[0].phases[1];
  assert.deepEqual(
    phase.roundsDetail!.map((r) => [r.round, r.candidates.length, r.done]),
    [
      [0, 1, false],
      [1, 3, true],
      [2, 1, true],
    ],
  );
  const [a, b, gone] = phase.roundsDetail![1].candidates;
  assert.equal(a.treeHash, A);
  assert.equal(a.accepted, true);
  assert.equal(describeRoundCandidate(a), '62.5% ± 5.0 · 3.5 turns · ✓ accepted');
  assert.equal(describeRoundCandidate(b), '✗ invalid: bundle: Cannot find module x; smoke rollout crashed');
  assert.equal(gone.dir, '/tmp/gone');
  assert.equal(describeRoundCandidate(phase.roundsDetail![2].candidates[0]), '60.0% ± 5.0 · 3.0 turns · cached');
  assert.deepEqual(phase.roundsDetail![1].best, { treeHash: A, mean: 0.625 });
  assert.equal(describeAcceptance(phase.acceptance!), 'archive-best: bbbbbbbb · proposed this phase');
  // The hover names the harness the phase started from, the one it accepted, and the policies by name.
  const tip = phaseTooltip(phase, run.policies);
  assert.ok(tip.includes('started from policy after phase 0 (`fedcba9876543210`) with harness `aaaaaaaa`'), tip);
  assert.ok(tip.includes(`ended with policy after phase 0 (\`${V1}\`) and harness \`bbbbbbbb\` (\`${A}\`)`), tip);
  assert.ok(tip.includes('accepted harness `bbbbbbbb` by archive-best: bbbbbbbb · proposed this phase'), tip);
  assert.ok(tip.includes('validation after the phase: mean@4 55.0% ± 4.0 on the val split, under policy after phase 0'), tip);
  assert.ok(phaseTooltip(run.cycles[0].phases[0], run.policies).includes('started from base (`0123456789abcdef`)'));
});

test('runs model: paired acceptance that keeps the incumbent, and an older candidate that wins', () => {
  const kept = runModel('r', journal({ rule: 'paired', chosen: H0, pairedChoice: H0, diff: 0.01, seDiff: 0.03, changedChoice: true }), { isAlive: () => false })
    .cycles[0].phases[1];
  assert.equal(
    describeAcceptance(kept.acceptance!),
    'paired: aaaaaaaa · the incumbent stays · paired advantage 1.0 ± 3.0 · overturned the archive-best bbbbbbbb',
  );
  assert.ok(kept.roundsDetail![0].candidates[0].accepted, 'round 0 (the re-scored incumbent) carries the mark');
  const older = journal({ rule: 'archive-best', chosen: C });
  // C was scored in an earlier phase's round 1 and only re-scored (round 0) here: an older candidate won.
  const idx = older.findIndex((e) => e.type === 'candidate_scored' && e.treeHash === C);
  older[idx] = { ...older[idx], round: 0 };
  const o = runModel('r', older, { isAlive: () => false }).cycles[0].phases[1];
  assert.match(describeAcceptance(o.acceptance!), /^archive-best: dddddddd · an older candidate won$/);
});

test('identity: every h0 figure says its split, harness and policy', () => {
  const names = policyNames(journal({ rule: 'archive-best', chosen: A }));
  assert.equal(
    describeEvaluation({ meanAtK: 0.4, standardError: 0.05, k: 4, cacheHit: true, key: { split: 'val', harnessHash: H0, policyVersion: V0 } }, names),
    'mean@4 on the val split = 40.0% ± 5.0 · harness aaaaaaaa · under base (cached)',
  );
  assert.equal(
    describeEvaluation({ meanAtK: 0.5, standardError: 0, k: 1, key: { split: 'harness', harnessHash: H0, policyVersion: '9999999999999999' } }, names),
    'mean@1 on the harness split = 50.0% ± 0.0 · harness aaaaaaaa · under 99999999',
  );
});
