// The report's pure aggregation on hand-built journals: run summaries, curves, spread over seeds,
// rollouts-to-reach-weight-only's-peak, the method table, and the document built from them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  bestSoFarAt,
  meanCurve,
  methodTable,
  rolloutsToReach,
  runToReach,
  scheduleLabel,
  spread,
  summarizeRun,
  type RunSummary,
} from '../../src/report/aggregate.js';
import { curveChartSpec, trainingChartSpec } from '../../src/report/charts.js';
import { toHtml, toMarkdown } from '../../src/report/document.js';
import { buildReport, fmtPctSpread, phaseSequence } from '../../src/report/report.js';
import { JournalBuilder } from './report-fixtures.js';

const close = (a: number, b: number, eps = 1e-9) => assert.ok(Math.abs(a - b) < eps, `${a} ≉ ${b}`);

/** A whale run with one paired acceptance that overrode the archive best. */
function handBuiltWhale() {
  const j = new JournalBuilder();
  j.add('session_started', { pid: 1 })
    .add('run_started', { runId: 'r1', method: 'whale', seed: 0, domain: 'd', h0: 'h0', harness: 'h0', version: 'base' })
    .add('validation', { phase: -1, version: 'base', harness: 'h0', mean: 0.2, se: 0.02, k: 4, newRollouts: 40 })
    .add('phase_started', { phase: 0, kind: 'weight', cycle: 0, mode: 'full', adaptive: false, version: 'base', harness: 'h0' })
    .add('weight_step', {
      phase: 0,
      step: 0,
      globalStep: 0,
      newRollouts: 16,
      meanReward: 0.25,
      truncationRate: 0.5,
      acceptedFraction: 0.25,
      meanLoss: 1.2,
      versionAfter: 'v1',
    })
    .add('weight_step', {
      phase: 0,
      step: 1,
      globalStep: 1,
      newRollouts: 16,
      meanReward: 0.3,
      truncationRate: 0.4,
      acceptedFraction: 0.3,
      meanLoss: null,
      versionAfter: 'v2',
    })
    .add('phase_completed', { phase: 0, kind: 'weight', version: 'v2', harness: 'h0' })
    .add('validation', { phase: 0, version: 'v2', harness: 'h0', mean: 0.3, se: 0.02, k: 4, newRollouts: 40 })
    .add('phase_started', { phase: 1, kind: 'harness', cycle: 0, mode: 'full', adaptive: false, version: 'v2', harness: 'h0' })
    .add('candidate_scored', { phase: 1, round: 0, treeHash: 'h0', version: 'v2', mean: 0.3, se: 0.1, meanTurns: 1, newRollouts: 10 })
    .add('proposal', { phase: 1, round: 1, candidates: [], report: 'r', dollars: 0.5, proposer: 'llm' })
    .add('candidate_scored', { phase: 1, round: 1, treeHash: 'hA', version: 'v2', mean: 0.4, se: 0.1, meanTurns: 1, newRollouts: 10 })
    .add('candidate_invalid', { phase: 1, round: 1, treeHash: 'hB', reasons: ['x'], newRollouts: 1 })
    .add('round_done', { phase: 1, round: 1, bestTreeHash: 'hA', bestMean: 0.4 })
    .add('acceptance', {
      phase: 1,
      rule: 'paired',
      archiveBest: 'hA',
      archiveBestMean: 0.4,
      incumbent: 'h0',
      pairedChoice: 'h0',
      diff: 0.01,
      seDiff: 0.05,
      changedChoice: true,
      newRollouts: 20,
      chosen: 'h0',
    })
    .add('phase_completed', { phase: 1, kind: 'harness', version: 'v2', harness: 'h0' })
    .add('validation', { phase: 1, version: 'v2', harness: 'h0', mean: 0.28, se: 0.02, k: 4, newRollouts: 40 })
    .add('phase_started', { phase: 2, kind: 'weight', cycle: 1, mode: 'full', adaptive: false, version: 'v2', harness: 'h0' })
    .add('weight_step', {
      phase: 2,
      step: 0,
      globalStep: 2,
      newRollouts: 16,
      meanReward: 0.35,
      truncationRate: 0.3,
      acceptedFraction: 0.35,
      meanLoss: 1.0,
      versionAfter: 'v3',
    })
    .add('phase_completed', { phase: 2, kind: 'weight', version: 'v3', harness: 'h0' })
    .add('validation', { phase: 2, version: 'v3', harness: 'h0', mean: 0.4, se: 0.02, k: 4, newRollouts: 40 })
    .add('test_evaluation', { version: 'v3', harness: 'h0', mean: 0.38, se: 0.03, k: 4, newRollouts: 40 })
    .add('run_completed', { reason: 'schedule complete' });
  return { id: 'r1', entries: j.entries };
}

