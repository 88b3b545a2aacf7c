// The phases through the real engine (embedded policy, sandboxed runtime, git archive, knob
// proposer) on tiny slices, plus the acceptance rule on hand-made scores.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../../src/engine/engine.js';
import { archiveBest } from '../../src/engine/harnessPhase.js';
import type { JournalEntry } from '../../src/archive/journal.js';
import { smallProject } from '../support/smallProject.js';

function project(method: string, extra: Record<string, unknown> = {}) {
  return smallProject('phases', {
    name: 'phases',
    domain: { id: 'ramble', options: { sizes: { weight: 16, harness: 8, val: 8, test: 8 } } },
    method,
    evaluation: { k: 1, concurrency: 8 },
    rsft: { batchPrompts: 8, groupSize: 2 },
    search: { candidatesPerRound: 2 },
    schedule: { epochs: 0.5, iterations: 2, cycles: 1 },
    ...extra,
  }).engineProject();
}

const seedScores = (entries: readonly JournalEntry[]) => entries.filter((e) => e.type === 'candidate_scored' && e.round === 0);

test('archive-wide best: the search may return to an older candidate; ties go to fewer turns; other versions do not count', () => {
  const ev = (treeHash: string, round: number, mean: number, meanTurns = 1, version = 'v1') => ({
    phase: 1,
    round,
    treeHash,
    version,
    mean,
    se: 0,
    meanTurns,
    keyHash: treeHash,
  });
  const scored = [ev('h0', 0, 0.2), ev('a', 1, 0.5), ev('b', 2, 0.3), ev('c', 3, 0.4), ev('z', 0, 0.9, 1, 'v0')];
  assert.equal(archiveBest(scored, 'v1')!.treeHash, 'a', 'round 1 beats the later rounds: accepted although older');
  assert.equal(archiveBest([...scored, ev('d', 4, 0.5, 0.5)], 'v1')!.treeHash, 'd', 'a tie goes to fewer turns');
  assert.equal(archiveBest([...scored, ev('e', 4, 0.5, 1)], 'v1')!.treeHash, 'a', 'a full tie keeps the earlier one');
});

test('whale: h_k is re-scored after a weight update (a cache miss); the phases, validation and test are journaled', { timeout: 300_000 }, async () => {
  const engine = await Engine.create(project('whale'), { log: () => {} });
  try {
    const out = await engine.run();
    assert.equal(out.reason, 'schedule complete');
    const entries = (engine as unknown as { ctx: { journal: { all(): JournalEntry[] } } }).ctx.journal.all();
    const kinds = entries.filter((e) => e.type === 'phase_completed').map((e) => e.kind);
    assert.deepEqual(kinds, ['weight', 'harness']);
    const seed = seedScores(entries);
    assert.equal(seed.length, 1);
    const started = entries.find((e) => e.type === 'run_started')!;
    const afterWeights = entries.find((e) => e.type === 'phase_completed' && e.kind === 'weight')!;
    assert.notEqual(afterWeights.version, started.version, 'the weight phase trained a new version');
    assert.equal(seed[0].version, afterWeights.version, 'h_k scored under the updated weights');
    assert.equal(seed[0].cacheHit, false, 'a cache miss: this (harness, version) pair was never scored');
    assert.equal(entries.filter((e) => e.type === 'validation').length, 3, 'validation before and after each phase');
    assert.ok(entries.some((e) => e.type === 'test_evaluation'));
    assert.ok(out.state.ledger.trainingRollouts === 16 && out.state.ledger.searchRollouts > 0);
  } finally {
    await engine.close();
  }
});

