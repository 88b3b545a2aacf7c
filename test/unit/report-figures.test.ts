// The paper's figures in `whale report`, from hand-built run stores whose answers are worked out by
// hand: the (E, I) grid (scheduleGrids), rows split by configured schedule, cycles and proposers per
// row, rollouts to reach weight-only's peak (table, "not reached", the chart), and the heatmaps
// rendered for real (vega + resvg) from a store on disk.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cyclesRun, methodTable, scheduleGrids, summarizeRun, type RunInput } from '../../src/report/aggregate.js';
import { gridChartSpec, reachChartSpec } from '../../src/report/charts.js';
import { toMarkdown } from '../../src/report/document.js';
import { dashboardSnapshot } from '../../src/report/dashboardData.js';
import { buildReport, writeReport } from '../../src/report/report.js';
import { H, run, W, writeRuns } from './report-fixtures.js';

const close = (a: number, b: number, eps = 1e-9) => assert.ok(Math.abs(a - b) < eps, `${a} ≉ ${b}`);

/**
 * Domain d: whale over three (E, I) cells and weight-only (its mean curve ends at 0.40 after 200
 * rollouts); domain e: whale over a single cell (no grid there).
 */
function gridStore(): RunInput[] {
  return [
    // (E 0.25, I 2): two seeds, best validation 0.35 / 0.45, test 0.30 / 0.40; two cycles each.
    run('a0', { method: 'whale', seed: 0, cell: { epochs: 0.25, iterations: 2 }, phases: [W(50, 0.2), H(10, 0.3), W(50, 0.35), H(10, 0.3)], test: 0.3 }),
    run('a1', { method: 'whale', seed: 1, cell: { epochs: 0.25, iterations: 2 }, phases: [W(50, 0.25), H(10, 0.45), W(50, 0.4), H(10, 0.4)], test: 0.4 }),
    // (E 0.25, I 6): two seeds, both test 0.20 (sd 0); the second ends after one cycle and an unfinished weight phase.
    run('b0', { method: 'whale', seed: 0, cell: { epochs: 0.25, iterations: 6 }, phases: [W(50, 0.15), H(30, 0.2), W(50, 0.22), H(30, 0.18)], test: 0.2 }),
    run('b1', { method: 'whale', seed: 1, cell: { epochs: 0.25, iterations: 6 }, phases: [W(50, 0.15), H(30, 0.26), W(50, 0.2, false)], test: 0.2 }),
    // (E 0.5, I 2): one completed seed (test 0.50), and an unfinished one that must not be counted.
    run('c0', { method: 'whale', seed: 0, cell: { epochs: 0.5, iterations: 2 }, phases: [W(100, 0.5), H(10, 0.55)], test: 0.5 }),
    run('c1', { method: 'whale', seed: 1, cell: { epochs: 0.5, iterations: 2 }, phases: [W(100, 0.9)], end: 'none' }),
    // weight-only with its own cell: never a grid (only whale's) and one row (a single cell).
    run('w0', { method: 'weight-only', seed: 0, cell: { epochs: 0.5, iterations: 3 }, phases: [W(100, 0.3), W(100, 0.4)], test: 0.38 }),
    run('w1', { method: 'weight-only', seed: 1, cell: { epochs: 0.5, iterations: 3 }, phases: [W(100, 0.2), W(100, 0.4)], test: 0.36 }),
    run('e0', { method: 'whale', domain: 'e', seed: 0, cell: { epochs: 0.5, iterations: 3 }, phases: [W(100, 0.3), H(10, 0.4)], test: 0.35 }),
  ];
}

const summaries = () => gridStore().map(summarizeRun);