/**
 * A run whose validation after each phase has the given means, each phase costing `spend[i]`
 * rollouts (weight steps, or candidate scorings for harness-only).
 */
function simpleRun(
  id: string,
  method: string,
  domain: string,
  seed: number,
  spend: number[],
  means: number[],
  opts: { test?: number; end?: 'completed' | 'stopped' | 'none' } = {},
) {
  const j = new JournalBuilder();
  j.add('session_started', {}).add('run_started', { runId: id, method, seed, domain, h0: 'h0', harness: 'h0', version: 'base' });
  j.add('validation', { phase: -1, version: 'base', harness: 'h0', mean: means[0], se: 0.01, k: 8, newRollouts: 100 });
  spend.forEach((n, i) => {
    const kind = method === 'harness-only' ? 'harness' : 'weight';
    j.add('phase_started', { phase: i, kind });
    if (kind === 'weight')
      j.add('weight_step', {
        phase: i,
        step: 0,
        globalStep: i,
        newRollouts: n,
        meanReward: means[i + 1],
        truncationRate: 0.1,
        acceptedFraction: means[i + 1],
        meanLoss: 1,
        versionAfter: `v${i + 1}`,
      });
    else j.add('candidate_scored', { phase: i, round: 0, treeHash: 'h0', version: 'base', mean: 0.1, se: 0.1, meanTurns: 1, newRollouts: n });
    j.add('phase_completed', { phase: i, kind, version: kind === 'weight' ? `v${i + 1}` : 'base', harness: 'h0' });
    j.add('validation', { phase: i, version: 'x', harness: 'h0', mean: means[i + 1], se: 0.01, k: 8, newRollouts: 100 });
  });
  const end = opts.end ?? 'completed';
  if (end === 'completed') {
    if (opts.test !== undefined) j.add('test_evaluation', { version: 'x', harness: 'h0', mean: opts.test, se: 0.01, k: 8, newRollouts: 100 });
    j.add('run_completed', { reason: 'schedule complete' });
  } else if (end === 'stopped') j.add('run_stopped', { reason: 'stop requested' });
  return summarizeRun({ id, entries: j.entries });
}

test('summarizeRun: curve x counts training + search (incl. paired re-checks), not evaluation; best-so-far; ledger', () => {
  const s = summarizeRun(handBuiltWhale());
  assert.equal(s.method, 'whale');
  assert.equal(s.domain, 'd');
  assert.equal(s.seed, 0);
  assert.equal(s.k, 4);
  assert.deepEqual(
    s.curve.map((p) => p.cumulativeRollouts),
    [0, 32, 73, 89],
  );
  assert.deepEqual(
    s.curve.map((p) => p.bestSoFar),
    [0.2, 0.3, 0.3, 0.4],
  );
  assert.deepEqual(
    s.curve.map((p) => p.phase),
    [-1, 0, 1, 2],
  );
  assert.equal(s.ledger.trainingRollouts, 48);
  assert.equal(s.ledger.searchRollouts, 41);
  assert.equal(s.ledger.evalRollouts, 200);
  assert.equal(s.ledger.proposerDollars, 0.5);
  assert.deepEqual(s.best && { mean: s.best.mean, phase: s.best.phase }, { mean: 0.4, phase: 2 });
  assert.deepEqual(s.test, { mean: 0.38, se: 0.03, k: 4 });
  assert.equal(s.status, 'completed');
  assert.equal(s.reason, 'schedule complete');
});

