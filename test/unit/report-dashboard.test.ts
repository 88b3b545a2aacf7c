// The dashboard's data from a run store on disk (journals and trajectories, as the engine writes
// them): phases as spans of the x-axis, best-so-far with the se of the validation that set it, the
// sealed-test point, weight-step signals, candidates per round with the accepted one marked,
// diagnostics per phase, method means with their spread over seeds, and the webview contract.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ResultStore } from '../../src/archive/resultStore.js';
import { DashboardSnapshot, FromWebview, ToWebview } from '../../src/core/dashboardContract.js';
import { cachedTrajectories, loadDashboard } from '../../src/report/dashboardData.js';
import { readTrajectoriesFile, runDiagnostics, diagnosticsRow } from '../../src/report/diagnostics.js';
import { JournalBuilder, simulateRun, writeRuns } from './report-fixtures.js';

const root = mkdtempSync(join(tmpdir(), 'whale-dashboard-data-'));
process.on('exit', () => rmSync(root, { recursive: true, force: true }));
const close = (a: number | null | undefined, b: number, eps = 1e-9) => assert.ok(a !== null && a !== undefined && Math.abs(a - b) < eps, `${a} ≉ ${b}`);

/** A trajectory as the runtime stores it, reduced to what the diagnostics read. */
const traj = (o: { pass?: boolean; cut?: boolean; answer?: string | null; hit?: boolean; tools?: number }) => ({
  modelCalls: [{ finishReason: o.cut ? 'length' : 'stop', text: 'x'.repeat(50) }],
  events: [...Array.from({ length: o.tools ?? 0 }, () => ({ type: 'tool', name: 'search' })), { type: 'model' }],
  finalAnswer: o.answer === undefined ? 'an answer' : o.answer,
  termination: 'final',
  verdict: { pass: o.pass === true, extracted: o.answer === null ? null : 'a' },
  ...(o.hit !== undefined ? { diagnostics: { retrievalHit: o.hit } } : {}),
});

function putTrajectories(store: string, key: string, ts: object[]): string {
  const f = new ResultStore(store).trajectoriesFile(key);
  mkdirSync(dirname(f), { recursive: true });
  writeFileSync(f, ts.map((t) => JSON.stringify(t)).join('\n') + '\n');
  return f;
}