test('scheduleGrids: whale runs by configured (E, I), cells sorted by E then I, mean ± sd over completed seeds', () => {
  const grids = scheduleGrids(summaries());
  assert.equal(grids.length, 1, 'domain e has one cell: no grid; weight-only never makes one');
  const [g] = grids;
  assert.deepEqual([g.domain, g.budgetMode, g.method, g.k], ['d', 'equal-total', 'whale', 4]);
  assert.deepEqual(g.epochs, [0.25, 0.5]);
  assert.deepEqual(g.iterations, [2, 6]);
  assert.deepEqual(
    g.cells.map((c) => [c.epochs, c.iterations, c.runs]),
    [
      [0.25, 2, ['a0', 'a1']],
      [0.25, 6, ['b0', 'b1']],
      [0.5, 2, ['c0']],
    ],
  );
  const [a, b, c] = g.cells;
  close(a.test.mean, 0.35);
  close(a.test.sd, Math.sqrt(0.005));
  close(a.bestValidation.mean, 0.4); // best-so-far: 0.35 (a0) and 0.45 (a1)
  close(a.bestValidation.sd, Math.sqrt(0.005));
  close(a.rollouts.mean, 120);
  assert.equal(a.cycles.mean, 2);
  close(b.test.mean, 0.2);
  assert.equal(b.test.sd, 0);
  close(b.bestValidation.mean, (0.22 + 0.26) / 2);
  close(b.cycles.mean, 1.5); // b1 completed one cycle: its second weight phase did not complete
  assert.equal(c.n, 1, 'the unfinished seed of (0.5, 2) is not averaged with the finished one');
  assert.equal(c.unfinished, 0);
  close(c.test.mean, 0.5);
  assert.ok(Number.isNaN(c.test.sd), 'one seed: no sd');
});

test('scheduleGrids: a cell with only unfinished runs reports them, counted as unfinished', () => {
  const runs = [
    run('x0', { method: 'whale', seed: 0, cell: { epochs: 1, iterations: 3 }, phases: [W(10, 0.2)], end: 'none' }),
    run('y0', { method: 'whale', seed: 0, cell: { epochs: 2, iterations: 3 }, phases: [W(10, 0.3), H(10, 0.4)], test: 0.3 }),
  ].map(summarizeRun);
  const [g] = scheduleGrids(runs);
  assert.deepEqual(
    g.cells.map((c) => [c.epochs, c.n, c.unfinished, c.test.n]),
    [
      [1, 1, 1, 0],
      [2, 1, 0, 1],
    ],
  );
});

test('cyclesRun: completed pairs of a weight and a harness phase, in the order the schedule ran them', () => {
  const s = summaries();
  assert.equal(cyclesRun(s.find((r) => r.id === 'a0')!), 2);
  assert.equal(cyclesRun(s.find((r) => r.id === 'b1')!), 1);
  assert.equal(cyclesRun(s.find((r) => r.id === 'w0')!), 0);
  const ho = summarizeRun(run('h', { method: 'harness-only', seed: 0, phases: [H(10, 0.2), H(10, 0.3)] }));
  assert.equal(cyclesRun(ho), 0, 'search without weights in between is no cycle');
  const stage = summarizeRun(run('s', { method: 'stagewise', seed: 0, phases: [W(10, 0.2), H(10, 0.3)] }));
  assert.equal(cyclesRun(stage), 1);
  const hfirst = summarizeRun(run('hf', { method: 'whale', seed: 0, phases: [H(10, 0.1), W(10, 0.2), H(10, 0.3), W(10, 0.4)] }));
  assert.equal(cyclesRun(hfirst), 2, 'harness first: each search and the training after it is a cycle');
  const stageHarnessFirst = summarizeRun(run('sh', { method: 'stagewise', seed: 0, phases: [H(10, 0.2), W(10, 0.3)] }));
  assert.equal(cyclesRun(stageHarnessFirst), 1);
});

