// scripts/compare.mjs without running a model: its plan against a run store (finished runs skipped,
// unfinished ones resumed by id), its summary regenerated from the store alone (--summary-only: the
// mean ± sd per domain × mode × method, the proposer, the commit and command from the provenance
// the script keeps in the store), and bad options (exit 2, what and where). Uses the built CLI
// (bin/whale.js → dist/cli.mjs, `npm run build`) for `whale report`, as the script does.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { H, run, W, writeRuns } from './report-fixtures.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'whale-compare-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const compare = (...args: string[]) =>
  spawnSync(process.execPath, [join(root, 'scripts', 'compare.mjs'), ...args], { cwd: root, encoding: 'utf8', timeout: 120_000 });

/**
 * A compare store: whale and weight-only on 'ramble', two seeds, one mode; one weight-only run
 * unfinished (and an older, less advanced attempt at it). Each run's config snapshot is the project
 * config the script itself writes (a --dry-run writes the projects), as `whale run` would snapshot it.
 */
function store(dir: string, edit: (config: Record<string, unknown>) => void = () => {}) {
  assert.equal(compare('--dir', dir, '--domains', 'ramble', '--modes', 'equal-total', '--dry-run').status, 0);
  const base = JSON.parse(readFileSync(join(dir, 'ramble', 'whale.config.json'), 'utf8')) as Record<string, unknown>;
  const cell = { epochs: 0.5, iterations: 3 };
  const runs = [
    run('r-whale-0', { method: 'whale', domain: 'ramble', seed: 0, cell, phases: [W(100, 0.3), H(20, 0.5)], test: 0.45 }),
    run('r-whale-1', { method: 'whale', domain: 'ramble', seed: 1, cell, phases: [W(100, 0.3), H(20, 0.4)], test: 0.35 }),
    run('r-wo-0', { method: 'weight-only', domain: 'ramble', seed: 0, cell, phases: [W(100, 0.3), W(100, 0.35)], test: 0.3 }),
    run('r-wo-1', { method: 'weight-only', domain: 'ramble', seed: 1, cell, phases: [W(100, 0.25)], end: 'none' }),
    run('r-wo-1-old', { method: 'weight-only', domain: 'ramble', seed: 1, cell, phases: [], end: 'none' }),
  ];
  writeRuns(
    join(dir, '.whale'),
    runs.map((r) => {
      const config = { ...structuredClone(base), method: r.config!.method, seed: r.config!.seed };
      if (r.id === 'r-wo-0') edit(config);
      return { id: r.id, entries: r.entries, config };
    }),
  );
  const provenance = ['r-whale-0', 'r-whale-1', 'r-wo-0'].map((runId) =>
    JSON.stringify({ runId, commit: 'abc123', dirty: false, command: 'node scripts/compare.mjs --seeds 0,1' }),
  );
  writeFileSync(join(dir, '.whale', 'compare-provenance.jsonl'), provenance.join('\n') + '\n');
}

test('compare.mjs --dry-run: finished runs are skipped, an unfinished one is resumed by its id (the most advanced of two)', () => {
  const dir = join(tmp, 'plan');
  store(dir);
  const r = compare('--dir', dir, '--seeds', '0,1', '--domains', 'ramble', '--methods', 'whale,weight-only', '--modes', 'equal-total', '--dry-run');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /4 runs planned, 3 already finished, 1 to do \(1 to resume\)/);
  assert.match(r.stderr, /equal-total\/ramble\/weight-only\/1\/E0\.5-I3 \(resume r-wo-1\)/);
  assert.doesNotMatch(r.stderr, /r-wo-1-old|whale\/0|whale\/1/);
  // WHALE's default cycle: 8 steps × 256 + 16 × (1 + 2 × 3) = 2,160 rollouts; 4 cycles → 8,700 rounded up.
  assert.match(r.stderr, /budget 8700 rollouts \(equal-total\), WHALE 4 × \(E 0\.5, I 3\)/);
  const grid = compare('--dir', dir, '--grid', '--domains', 'kbqa,ramble', '--seeds', '0', '--dry-run');
  assert.equal(grid.status, 0, grid.stderr);
  // the grid shares the store: its (E 0.5, I 3) cell is the comparison's finished whale run of seed 0
  assert.match(grid.stderr, /6 runs planned, 1 already finished, 5 to do \(0 to resume\).*grid on ramble: E0\.25-I3 E0\.25-I6 E0\.5-I3 E0\.5-I6 E1-I3 E1-I6/);
  assert.match(grid.stderr, /equal-total\/ramble\/whale\/0\/E1-I6 → .*ramble-E1-I6\/whale\.config\.json/);
  assert.doesNotMatch(grid.stderr, /E0\.5-I3 →/);
  const cellConfig = JSON.parse(readFileSync(join(dir, 'ramble-E1-I6', 'whale.config.json'), 'utf8'));
  // E 1: 16 steps × 256 + 16 × (1 + 5 × 3) = 4,352 rollouts a cycle; cycles until the 8,700 run out: 2 (the budget cuts the second)
  assert.deepEqual(cellConfig.schedule, { epochs: 1, iterations: 6, cycles: 2 });
  assert.equal(cellConfig.budget.rollouts, 8700);
});