/** W0 (2 steps of 16) · H1 (incumbent h0 and hA scored, hB invalid, a paired re-check that keeps h0) · W2 (1 step), then the test. */
function whaleJournal() {
  const j = new JournalBuilder();
  j.add('session_started', { pid: 1 })
    .add('run_started', { runId: 'run-w', method: 'whale', seed: 3, domain: 'kbqa', h0: 'h0', harness: 'h0', version: 'base' })
    .add('validation', { phase: -1, version: 'base', harness: 'h0', mean: 0.2, se: 0.05, k: 4, newRollouts: 40, keyHash: 'val0' })
    .add('phase_started', { phase: 0, kind: 'weight', version: 'base', harness: 'h0' })
    .add('weight_step', {
      phase: 0,
      globalStep: 0,
      newRollouts: 16,
      meanReward: 0.25,
      truncationRate: 0.5,
      acceptedFraction: 0.2,
      meanLoss: 1.2,
      versionAfter: 'v1',
      evalKeyHash: 'w0',
    })
    .add('weight_step', {
      phase: 0,
      globalStep: 1,
      newRollouts: 16,
      meanReward: 0.3,
      truncationRate: 0.4,
      acceptedFraction: 0.3,
      meanLoss: null,
      versionAfter: 'v2',
    })
    .add('phase_completed', { phase: 0, kind: 'weight', version: 'v2', harness: 'h0' })
    .add('validation', { phase: 0, version: 'v2', harness: 'h0', mean: 0.35, se: 0.04, k: 4, newRollouts: 40, keyHash: 'val1' })
    .add('phase_started', { phase: 1, kind: 'harness', version: 'v2', harness: 'h0' })
    .add('candidate_scored', { phase: 1, round: 0, treeHash: 'h0', version: 'v2', mean: 0.3, se: 0.1, newRollouts: 10, keyHash: 'c0' })
    .add('proposal', { phase: 1, round: 1, candidates: [], report: 'r', dollars: 0.5, proposer: 'llm' })
    .add('candidate_scored', { phase: 1, round: 1, treeHash: 'hA', version: 'v2', mean: 0.45, se: 0.1, newRollouts: 10, keyHash: 'c1' })
    .add('candidate_invalid', { phase: 1, round: 1, treeHash: 'hB', reasons: ['x'], newRollouts: 1 })
    .add('round_done', { phase: 1, round: 1, bestTreeHash: 'hA', bestMean: 0.45 })
    .add('acceptance', { phase: 1, rule: 'paired', archiveBest: 'hA', incumbent: 'h0', pairedChoice: 'h0', changedChoice: true, newRollouts: 20, chosen: 'h0' })
    .add('phase_completed', { phase: 1, kind: 'harness', version: 'v2', harness: 'h0' })
    // Lower than the best: the best-so-far and its se stay those of phase 0's validation.
    .add('validation', { phase: 1, version: 'v2', harness: 'h0', mean: 0.3, se: 0.09, k: 4, newRollouts: 40 })
    .add('phase_started', { phase: 2, kind: 'weight', version: 'v2', harness: 'h0' })
    .add('weight_step', {
      phase: 2,
      globalStep: 2,
      newRollouts: 16,
      meanReward: 0.4,
      truncationRate: 0.2,
      acceptedFraction: 0.4,
      meanLoss: 0.9,
      versionAfter: 'v3',
    })
    .add('phase_completed', { phase: 2, kind: 'weight', version: 'v3', harness: 'h0' })
    .add('validation', { phase: 2, version: 'v3', harness: 'h0', mean: 0.5, se: 0.03, k: 4, newRollouts: 40 })
    .add('test_evaluation', { version: 'v3', harness: 'h0', mean: 0.47, se: 0.06, k: 4, newRollouts: 40, keyHash: 'test' })
    .add('run_completed', { reason: 'schedule complete' });
  return j.entries;
}

