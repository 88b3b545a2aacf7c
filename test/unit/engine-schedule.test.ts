import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BudgetSchema, RsftSchema, ScheduleSchema, SearchSchema, METHODS } from '../../src/core/config.js';
import { InputError } from '../../src/core/errors.js';
import { checkSchedule, harnessPhaseShouldStop, matchedSteps, phasePlan, stepsForEpochs, weightPhaseShouldStop } from '../../src/engine/schedule.js';

const s = ScheduleSchema.parse({ epochs: 0.5, iterations: 4, cycles: 2 });

test('fixed schedule alternates weight and harness for the given cycles; FST differs only in search space', () => {
  const plans = [0, 1, 2, 3, 4].map((i) => phasePlan('whale', s, i, 1000, 100));
  assert.deepEqual(
    plans.map((p) => p?.kind ?? null),
    ['weight', 'harness', 'weight', 'harness', null],
  );
  assert.deepEqual(plans[0]!.steps, { min: 5, max: 5 });
  assert.deepEqual(plans[1]!.iterations, { min: 4, max: 4 });
  const fst = [0, 1, 2, 3].map((i) => phasePlan('fst', s, i, 1000, 100)!);
  assert.deepEqual(
    fst.map((p) => p.kind),
    ['weight', 'harness', 'weight', 'harness'],
  );
  assert.equal(fst[1].mode, 'fst');
  assert.equal(plans[1]!.mode, 'full');
});

test('baselines and stagewise', () => {
  assert.deepEqual(
    [0, 1, 2].map((i) => phasePlan('stagewise', s, i, 1000, 100)?.kind ?? null),
    ['weight', 'harness', null],
  );
  // (E*, I*) default to WHALE's totals: cycles × E (2 × 5 steps) and 1 + cycles × (I − 1) iterations.
  assert.equal(phasePlan('stagewise', s, 0, 1000, 100)!.steps!.max, 2 * stepsForEpochs(s.epochs, 1000, 100));
  assert.deepEqual(phasePlan('stagewise', s, 1, 1000, 100)!.iterations, { min: 7, max: 7 });
  const set = ScheduleSchema.parse({ epochs: 0.5, iterations: 4, cycles: 2, stagewise: { epochs: 0.3, iterations: 5 } });
  assert.equal(phasePlan('stagewise', set, 0, 1000, 100)!.steps!.max, stepsForEpochs(0.3, 1000, 100));
  assert.deepEqual(phasePlan('stagewise', set, 1, 1000, 100)!.iterations, { min: 5, max: 5 });
  assert.ok([0, 1, 2, 3].every((i) => phasePlan('weight-only', s, i, 1000, 100)!.kind === 'weight'));
  assert.ok([0, 1, 2, 3].every((i) => phasePlan('harness-only', s, i, 1000, 100)!.kind === 'harness'));
  assert.equal(phasePlan('harness-only', s, 4, 1000, 100), null);
  for (const m of METHODS) assert.ok(phasePlan(m, s, 0, 1000, 100), m);
});

test("start: 'harness' swaps the phases of every cycle for the alternating methods and stagewise, not the one-kind baselines", () => {
  const h = ScheduleSchema.parse({ epochs: 0.5, iterations: 4, cycles: 2, start: 'harness' });
  for (const m of ['whale', 'fst', 'adaptive'] as const) {
    const plans = [0, 1, 2, 3, 4].map((i) => phasePlan(m, h, i, 1000, 100));
    assert.deepEqual(
      plans.map((p) => p?.kind ?? null),
      ['harness', 'weight', 'harness', 'weight', null],
      m,
    );
    assert.deepEqual(
      plans.map((p) => p?.cycle ?? null),
      [0, 0, 1, 1, null],
      m,
    );
  }
  assert.deepEqual(phasePlan('whale', h, 1, 1000, 100)!.steps, phasePlan('whale', s, 0, 1000, 100)!.steps, 'the same phases, in the other order');
  assert.equal(phasePlan('fst', h, 0, 1000, 100)!.mode, 'fst');
  assert.deepEqual(
    [0, 1, 2].map((i) => phasePlan('stagewise', h, i, 1000, 100)?.kind ?? null),
    ['harness', 'weight', null],
  );
  assert.deepEqual(phasePlan('stagewise', h, 0, 1000, 100)!.iterations, { min: 7, max: 7 });
  assert.ok([0, 1, 2, 3].every((i) => phasePlan('weight-only', h, i, 1000, 100)!.kind === 'weight'));
  assert.ok([0, 1, 2, 3].every((i) => phasePlan('harness-only', h, i, 1000, 100)!.kind === 'harness'));
  assert.equal(s.start, 'weight', 'the default');
  assert.throws(() => ScheduleSchema.parse({ start: 'both' }));
});