test('methodTable: a method configured with several (E, I) gets a row per cell, labelled; cycles, proposers and the reach per row', () => {
  const t = methodTable(summaries());
  assert.deepEqual(
    t.rows.map((r) => [r.domain, r.label, r.n]),
    [
      ['d', 'whale (E 0.25, I 2)', 2],
      ['d', 'whale (E 0.25, I 6)', 2],
      ['d', 'whale (E 0.5, I 2)', 1],
      ['d', 'weight-only', 2],
      ['e', 'whale', 1],
    ],
  );
  const [a, b, c, wo, e] = t.rows;
  assert.deepEqual(c.excluded, ['c1']);
  assert.deepEqual(a.proposers, ['knob']);
  assert.deepEqual(wo.proposers, [], 'weight-only proposes nothing');
  assert.deepEqual(wo.cell, { epochs: 0.5, iterations: 3 });
  assert.equal(a.cycles.mean, 2);
  // weight-only's mean curve: x 0 → 0.1, 100 → 0.25, 200 → 0.40: peak 0.40 reached at 200.
  close(t.domains[0].weightOnlyPeak!, 0.4);
  assert.equal(t.domains[0].weightOnlyPeakAt, 200);
  assert.equal(wo.toReachWeightOnlyPeak, 200);
  // (0.25, 2): the mean best-so-far of a0, a1 is 0.375 at x = 60 (0.30, 0.45) and 0.40 at x = 110 (0.35, 0.45).
  assert.equal(a.toReachWeightOnlyPeak, 110);
  assert.equal(b.toReachWeightOnlyPeak, undefined, '(0.25, 6) peaks at 0.24: not reached');
  assert.equal(c.toReachWeightOnlyPeak, 100);
  assert.equal(t.domains[1].weightOnlyPeak, undefined);
  assert.equal(e.toReachWeightOnlyPeak, undefined);
  // a proposer named by the config when it is an LLM
  const llm = summarizeRun({
    ...run('l', { method: 'whale', seed: 0, phases: [W(10, 0.2), H(10, 0.3)], proposer: 'llm' }),
    config: { search: { proposer: 'llm', llm: { provider: 'anthropic', model: 'claude-x' } } },
  });
  assert.deepEqual(llm.proposers, ['llm (anthropic claude-x)']);
  // the editor's dashboard draws a curve per row, named as the row
  assert.deepEqual(
    dashboardSnapshot(
      gridStore().map((run) => ({ run, summary: summarizeRun(run) })),
      { store: 's' },
    ).methods.map((m) => m.method),
    ['whale (E 0.25, I 2)', 'whale (E 0.25, I 6)', 'whale (E 0.5, I 2)', 'weight-only', 'whale'],
  );
});