test('summarizeRun: phases, acceptance, paired-rule counts and training points', () => {
  const s = summarizeRun(handBuiltWhale());
  assert.deepEqual(
    s.phases.map((p) => [p.phase, p.kind, p.completed, p.steps, p.scored, p.invalid]),
    [
      [0, 'weight', true, 2, undefined, undefined],
      [1, 'harness', true, undefined, 2, 1],
      [2, 'weight', true, 1, undefined, undefined],
    ],
  );
  const a = s.phases[1].acceptance!;
  assert.equal(a.rule, 'paired');
  assert.equal(a.archiveBest, 'hA');
  assert.equal(a.chosen, 'h0');
  assert.equal(a.changedChoice, true);
  assert.equal(a.olderCandidate, false);
  assert.equal(s.pairedUsed, 1);
  assert.equal(s.pairedChanged, 1);
  assert.deepEqual(
    s.phases.map((p) => p.validation),
    [0.3, 0.28, 0.4],
  );
  assert.deepEqual(
    s.training.map((t) => [t.globalStep, t.meanReward, t.truncationRate, t.meanLoss]),
    [
      [0, 0.25, 0.5, 1.2],
      [1, 0.3, 0.4, null],
      [2, 0.35, 0.3, 1.0],
    ],
  );
  assert.equal(phaseSequence(s), 'W(2) H(2) W(1)');
});

test('summarizeRun: a return to an older candidate; archive-best rule is not counted as paired', () => {
  const j = new JournalBuilder();
  j.add('run_started', { runId: 'r', method: 'harness-only', seed: 1, domain: 'd', h0: 'h0', harness: 'h0', version: 'base' })
    .add('candidate_scored', { phase: 0, round: 0, treeHash: 'h0', mean: 0.1, newRollouts: 5 })
    .add('candidate_scored', { phase: 0, round: 1, treeHash: 'hOld', mean: 0.5, newRollouts: 5 })
    .add('candidate_scored', { phase: 0, round: 1, treeHash: 'hX', mean: 0.3, newRollouts: 5 })
    .add('acceptance', { phase: 0, rule: 'archive-best', archiveBest: 'hOld', incumbent: 'h0', chosen: 'hX', newRollouts: 0 })
    .add('phase_completed', { phase: 0, kind: 'harness', version: 'base', harness: 'hX' })
    .add('candidate_scored', { phase: 1, round: 0, treeHash: 'hX', mean: 0.3, newRollouts: 0 })
    .add('candidate_scored', { phase: 1, round: 1, treeHash: 'hNew', mean: 0.2, newRollouts: 5 })
    .add('acceptance', { phase: 1, rule: 'archive-best', archiveBest: 'hOld', incumbent: 'hX', chosen: 'hOld', newRollouts: 0 })
    .add('phase_completed', { phase: 1, kind: 'harness', version: 'base', harness: 'hOld' });
  const s = summarizeRun({ id: 'r', entries: j.entries });
  assert.equal(s.phases[0].acceptance!.olderCandidate, false);
  assert.equal(s.phases[1].acceptance!.olderCandidate, true);
  assert.equal(s.pairedUsed, 0);
  assert.equal(s.status, 'in progress');
  assert.match(s.reason, /not finished/);
  assert.equal(s.curve.length, 0);
});

test('summarizeRun: config fills what run_started lacks; stopped runs say they can be resumed', () => {
  const j = new JournalBuilder();
  j.add('run_started', { runId: 'r', version: 'base', harness: 'h0' }).add('run_stopped', { reason: 'stop requested' });
  const s = summarizeRun({ id: 'r', entries: j.entries, config: { method: 'fst', seed: 3, domain: { id: 'ramble' }, evaluation: { k: 2 } } });
  assert.deepEqual([s.method, s.seed, s.domain, s.k, s.status], ['fst', 3, 'ramble', 2, 'stopped']);
  assert.equal(s.reason, 'stop requested (resumable)');
});