test('compare.mjs: a store holding runs made with other settings is refused (they would be averaged with these)', () => {
  const dir = join(tmp, 'mixed');
  store(dir, (c) => ((c.budget as { rollouts: number }).rollouts = 3072));
  const r = compare('--dir', dir, '--seeds', '0,1', '--domains', 'ramble', '--methods', 'whale,weight-only', '--modes', 'equal-total', '--dry-run');
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /run r-wo-0 \(equal-total\/ramble\/weight-only\/0\/E0\.5-I3\) .* was made with budget\.rollouts = 3072, these options give 8700/);
  assert.match(r.stderr, /--dir: 1 run\(s\) in the store were made with other settings/);
  // with the options it was made with, the other runs are the ones that differ
  const same = compare(
    '--dir',
    dir,
    '--seeds',
    '0,1',
    '--domains',
    'ramble',
    '--methods',
    'weight-only',
    '--modes',
    'equal-total',
    '--budget',
    '3072',
    '--dry-run',
  );
  assert.equal(same.status, 2);
  assert.match(same.stderr, /run r-wo-1 .* budget\.rollouts = 8700, these options give 3072/);
});

test('compare.mjs --summary-only: the summary (JSON + Markdown) regenerated from the run store alone', () => {
  const dir = join(tmp, 'summary');
  store(dir);
  const results = join(tmp, 'results');
  const r = compare('--dir', dir, '--results', results, '--summary-only');
  assert.equal(r.status, 0, r.stderr);
  const summary = JSON.parse(readFileSync(join(results, 'compare-summary.json'), 'utf8'));
  assert.deepEqual(summary.commits, ['abc123']);
  assert.deepEqual(summary.commands, ['node scripts/compare.mjs --seeds 0,1']);
  const round = (x: number | null) => (x === null ? null : Number(x.toFixed(4)));
  const rows = summary.rows.map((x: { method: string; seeds: number; bestValidation: { mean: number }; test: { mean: number; sd: number | null } }) => [
    x.method,
    x.seeds,
    round(x.bestValidation.mean),
    round(x.test.mean),
    round(x.test.sd),
  ]);
  // whale: best 0.5 / 0.4 → 0.45, test 0.45 / 0.35 → 0.40 ± 0.0707; weight-only: its one finished seed (the unfinished one is left out).
  assert.deepEqual(rows, [
    ['whale', 2, 0.45, 0.4, 0.0707],
    ['weight-only', 1, 0.35, 0.3, null],
  ]);
  assert.deepEqual(summary.rows[0].proposers, ['knob']);
  assert.equal(summary.rows[0].cycles.mean, 1);
  const md = readFileSync(join(results, 'compare-summary.md'), 'utf8');
  assert.match(md, /\| ramble \| equal-total \| whale \| 1 steps · I 2 \| 2 \| 45\.0 ± 7\.1 \| 40\.0 ± 7\.1 \| 1 \| knob \| 100 \+ 20 \|/);
  assert.match(md, /`abc123`/);
  assert.equal(summary.tasks.draw, '0', 'the store made by --dry-run above took its secret from the default draw');
  assert.match(md, /- Tasks: draw 0 \(`--draw 0`/);
  assert.match(summary.regenerate, new RegExp(`--results ${results.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} --summary-only`));
  assert.match(readFileSync(join(results, 'compare', 'report.md'), 'utf8'), /## Rollouts to reach weight-only's peak/);
  // Regenerated twice, the numbers are the same.
  assert.equal(compare('--dir', dir, '--results', results, '--summary-only').status, 0);
  const again = JSON.parse(readFileSync(join(results, 'compare-summary.json'), 'utf8'));
  assert.deepEqual(again.rows, summary.rows);
});

test('compare.mjs: bad options exit 2 naming the option', () => {
  for (const [args, msg] of [
    [['--jobs', '0'], /--jobs: must be a positive integer, got '0'/],
    [['--methods', 'whale,nope'], /--methods: unknown method 'nope'/],
    [['--modes', 'equal'], /--modes: unknown budget mode 'equal'/],
    [['--grid', '--grid-epochs', '0.5,x'], /--grid-epochs: 'x' is not a positive number/],
    [['--seeds', '0,a'], /--seeds: 'a' is not an integer/],
    [['--sead', '0'], /\(command line\): Unknown option '--sead'/],
    [['--draw', 'first'], /--draw: must be a non-negative integer, got 'first'/],
  ] as const) {
    const r = compare('--dir', join(tmp, 'bad'), ...args, '--dry-run');
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, msg);
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  }
  const none = compare('--dir', join(tmp, 'empty'), '--summary-only');
  assert.equal(none.status, 2);
  assert.match(none.stderr, /no run store at .*empty/);
});

test("compare.mjs --draw: the store's secret, from which the toy domains make their tasks, comes from the draw: the same draw in two folders makes the same tasks; a store keeps the secret it has", () => {
  const secretOf = (dir: string) => readFileSync(join(dir, '.whale', 'secret'), 'utf8');
  const made = (name: string, ...args: string[]) => {
    const dir = join(tmp, name);
    const r = compare('--dir', dir, '--domains', 'ramble', '--modes', 'equal-total', '--dry-run', ...args);
    assert.equal(r.status, 0, r.stderr);
    return dir;
  };
  const a = made('draw-a');
  const b = made('draw-b', '--draw', '0');
  const c = made('draw-c', '--draw', '7');
  assert.match(secretOf(a), /^[0-9a-f]{64}\n$/);
  assert.equal(secretOf(a), secretOf(b), 'the same draw, the same secret');
  assert.notEqual(secretOf(a), secretOf(c), 'another draw, another secret');
  assert.equal(statSync(join(a, '.whale', 'secret')).mode & 0o777, 0o600);
  // A store that has a secret (runs in it were made on its tasks) keeps it, whatever --draw says now.
  writeFileSync(join(c, '.whale', 'secret'), 'f'.repeat(64) + '\n');
  made('draw-c', '--draw', '0');
  assert.equal(secretOf(c), 'f'.repeat(64) + '\n');
});