test('fractional epochs round up to whole steps', () => {
  assert.equal(stepsForEpochs(0.2, 4096, 256), 4);
  assert.equal(stepsForEpochs(0.01, 100, 64), 1);
  assert.equal(stepsForEpochs(1, 4096, 256), 16);
});

test('adaptive weight rule: windowed reward, patience, minimum and maximum', () => {
  const o = { min: 3, max: 10, window: 2, patience: 2 };
  assert.equal(weightPhaseShouldStop([0.1, 0.2], o), false, 'below T_min never stops');
  assert.equal(weightPhaseShouldStop([0.1, 0.2, 0.3, 0.4], o), false, 'still rising');
  // windowed means: .1 .15 .25 .35 .3 .2 → best at t=3, two steps without a new high → stop
  assert.equal(weightPhaseShouldStop([0.1, 0.2, 0.3, 0.4, 0.2, 0.2], o), true);
  assert.equal(weightPhaseShouldStop([0.1, 0.2, 0.3, 0.4, 0.2], o), false, 'one step of patience used');
  assert.equal(
    weightPhaseShouldStop(
      Array(10)
        .fill(0)
        .map((_, i) => i),
      o,
    ),
    true,
    'max steps',
  );
  // a noisy single step that would trip an unwindowed rule does not trip the windowed one
  assert.equal(weightPhaseShouldStop([0.1, 0.5, 0.1, 0.45, 0.45], { ...o, window: 3 }), false);
});

test('adaptive harness rule: J_min, patience on the archive best, maximum', () => {
  const o = { min: 3, max: 6, patience: 2 };
  assert.equal(harnessPhaseShouldStop([0.1, 0.1], o), false);
  assert.equal(harnessPhaseShouldStop([0.1, 0.1, 0.1], o), true, 'J_min reached, no improvement for 2');
  assert.equal(harnessPhaseShouldStop([0.1, 0.1, 0.2], o), false);
  assert.equal(harnessPhaseShouldStop([0.1, 0.1, 0.2, 0.2, 0.2], o), true);
  assert.equal(harnessPhaseShouldStop([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], o), true, 'maximum');
});

test('a schedule that cannot run is refused before anything is spent, with the arithmetic', () => {
  const rsft = RsftSchema.parse({ batchPrompts: 32, groupSize: 8 });
  const search = SearchSchema.parse({});
  const sizes = { weight: 4096, harness: 256 };
  assert.throws(
    () => checkSchedule('whale', ScheduleSchema.parse({ epochs: 0 }), rsft, search, BudgetSchema.parse({}), sizes, 'whale.config.json'),
    /schedule\.epochs: E must be > 0/,
  );
  assert.throws(
    () => checkSchedule('whale', ScheduleSchema.parse({ iterations: 0 }), rsft, search, BudgetSchema.parse({}), sizes, 'whale.config.json'),
    /schedule\.iterations: I must be ≥ 1/,
  );
  assert.throws(
    () => checkSchedule('whale', ScheduleSchema.parse({ epochs: 0.25 }), rsft, search, BudgetSchema.parse({ rollouts: 1000 }), sizes, 'whale.config.json'),
    (e: unknown) =>
      e instanceof InputError &&
      /budget\.rollouts: a budget of 1000 rollouts cannot buy one weight phase: 32 steps × B 32 prompts × G 8 samples = 8192 rollouts/.test(e.message),
  );
  assert.throws(
    () => checkSchedule('harness-only', s, rsft, search, BudgetSchema.parse({ rollouts: 100 }), sizes, 'f'),
    /256 harness tasks × \(1 seed \+ 3 rounds × M 3 candidates\) = 2560 rollouts/,
  );
  checkSchedule('whale', s, rsft, search, BudgetSchema.parse({ rollouts: 100_000 }), sizes, 'f');
});