test('spread: mean, sample standard deviation, standard error, n', () => {
  const s = spread([0.1, 0.2, 0.3]);
  close(s.mean, 0.2);
  close(s.sd, 0.1);
  close(s.se, 0.1 / Math.sqrt(3));
  assert.equal(s.n, 3);
  const one = spread([0.4]);
  assert.equal(one.mean, 0.4);
  assert.ok(Number.isNaN(one.sd) && Number.isNaN(one.se));
  assert.equal(spread([]).n, 0);
  assert.equal(fmtPctSpread(s), '20.0 ± 10.0');
  assert.equal(fmtPctSpread(one), '40.0');
  assert.equal(fmtPctSpread(s, 4), '20.0 ± 10.0 (n=3)');
  assert.equal(fmtPctSpread(spread([])), '—');
});

test('bestSoFarAt and meanCurve: step functions, union of x, carry-forward after a run ends', () => {
  const a = [
    { cumulativeRollouts: 0, bestSoFar: 0.1 },
    { cumulativeRollouts: 50, bestSoFar: 0.2 },
    { cumulativeRollouts: 100, bestSoFar: 0.35 },
    { cumulativeRollouts: 200, bestSoFar: 0.4 },
  ];
  const b = [
    { cumulativeRollouts: 0, bestSoFar: 0.1 },
    { cumulativeRollouts: 60, bestSoFar: 0.3 },
    { cumulativeRollouts: 120, bestSoFar: 0.3 },
  ];
  assert.equal(bestSoFarAt(a, -1), undefined);
  assert.equal(bestSoFarAt(a, 0), 0.1);
  assert.equal(bestSoFarAt(a, 99), 0.2);
  assert.equal(bestSoFarAt(a, 1e9), 0.4);
  const m = meanCurve([a, b, []]);
  assert.deepEqual(
    m.map((p) => p.x),
    [0, 50, 60, 100, 120, 200],
  );
  const means = [0.1, 0.15, 0.25, 0.325, 0.325, 0.35];
  m.forEach((p, i) => close(p.mean, means[i]));
  assert.deepEqual(
    m.map((p) => p.n),
    [2, 2, 2, 2, 2, 2],
  );
  assert.deepEqual(
    m.map((p) => p.active),
    [2, 2, 2, 2, 1, 0],
  );
  close(m[5].sd, Math.sqrt(2 * 0.05 ** 2));
  close(m[0].sd, 0);
  assert.deepEqual(meanCurve([]), []);
});

test('rolloutsToReach: the first x at or above the target; never → undefined', () => {
  const c = [
    { x: 0, y: 0.1 },
    { x: 10, y: 0.3 },
    { x: 20, y: 0.5 },
  ];
  assert.equal(rolloutsToReach(c, 0.3), 10);
  assert.equal(rolloutsToReach(c, 0.3 + 1e-12), 10);
  assert.equal(rolloutsToReach(c, 0.31), 20);
  assert.equal(rolloutsToReach(c, 0.05), 0);
  assert.equal(rolloutsToReach(c, 0.6), undefined);
  assert.equal(rolloutsToReach([], 0.1), undefined);
});

function tableRuns(): RunSummary[] {
  return [
    simpleRun('wo0', 'weight-only', 'd', 0, [100, 100], [0.1, 0.2, 0.3], { test: 0.28 }),
    simpleRun('wo1', 'weight-only', 'd', 1, [100, 100], [0.1, 0.3, 0.25], { test: 0.26 }),
    simpleRun('w0', 'whale', 'd', 0, [50, 50, 100], [0.1, 0.2, 0.35, 0.4], { test: 0.38 }),
    simpleRun('w1', 'whale', 'd', 1, [60, 60], [0.1, 0.3, 0.25], { test: 0.28 }),
    simpleRun('w9', 'whale', 'd', 9, [10], [0.1, 0.9], { end: 'stopped' }),
    simpleRun('ho0', 'harness-only', 'd', 0, [30, 30], [0.1, 0.12, 0.15], { test: 0.14 }),
    simpleRun('e0', 'whale', 'e', 0, [10], [0.2, 0.5]),
  ];
}