test('a run on disk: phase spans, best-so-far ± the se that set it, test point, weight steps, round candidates, diagnostics, ledger', () => {
  const store = join(root, 'one');
  writeRuns(store, [{ id: 'run-w', entries: whaleJournal(), config: { method: 'whale', seed: 3 } }]);
  putTrajectories(store, 'val0', [traj({ cut: true, answer: null, hit: false }), traj({ hit: true }), traj({ pass: true, hit: true }), traj({})]);
  putTrajectories(store, 'w0', [traj({ pass: true, tools: 2 }), traj({ cut: true, tools: 1 })]);
  putTrajectories(store, 'c0', [traj({ pass: true }), traj({})]);
  putTrajectories(store, 'c1', [traj({ pass: true }), traj({ pass: true }), traj({ answer: null })]);
  const snap = loadDashboard(store, new Date(0));
  assert.equal(snap.error, undefined);
  assert.equal(DashboardSnapshot.safeParse(snap).success, true);
  assert.equal(ToWebview.safeParse({ type: 'snapshot', snapshot: snap }).success, true);
  const [r] = snap.runs;

  // x counts training (16+16, then 16) and search (10+10+1 invalid+20 paired), never evaluation.
  assert.deepEqual(
    r.phases.map((p) => [p.phase, p.kind, p.from, p.to, p.completed, p.work]),
    [
      [0, 'weight', 0, 32, true, 'W 2 steps'],
      [1, 'harness', 32, 73, true, 'H 2 iterations'],
      [2, 'weight', 73, 89, true, 'W 1 step'],
    ],
  );
  assert.deepEqual(
    r.curve.map((p) => [p.phase, p.x, p.y, p.se, p.mean]),
    [
      [-1, 0, 0.2, 0.05, 0.2],
      [0, 32, 0.35, 0.04, 0.35],
      [1, 73, 0.35, 0.04, 0.3],
      [2, 89, 0.5, 0.03, 0.5],
    ],
  );
  assert.deepEqual(r.test, { x: 89, mean: 0.47, se: 0.06, k: 4 });
  assert.equal(r.k, 4);
  assert.equal(r.phaseSequence, 'W(2) H(2) W(1)');
  assert.deepEqual(
    r.training.map((t) => [t.step, t.phase, t.reward, t.accepted, t.truncation, t.loss]),
    [
      [1, 0, 0.25, 0.2, 0.5, 1.2],
      [2, 0, 0.3, 0.3, 0.4, null],
      [3, 2, 0.4, 0.4, 0.2, 0.9],
    ],
  );
  // The paired rule kept the incumbent h0 over the archive best hA: h0 is the one marked.
  assert.deepEqual(
    r.candidates.map((c) => [c.phase, c.round, c.treeHash, c.mean, c.accepted]),
    [
      [1, 0, 'h0', 0.3, true],
      [1, 1, 'hA', 0.45, false],
    ],
  );
  assert.deepEqual(r.acceptances, [{ phase: 1, text: 'paired: h0 (kept the incumbent; paired rule overrode the archive best hA)', chosen: 'h0', invalid: 1 }]);
  assert.deepEqual(r.ledger, { trainingRollouts: 48, searchRollouts: 41, evalRollouts: 200, proposerDollars: 0.5, wallMs: r.ledger.wallMs });

  // Diagnostics per phase and split, from the trajectories the journal points at.
  const byWhere = new Map(r.diagnostics.map((d) => [`${d.phase}/${d.split}`, d.values]));
  // val1 (phase 0's validation) has no trajectories file: a row of no rollouts is left out.
  assert.deepEqual([...byWhere.keys()], ['-1/val', '0/weight', '1/harness']);
  const start = byWhere.get('-1/val')!;
  assert.deepEqual([start.rollouts, start.pass, start.truncated, start.noAnswer], [4, 0.25, 0.25, 0.25]);
  close(start['domain.retrievalHit'] as number, 2 / 3);
  const w0 = byWhere.get('0/weight')!;
  assert.deepEqual([w0.rollouts, w0.pass, w0.truncated, w0.toolCallsPerRollout], [2, 0.5, 0.5, 1.5]);
  const h1 = byWhere.get('1/harness')!;
  assert.deepEqual([h1.rollouts, h1.pass, h1.noAnswer], [5, 0.6, 0.2]);
});

test('a run whose store lost its results still draws: no diagnostics, everything else from the journal', () => {
  const store = join(root, 'no-results');
  writeRuns(store, [{ id: 'run-w', entries: whaleJournal(), config: {} }]);
  const [r] = loadDashboard(store).runs;
  assert.deepEqual(r.diagnostics, []);
  assert.equal(r.curve.length, 4);
});

test('an unfinished phase runs to the end of the journal; a stopped run has no test point', () => {
  const entries = whaleJournal();
  const cut = entries.findIndex((e) => e.type === 'acceptance');
  const partial = [...entries.slice(0, cut), { type: 'run_stopped', at: new Date(0).toISOString(), reason: 'stop requested' }];
  const store = join(root, 'partial');
  writeRuns(store, [{ id: 'run-p', entries: partial, config: {} }]);
  const [r] = loadDashboard(store).runs;
  assert.equal(r.status, 'stopped');
  assert.equal(r.test, null);
  assert.deepEqual(
    r.phases.map((p) => [p.phase, p.from, p.to, p.completed]),
    [
      [0, 0, 32, true],
      [1, 32, 53, false],
    ],
  );
  assert.deepEqual(
    r.candidates.map((c) => c.accepted),
    [false, false],
    'no acceptance yet: nothing is marked',
  );
});