test('adaptive: T_min, W and P_w are in epochs (the paper: 0.2 each), and no cap unless maxEpochs is set', () => {
  const a = ScheduleSchema.parse({ cycles: 2 });
  assert.deepEqual([a.adaptive.minEpochs, a.adaptive.windowEpochs, a.adaptive.patienceEpochs, a.adaptive.maxEpochs], [0.2, 0.2, 0.2, undefined]);
  // 512 weight tasks at B 32: 16 steps an epoch, so 0.2 epoch = 3.2 → 4 steps.
  const w = phasePlan('adaptive', a, 0, 512, 32)!;
  assert.deepEqual(w.steps, { min: 4, max: Number.POSITIVE_INFINITY });
  assert.deepEqual(w.rule, { window: 4, patience: 4 });
  assert.equal(w.epochsPerStep, 1 / 16);
  const capped = phasePlan('adaptive', ScheduleSchema.parse({ adaptive: { windowEpochs: 0.5, patienceEpochs: 0.125, maxEpochs: 1 } }), 0, 512, 32)!;
  assert.deepEqual([capped.steps!.max, capped.rule!.window, capped.rule!.patience], [16, 8, 2]);
  // The rule with those steps: rising reward never stops an uncapped phase; a plateau does.
  const rising = Array.from({ length: 40 }, (_, i) => i / 40);
  assert.equal(weightPhaseShouldStop(rising, { ...w.steps!, ...w.rule! }), false);
  assert.equal(weightPhaseShouldStop([...rising.slice(0, 10), ...Array(8).fill(0.2)], { ...w.steps!, ...w.rule! }), true);
  assert.throws(() => ScheduleSchema.parse({ adaptive: { window: 3 } }), /window/, 'the old step-unit fields are refused, not silently read as epochs');
});

test("budget modes: matched-steps gives weight-only WHALE's RSFT steps (cycles phases, not 2 × cycles); search is never refused by its rollout cap", () => {
  const total = (m: 'whale' | 'weight-only' | 'stagewise', mode: 'equal-total' | 'matched-steps') => {
    let steps = 0;
    for (let i = 0; ; i++) {
      const p = phasePlan(m, s, i, 1000, 100, mode);
      if (!p) return steps;
      if (p.kind === 'weight') steps += p.steps!.max;
    }
  };
  assert.equal(matchedSteps(s, 1000, 100), 10);
  assert.equal(total('whale', 'matched-steps'), 10);
  assert.equal(total('weight-only', 'matched-steps'), 10);
  assert.equal(total('stagewise', 'matched-steps'), 10);
  assert.equal(total('weight-only', 'equal-total'), 20, 'equal-total: the same phase count, the budget cuts it');
  const rsft = RsftSchema.parse({ batchPrompts: 32, groupSize: 8 });
  const search = SearchSchema.parse({});
  const sizes = { weight: 4096, harness: 256 };
  assert.throws(() => checkSchedule('harness-only', s, rsft, search, BudgetSchema.parse({ rollouts: 100 }), sizes, 'f'), /cannot buy one harness phase/);
  checkSchedule('harness-only', s, rsft, search, BudgetSchema.parse({ rollouts: 100, mode: 'matched-steps' }), sizes, 'f');
  assert.equal(BudgetSchema.parse({}).mode, 'equal-total');
});