test('methodTable: one row per (domain, method) over completed seeds, spreads, rollouts, reach of weight-only peak', () => {
  const t = methodTable(tableRuns());
  assert.deepEqual(
    t.rows.map((r) => [r.domain, r.method, r.n]),
    [
      ['d', 'whale', 2],
      ['d', 'weight-only', 2],
      ['d', 'harness-only', 1],
      ['e', 'whale', 1],
    ],
  );
  const [whale, wo, ho, e] = t.rows;
  assert.deepEqual(whale.runs, ['w0', 'w1']);
  assert.deepEqual(whale.excluded, ['w9']);
  close(whale.bestValidation.mean, 0.35);
  close(whale.bestValidation.sd, Math.sqrt(2 * 0.05 ** 2));
  assert.equal(whale.bestValidation.n, 2);
  close(whale.test.mean, 0.33);
  assert.equal(whale.test.n, 2);
  assert.equal(whale.testK, 8);
  assert.equal(whale.k, 8);
  close(whale.rollouts.mean, (200 + 120) / 2);
  close(whale.trainingRollouts.mean, 160);
  close(whale.evalRollouts.mean, (500 + 400) / 2);
  assert.equal(whale.dollars.mean, 0);
  // weight-only's mean curve: 0.1, 0.25, 0.3 at x = 0, 100, 200 → peak 0.3
  assert.equal(t.domains[0].weightOnlyPeak, 0.3);
  close(curvePeakOf(wo), 0.3);
  assert.equal(wo.toReachWeightOnlyPeak, 200);
  // whale's mean curve reaches 0.325 at x = 100
  assert.equal(whale.toReachWeightOnlyPeak, 100);
  assert.equal(ho.toReachWeightOnlyPeak, undefined);
  // no weight-only run on domain e
  assert.equal(t.domains[1].weightOnlyPeak, undefined);
  assert.equal(e.toReachWeightOnlyPeak, undefined);
  assert.equal(e.test.n, 0);
  // per run: against the domain's weight-only peak
  const runs = tableRuns();
  assert.equal(
    runToReach(
      runs.find((r) => r.id === 'w0')!,
      t,
    ),
    100,
  );
  assert.equal(
    runToReach(
      runs.find((r) => r.id === 'w1')!,
      t,
    ),
    60,
  );
  assert.equal(
    runToReach(
      runs.find((r) => r.id === 'e0')!,
      t,
    ),
    undefined,
  );
});

function curvePeakOf(r: { curve: { mean: number }[] }): number {
  return Math.max(...r.curve.map((p) => p.mean));
}

test('methodTable: a method with only unfinished runs is reported from them, marked', () => {
  const t = methodTable([simpleRun('a', 'fst', 'd', 0, [10], [0.1, 0.2], { end: 'none' })]);
  assert.equal(t.rows[0].n, 1);
  assert.equal(t.rows[0].unfinished, 1);
  assert.deepEqual(t.rows[0].excluded, []);
});

