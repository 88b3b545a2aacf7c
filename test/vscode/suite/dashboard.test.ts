// The researcher's dashboard and the report preview in a real VS Code, over runs made by the
// engine itself: suiteSetup runs two seeds of a tiny WHALE run (a weight phase, then a harness
// phase; embedded policy, sandboxed kbqa harness) with the real `whale` CLI. The assertions read
// what the webview's DOM shows (chart legends, table cells, the picker), as it reports it back,
// and compare it with what the journals on disk and `whale status` say.
import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { suite, suiteSetup, suiteTeardown, test } from 'mocha';
import * as vscode from 'vscode';
import type { DrawnView } from '../../../src/core/dashboardContract.js';
import { activated, eventually, projectFolder } from './helpers.js';

// Task sizes of their own, so no other suite's evaluations share these result keys.
const CONFIG = {
  name: 'it-dashboard',
  domain: { id: 'kbqa', options: { sizes: { weight: 16, harness: 5, val: 3, test: 3 } } },
  harness: 'harnesses/h0',
  method: 'whale',
  evaluation: { k: 1, concurrency: 6 },
  // G 8: two steps of 32 rollouts, so a step accepts some (kbqa's h0 passes ≈ 7%) and the loss is drawn;
  // at G 2 a seed's 16 rollouts all failed about one time in three and nothing trained.
  rsft: { batchPrompts: 4, groupSize: 8, minibatch: 4 },
  search: { candidatesPerRound: 2 },
  schedule: { epochs: 0.5, iterations: 2, cycles: 1 },
};

interface Drawn {
  series: number;
  points: number;
  runs: number;
  view?: DrawnView;
}
interface Entry {
  type: string;
  [k: string]: unknown;
}

function whale(extensionPath: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [join(extensionPath, 'bin', 'whale.js'), ...args], { cwd, timeout: 600_000, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`whale ${args.join(' ')} failed: ${err.message}\n${stderr.slice(-4000)}`));
      else resolve(stdout);
    });
  });
}

const int = (x: number) => Math.round(x).toLocaleString('en-US');

