// Bottleneck diagnostics: per-rollout rates and a domain's own diagnostics, aggregated per phase and
// split and per candidate from the trajectories a run's journal points at, shown by `whale report`.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ResultStore } from '../../src/archive/resultStore.js';
import { addTrajectory, diagnosticsRow, emptyAggregate, runDiagnostics, type DiagnosableTrajectory } from '../../src/report/diagnostics.js';
import { writeReport } from '../../src/report/report.js';
import { JournalBuilder, writeRuns } from './report-fixtures.js';

const root = mkdtempSync(join(tmpdir(), 'whale-diag-'));
after(() => rmSync(root, { recursive: true, force: true }));

type T = DiagnosableTrajectory;
const traj = (o: {
  pass?: boolean;
  answer?: string | null;
  extracted?: string | null;
  cut?: boolean;
  tools?: number;
  calls?: number;
  termination?: string;
  d?: T['diagnostics'];
}): T => ({
  modelCalls: Array.from({ length: o.calls ?? 1 }, (_, i) => ({ finishReason: o.cut && i === 0 ? 'length' : 'stop' })),
  events: [...Array.from({ length: o.tools ?? 0 }, () => ({ type: 'tool' })), { type: 'log' }],
  finalAnswer: o.answer === undefined ? 'x' : o.answer,
  termination: o.termination ?? (o.answer === null ? 'no_answer' : 'answered'),
  verdict: { pass: o.pass ?? false, extracted: o.extracted === undefined ? (o.answer === null ? null : 'x') : o.extracted },
  ...(o.d ? { diagnostics: o.d } : {}),
});

test('per-rollout rates, and domain diagnostics: numbers averaged, booleans as rates, strings counted', () => {
  const a = emptyAggregate();
  const ts = [
    traj({ pass: true, tools: 2, calls: 3, d: { retrievalHit: true, searches: 2, mode: 'chain' } }),
    traj({ answer: null, cut: true, tools: 1, calls: 2, d: { retrievalHit: false, searches: 1, mode: 'guess' } }),
    traj({ extracted: null, d: { retrievalHit: true, searches: 0, mode: 'guess', empty: null } }),
    traj({ answer: null, termination: 'infra_error' }),
    traj({ answer: null, termination: 'crash', calls: 0 }),
  ];
  for (const t of ts) addTrajectory(a, t);
  const row = diagnosticsRow(a);
  // By hand: 5 rollouts; 1 pass; 1 truncated; no answer: #2 and #5 (#4 is infra, counted apart); extraction: #3.
  assert.deepEqual(
    [
      row.rollouts,
      row.pass,
      row.truncated,
      row.noAnswer,
      row.extractionFailure,
      row.infraFailure,
      row.harnessFailure,
      row.toolCallsPerRollout,
      row.modelCallsPerRollout,
    ],
    [5, 0.2, 0.2, 0.4, 0.2, 0.2, 0.2, 3 / 5, 7 / 5],
  );
  assert.equal(row['domain.retrievalHit'], 2 / 3, 'over the rollouts that reported it');
  // #1 (passed) and #3 (failed) held retrievalHit; #2 (false) does not count.
  assert.equal(row['passWhen.retrievalHit'], 1 / 2, 'the pass rate among the rollouts where it held');
  assert.equal(row['passWhen.searches'], undefined, 'only yes/no keys');
  assert.equal(row['domain.searches'], 1);
  assert.equal(row['domain.mode'], 'guess 2, chain 1');
  assert.equal(row['domain.empty'], undefined, 'null values are not counted');
});

test('runDiagnostics: per phase and split, per candidate; a key named twice in one phase is read once', () => {
  const j = new JournalBuilder();
  j.add('run_started', { runId: 'r', method: 'whale', seed: 0, domain: 'd', h0: 'h0', harness: 'h0', version: 'base' })
    .add('validation', { phase: -1, keyHash: 'v0' })
    .add('weight_step', { phase: 0, evalKeyHash: 'w0' })
    .add('weight_step', { phase: 0, evalKeyHash: 'w1' })
    .add('validation', { phase: 0, keyHash: 'v1' })
    .add('candidate_scored', { phase: 1, round: 0, treeHash: 'h0', keyHash: 'c0' })
    .add('candidate_scored', { phase: 1, round: 1, treeHash: 'hA', keyHash: 'cA' })
    .add('candidate_scored', { phase: 1, round: 2, treeHash: 'h0', keyHash: 'c0' })
    .add('test_evaluation', { keyHash: 't' });
  const data: Record<string, T[]> = {
    v0: [traj({ cut: true }), traj({})],
    w0: [traj({ pass: true }), traj({ cut: true })],
    w1: [traj({ pass: true }), traj({ pass: true })],
    v1: [traj({ pass: true }), traj({})],
    c0: [traj({ answer: null })],
    cA: [traj({ pass: true, tools: 2, d: { retrievalHit: true } }), traj({ pass: true, tools: 2, d: { retrievalHit: false } })],
    t: [traj({ pass: true })],
  };
  const reads: string[] = [];
  const d = runDiagnostics(j.entries, (k) => (reads.push(k), data[k] ?? []));
  assert.deepEqual(
    d.byPhase.map((p) => [p.phase, p.split, p.aggregate.rollouts, p.aggregate.passed, p.aggregate.truncated]),
    [
      [-1, 'val', 2, 0, 1],
      [0, 'weight', 4, 3, 1],
      [0, 'val', 2, 1, 0],
      [1, 'harness', 3, 2, 0],
      [null, 'test', 1, 1, 0],
    ],
  );
  assert.deepEqual(
    d.byCandidate.map((c) => [c.treeHash, c.round, c.aggregate.rollouts, diagnosticsRow(c.aggregate)['domain.retrievalHit'] ?? null]),
    [
      ['h0', 0, 1, null],
      ['hA', 1, 2, 0.5],
    ],
  );
  assert.equal(reads.filter((k) => k === 'c0').length, 1, 'each key read once');
});