test(
  'harness-only: an unchanged (h_k, version) pair is not re-scored twice (a cache hit); paired acceptance records its choice',
  { timeout: 300_000 },
  async () => {
    const p = project('harness-only', { search: { candidatesPerRound: 2, acceptance: 'paired', pairedSamples: 1 } });
    const engine = await Engine.create(p, { log: () => {} });
    try {
      const out = await engine.run();
      assert.equal(out.reason, 'schedule complete');
      const entries = (engine as unknown as { ctx: { journal: { all(): JournalEntry[] } } }).ctx.journal.all();
      const seed = seedScores(entries);
      assert.equal(seed.length, 2, 'two harness phases');
      const accepted0 = entries.find((e) => e.type === 'acceptance' && e.phase === 0)!;
      assert.equal(seed[1].treeHash, accepted0.chosen, 'phase 1 starts from the accepted harness');
      if (accepted0.chosen === entries.find((e) => e.type === 'run_started')!.h0) {
        assert.equal(seed[1].cacheHit, true, 'same harness, same version: answered from the store');
      } else {
        assert.ok(
          entries.some((e) => e.type === 'candidate_scored' && e.phase === 0 && e.treeHash === accepted0.chosen),
          'the accepted candidate was scored in phase 0',
        );
        assert.equal(seed[1].cacheHit, true, 'its phase-0 score under the same version is reused');
      }
      for (const a of entries.filter((e) => e.type === 'acceptance')) {
        assert.equal(a.rule, 'paired');
        if (a.archiveBest !== a.incumbent) assert.ok('pairedChoice' in a && typeof a.changedChoice === 'boolean');
      }
    } finally {
      await engine.close();
    }
  },
);

test('a run stops at its budget, says so, never spends past it, and still reports the sealed test', { timeout: 300_000 }, async () => {
  // One weight step of 8 × 2 = 16 rollouts, the harness seed 8 more = 24; a round (2 × (8 + 1)) would pass 35.
  const engine = await Engine.create(project('whale', { budget: { rollouts: 35 } }), { log: () => {} });
  try {
    const out = await engine.run();
    assert.match(out.reason, /^budget: 24 of 35 rollouts spent \(the next unit needs up to 18\)/);
    const l = out.state.ledger;
    assert.ok(l.trainingRollouts + l.searchRollouts <= 35);
    assert.ok(out.state.test, 'the best pair was still tested for the report');
    assert.equal(out.state.finished?.reason, out.reason);
  } finally {
    await engine.close();
  }
});

test('a harness phase cut short by the budget keeps the rounds it paid for: accepted, marked truncated, validated', { timeout: 300_000 }, async () => {
  // weight step 16 + seed 8 + round 1 (2 × (8 + 1)) = 42; round 2 would need 18 more than the 50.
  const engine = await Engine.create(project('whale', { budget: { rollouts: 50 }, schedule: { epochs: 0.5, iterations: 3, cycles: 1 } }), { log: () => {} });
  try {
    const out = await engine.run();
    assert.match(out.reason, /^budget: 42 of 50 rollouts spent/);
    const entries = (engine as unknown as { ctx: { journal: { all(): JournalEntry[] } } }).ctx.journal.all();
    const rounds = entries.filter((e) => e.type === 'round_done' && e.phase === 1);
    assert.equal(rounds.length, 1, 'one round ran before the budget');
    const closed = entries.find((e) => e.type === 'phase_completed' && e.phase === 1);
    assert.ok(closed, 'the cut phase was closed');
    assert.match(String(closed.truncated), /^budget/);
    const accepted = entries.find((e) => e.type === 'acceptance' && e.phase === 1)!;
    assert.equal(accepted.chosen, rounds[0].bestTreeHash, 'the archive-wide best of the paid round is accepted');
    assert.equal(closed.harness, accepted.chosen);
    const validation = entries.find((e) => e.type === 'validation' && e.phase === 1);
    assert.ok(validation, 'the closed phase was validated, so its pair can be selected');
    assert.equal(validation.harness, accepted.chosen);
    assert.ok(out.state.test);
    assert.ok(out.state.ledger.trainingRollouts + out.state.ledger.searchRollouts <= 50);
  } finally {
    await engine.close();
  }
});

test('a weight phase cut short by the budget keeps the steps it trained: closed as truncated and validated', { timeout: 300_000 }, async () => {
  // Weight phases of two steps × 16 rollouts; cycle 0 = 32 + seed 8 + one round 18 = 58; cycle 1's
  // first step brings 74, and its second would pass the 80.
  const engine = await Engine.create(project('whale', { budget: { rollouts: 80 }, schedule: { epochs: 1, iterations: 2, cycles: 2 } }), { log: () => {} });
  try {
    const out = await engine.run();
    assert.match(out.reason, /^budget: 74 of 80 rollouts spent/);
    const entries = (engine as unknown as { ctx: { journal: { all(): JournalEntry[] } } }).ctx.journal.all();
    const closed = entries.find((e) => e.type === 'phase_completed' && e.phase === 2)!;
    assert.match(String(closed.truncated), /^budget/);
    const steps = entries.filter((e) => e.type === 'weight_step' && e.phase === 2);
    assert.equal(steps.length, 1);
    const step = steps[0];
    assert.equal(closed.version, step.versionAfter, 'the trained version is the phase result');
    const validation = entries.find((e) => e.type === 'validation' && e.phase === 2)!;
    assert.equal(validation.version, step.versionAfter);
  } finally {
    await engine.close();
  }
});