suite('the dashboard a researcher reads, and the report beside it', () => {
  let root: string;
  let store: string;
  let extensionPath: string;
  const runs: string[] = [];
  let currentBefore: string | undefined;
  const journal = (id: string): Entry[] =>
    readFileSync(join(store, 'runs', id, 'journal.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Entry);

  suiteSetup(async function () {
    this.timeout(900_000);
    extensionPath = (await activated()).extensionPath;
    root = projectFolder().fsPath;
    store = join(root, '.whale');
    currentBefore = existsSync(join(store, 'current-run')) ? readFileSync(join(store, 'current-run'), 'utf8') : undefined;
    writeFileSync(join(root, 'it-dashboard.config.json'), JSON.stringify(CONFIG, null, 2));
    for (const seed of [0, 1]) {
      const out = await whale(extensionPath, ['run', '--config', 'it-dashboard.config.json', '--seed', String(seed)], root);
      runs.push(/^run (\S+): /m.exec(out)![1]);
    }
  });

  suiteTeardown(async () => {
    // Other suites share this window and store: leave them the store as it was.
    for (const e of vscode.window.tabGroups.all.flatMap((g) => g.tabs)) if (/WHALE Dashboard|report\.md/.test(e.label)) await vscode.window.tabGroups.close(e);
    for (const id of runs) rmSync(join(store, 'runs', id), { recursive: true, force: true });
    if (currentBefore === undefined) rmSync(join(store, 'current-run'), { force: true });
    else writeFileSync(join(store, 'current-run'), currentBefore);
  });

  /** Opens the dashboard, ticks both seeds and their method mean, details the second seed, and returns what it then shows. */
  async function shown(): Promise<DrawnView> {
    await vscode.commands.executeCommand('whale.openDashboard');
    await eventually('the dashboard listing both runs', async () => {
      const d = await vscode.commands.executeCommand<Drawn | undefined>('whale.dashboard.drawn');
      return d?.view && runs.every((id) => d.view!.tables.ledger.some((row) => row[0] === id)) ? d : undefined;
    });
    await vscode.commands.executeCommand('whale.dashboard.select', runs, ['kbqa · whale'], runs[1]);
    const d = await eventually('the dashboard drawing the picked runs', async () => {
      const v = (await vscode.commands.executeCommand<Drawn | undefined>('whale.dashboard.drawn'))?.view;
      return v && v.picker.focus === runs[1] && v.picker.runs.length === 2 ? v : undefined;
    });
    return d;
  }

  test('the best-so-far chart overlays the picked seeds, their method mean and each sealed test; the picker says what is picked', async function () {
    this.timeout(180_000);
    const v = await shown();
    assert.deepEqual(v.picker, { runs, methods: ['kbqa · whale'], focus: runs[1] });
    const curve = v.charts.find((c) => c.id === 'chart-curve')!;
    assert.equal(curve.title, 'Best-so-far validation against cumulative rollouts');
    assert.deepEqual(curve.series, ['whale seed 0', 'whale seed 1', 'kbqa · whale: mean of 2', 'sealed test · whale seed 0', 'sealed test · whale seed 1']);
    // Every validation of both runs is a point of its own line (on the union of x), plus the mean's and the two tests.
    assert.ok(curve.points >= journal(runs[0]).filter((e) => e.type === 'validation').length + 2, `points: ${curve.points}`);
  });

  test("the detail run's training signals, candidates per round (accepted marked) and diagnostics per phase match its journal", async function () {
    this.timeout(180_000);
    const v = await shown();
    const entries = journal(runs[1]);
    const training = v.charts.find((c) => c.id === 'chart-training')!;
    assert.deepEqual(training.series, ['mean reward', 'accepted', 'truncation', 'loss']);
    const steps = entries.filter((e) => e.type === 'weight_step');
    assert.ok(steps.length > 0);
    const withLoss = steps.filter((e) => typeof e.meanLoss === 'number').length;
    assert.equal(training.points, 3 * steps.length + withLoss, 'reward, accepted and truncation per step, and each loss reported');

    const rounds = v.charts.find((c) => c.id === 'chart-rounds')!;
    assert.deepEqual(rounds.series, ['candidate', 'accepted']);
    const scored = entries.filter((e) => e.type === 'candidate_scored');
    const acceptance = entries.find((e) => e.type === 'acceptance')!;
    const accepted = scored.filter((e) => e.phase === acceptance.phase && e.treeHash === acceptance.chosen).length;
    assert.equal(rounds.points, scored.length + accepted, 'every scored candidate, and the accepted one again as the marked point');
    const [line] = v.tables.acceptances;
    assert.match(line[0], new RegExp(`^H${String(acceptance.phase)}: ${String(acceptance.rule)}: ${String(acceptance.chosen).slice(0, 8)}`));

    // Diagnostics: the validation before any phase ran val's 3 tasks at k = 1.
    const [head, ...rows] = v.tables.diagnostics;
    assert.deepEqual(head.slice(0, 5), ['phase', 'split', 'rollouts', 'pass', 'truncated']);
    const start = rows.find((r) => r[0] === 'start' && r[1] === 'val')!;
    assert.equal(start[2], '3');
    const baseline = entries.find((e) => e.type === 'validation' && e.phase === -1)!;
    assert.equal(start[3], `${(100 * Number(baseline.mean)).toFixed(1)}%`, "the pass rate of the baseline's rollouts is its validation mean@1");
    assert.ok(
      rows.some((r) => r[0] === 'W0' && r[1] === 'weight'),
      JSON.stringify(rows.map((r) => r.slice(0, 2))),
    );
    assert.ok(rows.some((r) => r[0] === 'H1' && r[1] === 'harness'));
    assert.ok(rows.some((r) => r[0] === 'test' && r[1] === 'test'));
  });

  test('the ledger shows every run whole, as `whale status` counts it, and their total', async function () {
    this.timeout(180_000);
    const v = await shown();
    const status = JSON.parse(await whale(extensionPath, ['status', '--all', '--json', '--store', store], root)) as {
      runId: string;
      state: { ledger: { trainingRollouts: number; searchRollouts: number; evalRollouts: number } };
    }[];
    const [head, ...rows] = v.tables.ledger;
    assert.deepEqual(head, [
      'run',
      'method · seed',
      'domain',
      'status',
      'phases',
      'best val',
      'sealed test',
      'training rollouts',
      'search rollouts',
      'training + search',
      'evaluation rollouts',
      'proposer $',
      'wall time',
    ]);
    for (const [seed, id] of runs.entries()) {
      const row = rows.find((r) => r[0] === id)!;
      const l = status.find((s) => s.runId === id)!.state.ledger;
      assert.deepEqual(row.slice(1, 5), [`whale · ${seed}`, 'kbqa', 'completed', 'W(2) H(2)']);
      assert.deepEqual(row.slice(7, 11), [int(l.trainingRollouts), int(l.searchRollouts), int(l.trainingRollouts + l.searchRollouts), int(l.evalRollouts)]);
    }
    const total = rows[rows.length - 1];
    assert.match(total[0], /^all \d+ runs$/);
    const all = status.reduce((a, s) => a + s.state.ledger.evalRollouts, 0);
    assert.equal(total[10], int(all));
  });

  test('WHALE: Open Report runs whale report for the picked runs and opens its rendered preview beside the dashboard', async function () {
    this.timeout(300_000);
    await shown();
    const out = await vscode.commands.executeCommand<{ file: string; runs: number } | undefined>('whale.openReport', { runs: [runs[0]] });
    assert.ok(out, 'the command returned the report it wrote');
    assert.equal(out.runs, 1);
    const md = readFileSync(out.file, 'utf8');
    assert.match(md, new RegExp(`\`${runs[0]}\``));
    assert.doesNotMatch(md, new RegExp(runs[1]), 'only the picked run');
    const images = [...md.matchAll(/!\[[^\]]*\]\(([^)]+\.png)\)/g)].map((m) => m[1]);
    assert.ok(images.length >= 2, 'the curves and the training chart');
    for (const img of images) assert.ok(existsSync(join(dirname(out.file), decodeURI(img))), img);
    const preview = await eventually('the Markdown preview tab', () =>
      vscode.window.tabGroups.all.flatMap((g) => g.tabs.map((t) => ({ t, g }))).find(({ t }) => t.label === 'Preview report.md'),
    );
    assert.ok(preview.t.input instanceof vscode.TabInputWebview, 'a rendered preview, not the Markdown source');
    const dashboard = vscode.window.tabGroups.all.find((g) => g.tabs.some((t) => t.label === 'WHALE Dashboard'));
    assert.ok(dashboard, 'the dashboard is still open');
    assert.notEqual(preview.g.viewColumn, dashboard.viewColumn, 'beside the dashboard, not over it');
  });
});
