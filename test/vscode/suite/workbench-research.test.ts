// A researcher's clicks in a real VS Code, over a run the real engine made in this project (a weight
// phase, then a harness phase, then the sealed test): the Runs rows open what they name (a phase's
// candidates, its validation's transcripts, the test transcripts, a proposer session as a rendered
// preview); Evaluate from an archive row under a chosen policy and split, with progress in the
// status bar and the result as a row of the tree; Compare Candidates that says when two were never
// measured alike, and Score Both Under One Policy that makes them comparable; Failing Trajectories
// grouped by run; Propose from Here with the LLM refused without the llm proposer, seeded with it.
// Named to run after the other trusted suites: they read the store's first run.
import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite, suiteSetup, suiteTeardown, test } from 'mocha';
import * as vscode from 'vscode';
import type { WhaleApi } from '../../../src/extension/extension.js';
import type { ArchiveItem } from '../../../src/extension/archiveView.js';
import type { RunsItem } from '../../../src/extension/runsView.js';
import { activated, eventually, projectFolder } from './helpers.js';

const CONFIG = {
  name: 'it-research',
  domain: { id: 'kbqa', options: { sizes: { weight: 16, harness: 4, val: 4, test: 4 } } },
  harness: 'harnesses/h0',
  method: 'whale',
  evaluation: { k: 1, concurrency: 4 },
  rsft: { batchPrompts: 8, groupSize: 2, minibatch: 8 },
  search: { candidatesPerRound: 1, harnessTasks: 4 },
  schedule: { iterations: 2, cycles: 1, epochs: 0.5 },
};

function whale(extensionPath: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [join(extensionPath, 'bin', 'whale.js'), ...args], { cwd, timeout: 600_000, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`whale ${args.join(' ')} failed: ${err.message}\n${stderr.slice(-4000)}`));
      else resolve(stdout);
    });
  });
}

type Row<T> = { item: T; label: string; description: string; tooltip: string; command?: vscode.Command; depth: number };
/** Every tree item of a provider, depth first, as VS Code would render them. */
async function render<T>(provider: vscode.TreeDataProvider<T>, parent?: T, depth = 0): Promise<Row<T>[]> {
  const out: Row<T>[] = [];
  for (const child of (await provider.getChildren(parent)) ?? []) {
    const t = await provider.getTreeItem(child);
    const label = typeof t.label === 'string' ? t.label : (t.label?.label ?? '');
    const tooltip = typeof t.tooltip === 'string' ? t.tooltip : (t.tooltip?.value ?? '');
    out.push({ item: child, label, description: String(t.description ?? ''), tooltip, command: t.command, depth });
    out.push(...(await render(provider, child, depth + 1)));
  }
  return out;
}

/** Runs a row's click (its command with its arguments), as VS Code does. */
const click = <T>(row: Row<T>) => {
  assert.ok(row.command, `the row '${row.label}' opens nothing`);
  return vscode.commands.executeCommand(row.command.command, ...(row.command.arguments ?? []));
};
/** Accepts the quick pick's first item once it shows (a person pressing Enter), until `done` settles. */
async function acceptPicks<R>(done: Thenable<R>, until?: () => boolean): Promise<R> {
  let settled = false;
  const p = Promise.resolve(done).finally(() => (settled = true));
  while (!settled && !until?.()) {
    await new Promise((r) => setTimeout(r, 400));
    if (!settled && !until?.()) await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
  }
  return p;
}
const activeTab = () => vscode.window.tabGroups.activeTabGroup.activeTab;
const previewOpen = () =>
  vscode.window.tabGroups.all.flatMap((g) => g.tabs).find((t) => t.input instanceof vscode.TabInputWebview && /markdown\.preview/.test(t.input.viewType));