test("buildReport: the reach table says 'not reached', the grid table gives mean ± sd per cell, and both figures are asked for", () => {
  const { doc, charts, grids } = buildReport(summaries(), { now: new Date(0) });
  const md = toMarkdown(doc);
  assert.match(md, /## Rollouts to reach weight-only's peak/);
  assert.match(md, /weight-only's peak: 40\.0% \(mean@4\), reached after 200 rollouts\./);
  assert.match(md, /\| whale \(E 0\.25, I 2\) \| 110 \| 55\.0% \| 120 \| 40\.0 ± 7\.1 \|/);
  assert.match(md, /\| whale \(E 0\.25, I 6\) \| not reached \| — \| 145 ± 21 \| 24\.0 ± 2\.8 \|/);
  assert.match(md, /## The \(E, I\) grid/);
  assert.match(md, /\| E 0\.25, I 2 \| 2 \| 35\.0 ± 7\.1 \| 40\.0 ± 7\.1 \| 120 \| 2 \|/);
  assert.match(md, /\| E 0\.5, I 2 \| 1 \| 50\.0 \| 55\.0 \| 110 \| 1 \|/);
  assert.equal(grids.length, 1);
  const names = charts.map((c) => c.name);
  for (const n of ['curves-d', 'reach-d', 'grid-d-equal-total-whale-test', 'grid-d-equal-total-whale-validation'])
    assert.ok(names.includes(n), `${n} in ${names.join(', ')}`);
  assert.ok(!names.includes('reach-e'), 'no weight-only on e: no reach figure');
});

test('reachChartSpec and gridChartSpec: the data they draw', () => {
  const spec = reachChartSpec(
    'd',
    [
      { method: 'whale', rollouts: 110, spent: 120 },
      { method: 'fst', spent: 130 },
    ],
    { peak: 0.4, k: 4 },
  ) as unknown as { data: { values: { method: string; x: number; reached: boolean; label: string }[] } };
  assert.deepEqual(spec.data.values, [
    { method: 'whale', x: 110, reached: true, label: '110' },
    { method: 'fst', x: 130, reached: false, label: 'not reached' },
  ]);
  const [g] = scheduleGrids(summaries());
  const heat = gridChartSpec(g, 'test') as unknown as { data: { values: { E: string; I: string; mean: number; label: string; n: string; ink: string }[] } };
  assert.deepEqual(
    heat.data.values.map((v) => [v.E, v.I, v.label, v.n, v.ink]),
    [
      ['0.25', '2', '35.0 ± 7.1', 'n=2', 'white'],
      ['0.25', '6', '20.0 ± 0.0', 'n=2', 'white'],
      ['0.5', '2', '50.0', 'n=1', 'black'],
    ],
  );
  // The colour legend's ticks: whole percents for cells far apart, tenths where whole ones would repeat (cells within 5 points).
  const legendFormat = (grid: typeof g) =>
    (gridChartSpec(grid, 'test') as unknown as { layer: { encoding: { color?: { legend: { format: string } } } }[] }).layer[0].encoding.color?.legend.format;
  assert.equal(legendFormat(g), '.0%');
  assert.equal(legendFormat({ ...g, cells: g.cells.map((c, i) => ({ ...c, test: { ...c.test, mean: 0.5 + 0.004 * i } })) }), '.1%');
  const val = gridChartSpec(g, 'bestValidation') as unknown as { data: { values: { label: string }[] }; title: { text: string } };
  assert.equal(val.data.values[0].label, '40.0 ± 7.1');
  assert.match(val.title.text, /best validation mean@4/);
});

const tmp = mkdtempSync(join(tmpdir(), 'whale-figures-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

test('writeReport on a store on disk: the heatmaps and the reach figure are rendered, with the cell labels in the SVG; summary.json has the grid', async () => {
  const store = join(tmp, 'store');
  writeRuns(
    store,
    gridStore().map((r) => ({ id: r.id, entries: r.entries, config: r.config })),
  );
  const out = join(tmp, 'out');
  const r = await writeReport({ storeDir: store, outDir: out, now: new Date(0) });
  for (const name of ['grid-d-equal-total-whale-test', 'grid-d-equal-total-whale-validation', 'reach-d']) {
    assert.ok(statSync(join(out, `${name}.png`)).size > 1000, `${name}.png rendered`);
    const svg = readFileSync(join(out, `${name}.svg`), 'utf8');
    assert.match(svg, /^<svg/);
    if (name.startsWith('grid')) assert.match(svg, name.endsWith('test') ? /35\.0 ± 7\.1/ : /40\.0 ± 7\.1/);
    else assert.match(svg, /not reached/);
  }
  assert.equal(r.grids.length, 1);
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
  assert.deepEqual(
    summary.grids[0].cells.map((c: { epochs: number; iterations: number; n: number }) => [c.epochs, c.iterations, c.n]),
    [
      [0.25, 2, 2],
      [0.25, 6, 2],
      [0.5, 2, 1],
    ],
  );
  assert.deepEqual(
    summary.rows.map((row: { label: string }) => row.label),
    ['whale (E 0.25, I 2)', 'whale (E 0.25, I 6)', 'whale (E 0.5, I 2)', 'weight-only', 'whale'],
  );
});