test('whale report shows the diagnostics read from the result store: per method and split, per phase, per candidate', async () => {
  const store = join(root, 'store');
  const j = new JournalBuilder();
  j.add('run_started', { runId: 'run-a', method: 'whale', seed: 0, domain: 'd', h0: 'h0', harness: 'h0', version: 'base' })
    .add('validation', { phase: -1, mean: 0, se: 0, k: 1, keyHash: 'aa01', newRollouts: 4 })
    .add('phase_started', { phase: 0, kind: 'weight' })
    .add('weight_step', { phase: 0, step: 0, globalStep: 0, evalKeyHash: 'bb02', meanReward: 0.5, rollouts: 4, newRollouts: 4 })
    .add('phase_completed', { phase: 0, kind: 'weight', version: 'v1', harness: 'h0' })
    .add('validation', { phase: 0, mean: 0.5, se: 0.1, k: 1, keyHash: 'cc03', newRollouts: 4 })
    .add('run_completed', { reason: 'schedule complete' });
  writeRuns(store, [{ id: 'run-a', entries: j.entries, config: { budget: { mode: 'matched-steps' } } }]);
  const results = new ResultStore(store);
  const put = (key: string, ts: T[]) => {
    const f = results.trajectoriesFile(key);
    mkdirSync(dirname(f), { recursive: true });
    writeFileSync(f, ts.map((t) => JSON.stringify(t)).join('\n') + '\n{"torn": ');
  };
  put('aa01', [
    traj({ cut: true, answer: null, d: { retrievalHit: false } }),
    traj({ cut: true, answer: null, d: { retrievalHit: false } }),
    traj({ cut: true, d: { retrievalHit: true } }),
    traj({}),
  ]);
  put('bb02', [traj({ pass: true }), traj({ cut: true, answer: null }), traj({ pass: true }), traj({ pass: true })]);
  put('cc03', [traj({ pass: true, d: { retrievalHit: true } }), traj({ pass: true, d: { retrievalHit: true } }), traj({}), traj({ cut: true })]);
  const r = await writeReport({ storeDir: store, outDir: join(root, 'out'), now: new Date(0) });
  const md = readFileSync(r.file, 'utf8');
  assert.match(md, /## Bottleneck diagnostics/);
  // Per method and split: val (start) 4 rollouts, 0 pass, 75% truncated, 50% no answer, retrieval hit 33.3%.
  assert.match(md, /\| d \| matched-steps \| whale \| val \(start\) \| 4 \| 0\.0 \| 75\.0 \| 50\.0 \| 0\.0 \| 0\.0 \| 0\.0 \| 0\.00 \| 1\.00 \| 33\.3 \|/);
  assert.match(md, /\| d \| matched-steps \| whale \| val \(final\) \| 4 \| 50\.0 \| 25\.0 \| 0\.0 \|/);
  assert.match(md, /\| d \| matched-steps \| whale \| weight \| 4 \| 75\.0 \| 25\.0 \| 25\.0 \|/);
  assert.match(md, /\| 0 \| weight \| 4 \| 75\.0 \|/, 'the per-phase table of the run');
  assert.match(md, /domain\.retrievalHit %/);
  // Where retrievalHit held: val (start) 1 rollout, failed; the last validation 2 rollouts, both passed.
  assert.match(md, /\| d \| matched-steps \| whale \| val \(start\) \| 0\.0 \(1\) \|/, 'per method and split');
  assert.match(md, /\| d \| matched-steps \| whale \| val \(final\) \| 100\.0 \(2\) \|/);
  assert.match(md, /\| 0 \| val \| 100\.0 \(2\) \|/, 'per phase of the run');
  assert.match(md, /\| 0 \| weight \| — \|/, 'a phase whose rollouts never reported it');
  const summary = JSON.parse(readFileSync(join(r.dir, 'summary.json'), 'utf8'));
  assert.equal(summary.runs[0].diagnostics.byPhase[0].truncated, 0.75);
  assert.equal(summary.runs[0].diagnostics.byPhase[2]['passWhen.retrievalHit'], 1);
});