suite('a researcher in the cockpit: rows that open what they name, evaluate and compare like with like', function () {
  this.timeout(900_000);
  let whaleApi: WhaleApi;
  let root: string;
  let runId: string;
  let journal: Record<string, unknown>[];

  suiteSetup(async function () {
    this.timeout(900_000);
    const ext = await activated();
    whaleApi = ext.exports as WhaleApi;
    root = projectFolder().fsPath;
    writeFileSync(join(root, 'it-research.config.json'), JSON.stringify(CONFIG, null, 2));
    const out = await whale(ext.extensionPath, ['run', '--config', 'it-research.config.json'], root);
    runId = /^run (\S+): /m.exec(out)![1];
    journal = readFileSync(join(root, '.whale', 'runs', runId, 'journal.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.ok(
      journal.some((e) => e.type === 'test_evaluation'),
      'the run ended with the sealed test',
    );
  });
  suiteTeardown(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  const runRows = async () =>
    eventually(`run ${runId} in the Runs tree with its phases`, async () => {
      whaleApi.monitor.tick(true);
      const all = await render(whaleApi.runsTree as vscode.TreeDataProvider<RunsItem>);
      const at = all.findIndex((r) => r.depth === 0 && r.label === runId);
      if (at < 0) return undefined;
      const end = all.findIndex((r, i) => i > at && r.depth === 0);
      const mine = all.slice(at, end < 0 ? undefined : end);
      return mine.some((r) => r.label === 'phase 1: harness') ? mine : undefined;
    });

  test('Runs rows open what they name: the sealed test and a weight phase their transcripts, a harness phase its candidates', async () => {
    const rows = await runRows();
    const sealed = rows.find((r) => r.label === 'sealed test')!;
    assert.equal(sealed.command?.command, 'whale.openEvaluationTranscripts');
    await acceptPicks(click(sealed));
    const transcript = await eventually('a test transcript in the editor', () =>
      vscode.window.activeTextEditor?.document.uri.scheme === 'whale-trajectory' ? vscode.window.activeTextEditor.document : undefined,
    );
    const testKey = String(journal.find((e) => e.type === 'test_evaluation')!.keyHash);
    assert.ok(transcript.uri.path.startsWith(`/${testKey}/`), `a rollout of the test evaluation (${transcript.uri.path})`);
    assert.match(transcript.getText(), /^verdict\s+(PASS|FAIL)/m);

    const weight = rows.find((r) => r.label === 'phase 0: weight')!;
    assert.equal(weight.command?.command, 'whale.openEvaluationTranscripts', "a weight phase's row opens its validation's transcripts");
    await acceptPicks(click(weight));
    const validationKey = String(journal.find((e) => e.type === 'validation' && e.phase === 0)!.keyHash);
    await eventually('a validation transcript', () => (vscode.window.activeTextEditor?.document.uri.path.startsWith(`/${validationKey}/`) ? true : undefined));

    const harness = rows.find((r) => r.label === 'phase 1: harness')!;
    assert.equal(harness.command?.command, 'whale.showPhaseCandidates');
    const accepted = String(journal.find((e) => e.type === 'acceptance')!.chosen);
    assert.match(harness.tooltip, new RegExp(`accepted harness \`${accepted.slice(0, 8)}\``), 'the hover names the harness the phase accepted');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    const picked = await acceptPicks(click(harness));
    assert.equal(picked, accepted, 'the accepted candidate is the first one offered');
    await eventually("the accepted candidate's change or source in an editor", () => {
      const input = activeTab()?.input;
      return (input instanceof vscode.TabInputTextDiff && input.modified.path.startsWith(`/${accepted}/`)) ||
        (input instanceof vscode.TabInputText && input.uri.path.startsWith(`/${accepted}/`))
        ? true
        : undefined;
    });
  });

  test("a round's proposer session opens as a rendered preview: its candidates and its report", async () => {
    const rows = await runRows();
    const session = rows.find((r) => /^round 1: \w+ proposer$/.test(r.label))!;
    assert.ok(session, rows.map((r) => r.label).join(', '));
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    const text = (await click(session)) as string;
    assert.match(text, new RegExp(`^# Proposer session — run ${runId}, phase 1, round 1$`, 'm'));
    assert.match(text, /^## Candidates it wrote$/m);
    assert.match(text, /^## Report\n\n\S/m);
    await eventually('the markdown preview', () => previewOpen());
    assert.equal(
      vscode.window.tabGroups.all.flatMap((g) => g.tabs).some((t) => t.input instanceof vscode.TabInputText && t.input.uri.path.endsWith('.jsonl')),
      false,
      'not the raw JSONL log',
    );
  });

  test('Evaluate from an archive row: the policy and split asked in quick picks, progress in the status bar, the result a row of the tree', async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await whaleApi.archiveTree.reload();
    const h0 = String(journal.find((e) => e.type === 'run_started')!.h0);
    const rows = await render(whaleApi.archiveTree);
    const row = rows.find((r) => (r.item as ArchiveItem).kind === 'candidate' && (r.item as Extract<ArchiveItem, { kind: 'candidate' }>).node.treeHash === h0)!;
    let sawProgress = '';
    const watch = setInterval(() => {
      const t = whaleApi.statusBar.snapshot().text;
      if (/evaluating/.test(t)) sawProgress = t;
    }, 100);
    try {
      // The first policy offered is the one the latest run is at; the first split is val.
      const summary = (await acceptPicks(vscode.commands.executeCommand('whale.evaluateCandidate', row.item), () => !!sawProgress)) as
        { key: { split: string; policyVersion: string; harnessHash: string } } | undefined;
      assert.ok(summary, 'the evaluation ran and returned its summary (see the WHALE log)');
      const s = summary;
      assert.equal(s.key.split, 'val');
      assert.equal(s.key.harnessHash, h0);
    } finally {
      clearInterval(watch);
    }
    assert.match(sawProgress, new RegExp(`^\\$\\(sync~spin\\) WHALE: evaluating ${h0.slice(0, 8)} on val under (base|policy after phase \\d)`));
    assert.doesNotMatch(whaleApi.statusBar.snapshot().text, /evaluating/, 'the status bar is back to the run once it is done');
    const after = await render(whaleApi.archiveTree);
    const evaluated = after.filter((r) => r.label === 'mean@1 on val' && /^\d+\.\d% ± \d+\.\d under (base|policy after phase \d)$/.test(r.description));
    assert.ok(evaluated.length >= 1, after.map((r) => `${r.label} — ${r.description}`).join('\n'));
  });

  test('Compare Candidates says when two were never measured alike; Score Both Under One Policy makes them comparable', async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    // A hand-made candidate nobody has scored yet, beside h0.
    const mine = join(root, 'harnesses', 'proposals', 'research-mine');
    rmSync(mine, { recursive: true, force: true });
    cpSync(join(root, 'harnesses', 'h0'), mine, { recursive: true });
    const mf = join(mine, 'harness.json');
    writeFileSync(mf, JSON.stringify({ ...(JSON.parse(readFileSync(mf, 'utf8')) as object), description: 'research: never scored' }, null, 2));
    const s = await vscode.commands.executeCommand<{ treeHash: string }>('whale.submitCandidate', vscode.Uri.file(mine), 'never scored');
    const h0 = String(journal.find((e) => e.type === 'run_started')!.h0);
    await whaleApi.archiveTree.reload();
    const cmp = await vscode.commands.executeCommand<{ scores: string; comparable: boolean; uri: string }>('whale.compareCandidates', h0, s!.treeHash);
    assert.equal(cmp?.comparable, false);
    assert.match(cmp!.scores, /\*\*Not comparable yet:\*\*/);
    await eventually('the comparison as a rendered preview', () => previewOpen());

    // The policy phase 0 ended with (the base itself when no rollout of the step was accepted for training).
    const after0 = String(journal.find((e) => e.type === 'phase_completed' && e.phase === 0)!.version);
    const both = await vscode.commands.executeCommand<{ cacheHit?: boolean; key: { policyVersion: string } }[]>('whale.scoreBoth', h0, s!.treeHash, {
      version: after0,
      split: 'val',
    });
    assert.equal(both?.length, 2);
    assert.equal(both![0].cacheHit, true, "h0 on val under policy after phase 0 is the phase's own validation: answered from the run store");
    assert.ok(both!.every((x) => x.key.policyVersion === after0));
    // This comparison's own document: an earlier suite's comparison (views) may still be open beside it.
    const text = await eventually('the comparison redrawn with a shared figure', () => {
      const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === cmp!.uri);
      return doc && /Compared like with like on 1 figure/.test(doc.getText()) ? doc.getText() : undefined;
    });
    assert.match(
      text,
      /\| mean@1 on the val split under (policy after phase 0|base) \(`[0-9a-f]{8}`\) \| \d+\.\d% ± \d+\.\d \| \d+\.\d% ± \d+\.\d \| [+−]\d+\.\d \(± \d+\.\d\) \|/,
    );
  });

  test('Failing Trajectories groups by run: every run a row, the current one first and open', async () => {
    await vscode.commands.executeCommand('whale.failingTrajectories.focus');
    const f = await eventually('the runs in Failing Trajectories', async () => {
      const x = await vscode.commands.executeCommand<{ runs: { label: string; description: string }[]; candidates: unknown[] }>(
        'whale.trajectories.inspectFailing',
      );
      return x.runs.some((r) => r.label === runId) ? x : undefined;
    });
    const current = readFileSync(join(root, '.whale', 'current-run'), 'utf8').trim();
    const row = f.runs.find((r) => r.label === current)!;
    assert.match(row.description, /^current run · \d+ evaluated candidate\(s\) under its latest policy$/);
    assert.ok(f.candidates.length > 0);
  });

  test('Propose from Here with the LLM: refused while the proposer is knob; with the llm proposer its next round is seeded from the row', async () => {
    const seedFile = join(root, '.whale', 'proposal-seed.json');
    rmSync(seedFile, { force: true });
    const h0 = String(journal.find((e) => e.type === 'run_started')!.h0);
    const refused = await vscode.commands.executeCommand('whale.proposeWithLlm', h0, 'try quoting');
    assert.equal(refused, undefined);
    assert.equal(existsSync(seedFile), false, 'nothing is written while the proposer is knob');
    const cfgFile = join(root, 'whale.config.json');
    const saved = readFileSync(cfgFile, 'utf8');
    try {
      const cfg = JSON.parse(saved) as { search?: Record<string, unknown> };
      cfg.search = { ...cfg.search, proposer: 'llm', llm: { provider: 'anthropic', model: 'claude-it' } };
      writeFileSync(cfgFile, JSON.stringify(cfg, null, 2));
      const seed = await vscode.commands.executeCommand<{ treeHash: string; direction: string }>('whale.proposeWithLlm', h0, 'try quoting');
      assert.deepEqual({ treeHash: seed?.treeHash, direction: seed?.direction }, { treeHash: h0, direction: 'try quoting' });
      assert.equal((JSON.parse(readFileSync(seedFile, 'utf8')) as { treeHash: string }).treeHash, h0);
    } finally {
      writeFileSync(cfgFile, saved);
      rmSync(seedFile, { force: true });
    }
  });
});