test('adaptive harness phase: a proposer that returns nothing still ends the phase, at patience P_h or at J_max', { timeout: 300_000 }, async () => {
  let calls = 0;
  const empty = {
    kind: 'empty',
    async propose() {
      // Before the fix, rounds without a scored candidate did not count and the phase never ended.
      if (++calls > 20) throw new Error('the harness phase keeps asking: failed rounds are not counted');
      return { candidates: [], report: 'nothing this round', dollars: 0 };
    },
  };
  const adaptive = (a: Record<string, unknown>) => project('adaptive', { schedule: { cycles: 1, adaptive: { minEpochs: 0.5, maxEpochs: 0.5, ...a } } });
  for (const [a, rounds] of [
    [{ minIterations: 3, patienceIterations: 2, maxIterations: 8 }, 2], // J_min 3 iterations = seed + 2 rounds, no improvement for P_h 2
    [{ minIterations: 2, patienceIterations: 50, maxIterations: 4 }, 3], // never patient enough: J_max 4 = seed + 3 rounds
  ] as const) {
    calls = 0;
    const engine = await Engine.create(adaptive(a), { log: () => {}, proposer: empty });
    try {
      const out = await engine.run();
      assert.equal(out.reason, 'schedule complete');
      const entries = (engine as unknown as { ctx: { journal: { all(): JournalEntry[] } } }).ctx.journal.all();
      assert.equal(entries.filter((e) => e.type === 'proposal').length, rounds);
      assert.equal(entries.filter((e) => e.type === 'round_done').length, rounds);
      assert.deepEqual(
        entries.filter((e) => e.type === 'phase_completed').map((e) => e.kind),
        ['weight', 'harness'],
      );
    } finally {
      await engine.close();
    }
  }
});

test(
  "matched-steps: search comes on top of WHALE's RSFT steps; a weight phase cut at the step cap is closed and the search after it still runs",
  { timeout: 600_000 },
  async () => {
    const entriesOf = (e: Engine) => (e as unknown as { ctx: { journal: { all(): JournalEntry[] } } }).ctx.journal.all();
    // whale: 1 step of 8 prompts × G 2 = 16 training rollouts is the whole budget; the search (more than 0 left) still runs.
    const whale = await Engine.create(project('whale', { budget: { mode: 'matched-steps', rollouts: 16 } }), { log: () => {} });
    try {
      const out = await whale.run();
      assert.equal(out.reason, 'schedule complete');
      assert.deepEqual(
        entriesOf(whale)
          .filter((e) => e.type === 'phase_completed')
          .map((e) => e.kind),
        ['weight', 'harness'],
      );
      assert.equal(out.state.ledger.trainingRollouts, 16);
      assert.ok(out.state.ledger.searchRollouts > 0, 'search on top of the training budget');
    } finally {
      await whale.close();
    }
    // stagewise asks for E* 1.0 (2 steps) but WHALE's steps are 1 × 1: the weight phase is cut at 1 step, closed, and the search runs.
    const stagewise = await Engine.create(
      project('stagewise', { budget: { mode: 'matched-steps' }, schedule: { epochs: 0.5, iterations: 2, cycles: 1, stagewise: { epochs: 1, iterations: 2 } } }),
      { log: () => {} },
    );
    try {
      const out = await stagewise.run();
      const entries = entriesOf(stagewise);
      assert.equal(entries.filter((e) => e.type === 'weight_step').length, 1);
      const done = entries.filter((e) => e.type === 'phase_completed');
      assert.deepEqual(
        done.map((e) => e.kind),
        ['weight', 'harness'],
      );
      assert.match(String(done[0].truncated), /1 of 1 RSFT steps \(matched-steps/);
      assert.equal(out.reason, 'schedule complete');
      assert.ok(entries.some((e) => e.type === 'test_evaluation'));
    } finally {
      await stagewise.close();
    }
  },
);