test('buildReport: table cells, charts asked for, Markdown and HTML', () => {
  const { doc, charts } = buildReport(tableRuns(), { now: new Date('2026-11-01T12:00:00Z'), skipped: [{ id: 'zz', why: 'not started' }] });
  const md = toMarkdown(doc);
  assert.match(md, /^# WHALE report/);
  assert.match(
    md,
    /\| d \| equal-total \| whale \| 1 steps ×3 \/ 1 steps ×2 \| 2 \(\+1 unfinished, not counted\) \| 35\.0 ± 7\.1 \| 33\.0 ± 7\.1 \| 3 ± 1 \| 160 ± 57 \| 160 ± 57 \| 0 \| 450 ± 71 \| \$0\.00 \| 100 \|/,
  );
  assert.match(md, /\| e \| equal-total \| whale \| 1 steps \| 1 \| 50\.0 \| — \| 1 \| 10 \| 10 \| 0 \| 200 \| \$0\.00 \| — \|/);
  assert.match(md, /\| d \| equal-total \| weight-only \| 1 steps ×2 \| 2 \| 30\.0 ± 0\.0 \| 27\.0 ± 1\.4 \|/);
  assert.match(md, /!\[d: best-so-far validation curves\]\(curves-d\.png\)/);
  assert.match(md, /`zz`: not started/);
  assert.deepEqual(
    charts.map((c) => c.name),
    ['curves-d', 'curves-e', 'reach-d', ...['w0', 'w1', 'w9', 'wo0', 'wo1', 'e0'].map((id) => `training-${id}`)],
  );
  const html = toHtml(doc);
  assert.match(html, /<img src="curves-d\.svg"/);
  assert.match(html, /<td class="num">35\.0 ± 7\.1<\/td>/);
  assert.match(html, /<code>zz<\/code>/);
  assert.doesNotMatch(html, /<script/);
});

test("buildReport: per-run acceptance detail and the paired rule's count", () => {
  const md = toMarkdown(buildReport([summarizeRun(handBuiltWhale())]).doc);
  assert.match(
    md,
    /\| 1 \| harness \| 2 scored, 1 invalid \| v2 \| `h0` \| paired: `h0` \(kept the incumbent; paired rule overrode the archive best `hA`\) \| 28\.0 \|/,
  );
  assert.match(md, /\| W\(2\) H\(2\) W\(1\) \| schedule complete \| 40\.0 ± 2\.0 \| 2 \| 38\.0 ± 3\.0 \| 89 \| 200 \| \$0\.50 \| — \| 1 of 1 \|/);
});

test('buildReport: no runs', () => {
  const md = toMarkdown(buildReport([]).doc);
  assert.match(md, /No runs to report\./);
});

test('chart specs: layers, band clamped to [0, 1], the weight-only rule only with a peak; no training chart without steps', () => {
  const pts = [
    { x: 0, mean: 0.05, sd: 0.1, se: 0.07, n: 2, active: 2 },
    { x: 10, mean: 0.5, sd: NaN, se: NaN, n: 1, active: 1 },
  ];
  const spec = curveChartSpec('d', [{ method: 'whale', points: pts }], { k: 8, weightOnlyPeak: 0.4 }) as unknown as {
    layer: unknown[];
    data: { values: { lo: number; hi: number }[] };
  };
  assert.equal(spec.layer.length, 4);
  assert.deepEqual(
    spec.data.values.map((v) => [v.lo, v.hi]),
    [
      [0, 0.15000000000000002],
      [0.5, 0.5],
    ],
  );
  const noPeak = curveChartSpec('d', [{ method: 'whale', points: pts }]) as unknown as { layer: unknown[] };
  assert.equal(noPeak.layer.length, 2);
  const ho = simpleRun('h', 'harness-only', 'd', 0, [5], [0.1, 0.2]);
  assert.equal(trainingChartSpec(ho), undefined);
  const w = trainingChartSpec(summarizeRun(handBuiltWhale())) as unknown as {
    layer: { data: { values: { step: number; metric: string; value: number }[] } }[];
  };
  assert.deepEqual(
    w.layer[1].data.values.filter((v) => v.metric === 'truncation rate').map((v) => [v.step, v.value]),
    [
      [1, 0.5],
      [2, 0.4],
      [3, 0.3],
    ],
  );
});

test('scheduleLabel: what ran, in epochs and iterations, beside what a budget cut short (stagewise ran I 3 of its planned 5)', () => {
  const run = (
    method: string,
    phases: ({ kind: 'weight'; steps: number; planned: number | null } | { kind: 'harness'; rounds: number; planned: number })[],
  ) => {
    const j = new JournalBuilder();
    j.add('run_started', { runId: method, method, seed: 0, domain: 'd', h0: 'h0', harness: 'h0', version: 'base' });
    phases.forEach((p, phase) => {
      if (p.kind === 'weight') {
        j.add('phase_started', {
          phase,
          kind: 'weight',
          adaptive: method === 'adaptive',
          planned: { steps: { min: p.planned ?? 2, max: p.planned }, epochsPerStep: 1 / 16 },
        });
        for (let s = 0; s < p.steps; s++) j.add('weight_step', { phase, step: s, meanReward: 0.5, rollouts: 8, newRollouts: 8 });
      } else {
        j.add('phase_started', { phase, kind: 'harness', adaptive: method === 'adaptive', planned: { iterations: { min: p.planned, max: p.planned } } });
        j.add('candidate_scored', { phase, round: 0, treeHash: 'h0', mean: 0.1, newRollouts: 4 });
        for (let r = 1; r <= p.rounds; r++) j.add('round_done', { phase, round: r, bestTreeHash: 'h0', bestMean: 0.1 });
      }
      j.add('phase_completed', { phase, kind: p.kind, version: 'v', harness: 'h0' });
    });
    return summarizeRun({ id: method, entries: j.entries });
  };
  const stagewise = run('stagewise', [
    { kind: 'weight', steps: 8, planned: 8 },
    { kind: 'harness', rounds: 2, planned: 5 },
  ]);
  assert.equal(scheduleLabel(stagewise), 'E 0.5 · I 3 of 5');
  assert.equal(phaseSequence(stagewise), 'W(8) H(3)');
  const whale = run('whale', [
    { kind: 'weight', steps: 4, planned: 4 },
    { kind: 'harness', rounds: 2, planned: 3 },
    { kind: 'weight', steps: 2, planned: 4 },
  ]);
  assert.equal(scheduleLabel(whale), 'E 0.25, E 0.13 of 0.25 · I 3');
  const adaptive = run('adaptive', [
    { kind: 'weight', steps: 5, planned: null },
    { kind: 'harness', rounds: 3, planned: 8 },
    { kind: 'weight', steps: 5, planned: null },
  ]);
  assert.equal(scheduleLabel(adaptive), 'E 0.31 ×2 · I 4', 'adaptive phases end by their rule: no "of"');
  const rows = methodTable([stagewise, whale]).rows;
  assert.deepEqual(
    rows.map((r) => r.schedules),
    [['E 0.25, E 0.13 of 0.25 · I 3'], ['E 0.5 · I 3 of 5']],
  );
  assert.match(toMarkdown(buildReport([stagewise]).doc), /\| equal-total \| stagewise \| E 0\.5 · I 3 of 5 \|/);
});

test('budget modes: runs of each mode get their own rows, weight-only peak and chart; the table shows RSFT steps beside training + search', () => {
  const run = (id: string, method: string, mode: string | undefined, steps: number, search: number, val: number) => {
    const j = new JournalBuilder();
    j.add('run_started', { runId: id, method, seed: 0, domain: 'd', h0: 'h0', harness: 'h0', version: 'base' });
    j.add('validation', { phase: -1, mean: 0.1, se: 0.01, k: 4, newRollouts: 10 });
    for (let s = 0; s < steps; s++) j.add('weight_step', { phase: 0, step: s, globalStep: s, meanReward: 0.5, rollouts: 16, newRollouts: 16 });
    if (search) j.add('candidate_scored', { phase: 1, round: 0, treeHash: 'h0', mean: 0.1, newRollouts: search });
    j.add('validation', { phase: 1, mean: val, se: 0.01, k: 4, newRollouts: 10 });
    j.add('run_completed', { reason: 'schedule complete' });
    return summarizeRun({ id, entries: j.entries, config: mode ? { budget: { mode } } : {} });
  };
  const runs = [
    run('a', 'whale', undefined, 2, 30, 0.5),
    run('b', 'weight-only', 'equal-total', 4, 0, 0.3),
    run('c', 'whale', 'matched-steps', 4, 30, 0.6),
    run('e', 'weight-only', 'matched-steps', 4, 0, 0.4),
  ];
  assert.equal(runs[0].budgetMode, 'equal-total', 'runs older than the field count as equal-total');
  const t = methodTable(runs);
  assert.deepEqual(
    t.rows.map((r) => [r.budgetMode, r.method, r.rsftSteps.mean, r.rollouts.mean]),
    [
      ['equal-total', 'whale', 2, 62],
      ['equal-total', 'weight-only', 4, 64],
      ['matched-steps', 'whale', 4, 94],
      ['matched-steps', 'weight-only', 4, 64],
    ],
  );
  assert.deepEqual(
    t.domains.map((d) => [d.budgetMode, d.weightOnlyPeak]),
    [
      ['equal-total', 0.3],
      ['matched-steps', 0.4],
    ],
  );
  const { doc, charts } = buildReport(runs, { now: new Date(0) });
  assert.deepEqual(
    charts.filter((c) => c.name.startsWith('curves')).map((c) => c.name),
    ['curves-d', 'curves-d-matched-steps'],
  );
  assert.match(toMarkdown(doc), /\| d \| matched-steps \| whale \| [^|]* \| 1 \| 60\.0 \| — \| 4 \| 94 \| 64 \| 30 \|/);
});