test('method means over seeds: the mean and sample sd of the runs’ own best-so-far at every x; one seed has no sd', () => {
  const store = join(root, 'grid');
  const runs = [0, 1, 2].map((seed) => simulateRun({ method: 'whale', domain: 'kbqa', seed }));
  const single = simulateRun({ method: 'weight-only', domain: 'kbqa', seed: 0 });
  writeRuns(store, [...runs, single]);
  const snap = loadDashboard(store);
  const whale = snap.methods.find((m) => m.method === 'whale')!;
  assert.deepEqual(whale.runs, runs.map((r) => r.id).sort());
  // Independently of the aggregation: each run's best-so-far read straight off its journal.
  const cumulative = (entries: (typeof runs)[number]['entries']) => {
    let spent = 0;
    let best = -Infinity;
    const pts: { x: number; y: number }[] = [];
    for (const e of entries) {
      if (e.type === 'weight_step' || e.type === 'candidate_scored' || e.type === 'candidate_invalid' || e.type === 'acceptance')
        spent += Number(e.newRollouts ?? 0);
      if (e.type === 'validation') pts.push({ x: spent, y: (best = Math.max(best, Number(e.mean))) });
    }
    return pts;
  };
  const curves = runs.map((r) => cumulative(r.entries));
  const xs = [...new Set(curves.flat().map((p) => p.x))].sort((a, b) => a - b);
  assert.deepEqual(
    whale.curve.map((p) => p.x),
    xs,
  );
  for (const p of whale.curve) {
    const ys = curves.map((c) => c.filter((q) => q.x <= p.x).pop()!.y);
    const mean = ys.reduce((a, b) => a + b, 0) / 3;
    close(p.y, mean);
    close(p.sd, Math.sqrt(ys.reduce((a, y) => a + (y - mean) ** 2, 0) / 2));
    assert.equal(p.n, 3);
  }
  const wo = snap.methods.find((m) => m.method === 'weight-only')!;
  assert.ok(wo.curve.length > 0 && wo.curve.every((p) => p.sd === null && p.n === 1));
  // Each run's test point sits at its final x (training + search).
  for (const r of snap.runs) assert.equal(r.test?.x, r.ledger.trainingRollouts + r.ledger.searchRollouts);
});

test('the slim cached trajectories count exactly what the full ones do, and a grown file is read again', () => {
  const store = join(root, 'cache');
  const ts = [traj({ cut: true, answer: null, hit: false, tools: 3 }), traj({ pass: true, hit: true }), traj({ tools: 1 })];
  const file = putTrajectories(store, 'k1', ts);
  const entries = [{ type: 'validation', at: '', phase: -1, keyHash: 'k1' }];
  const full = runDiagnostics(entries, () => readTrajectoriesFile(file));
  const slim = runDiagnostics(entries, () => cachedTrajectories(file));
  assert.deepEqual(diagnosticsRow(slim.byPhase[0].aggregate), diagnosticsRow(full.byPhase[0].aggregate));
  assert.equal(cachedTrajectories(file), cachedTrajectories(file), 'unchanged file: the cached array');
  appendFileSync(file, JSON.stringify(traj({ pass: true })) + '\n');
  assert.equal(cachedTrajectories(file).length, 4);
  assert.deepEqual(cachedTrajectories(join(root, 'nowhere.jsonl')), []);
});

test('the webview contract: report and drawn (with what the DOM shows) parse; anything else is dropped', () => {
  assert.equal(FromWebview.safeParse({ type: 'report', runs: ['a', 'b'] }).success, true);
  assert.equal(FromWebview.safeParse({ type: 'report', runs: 'a' }).success, false);
  const view = {
    charts: [{ id: 'chart-curve', title: 't', series: ['whale seed 0 · r'], points: 3 }],
    tables: { ledger: [['run'], ['r']] },
    picker: { runs: ['r'], methods: [], focus: 'r' },
  };
  assert.equal(FromWebview.safeParse({ type: 'drawn', series: 1, points: 3, runs: 1, view }).success, true);
  assert.equal(FromWebview.safeParse({ type: 'drawn', series: 1, points: 3, runs: 1, view: { charts: [] } }).success, false);
  assert.equal(ToWebview.safeParse({ type: 'select', runs: ['r'], methods: ['kbqa · whale'], focus: 'r' }).success, true);
  assert.equal(ToWebview.safeParse({ type: 'select', runs: [1] }).success, false);
});
