// The user's day in a real VS Code: New Project (tiny template) → Next Phase completes a weight phase
// in the engine process → the Runs tree shows it; Edit a Copy… + Submit as Candidate put a
// hand-made candidate in the Harness Archive tree; its diff against its parent opens; the next
// phase (harness) scores it.
import * as assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite, test } from 'mocha';
import * as vscode from 'vscode';
import type { WhaleApi } from '../../../src/extension/extension.js';
import type { ArchiveItem } from '../../../src/extension/archiveView.js';
import type { RunsItem } from '../../../src/extension/runsView.js';
import { activated, eventually, projectFolder } from './helpers.js';

async function api(): Promise<WhaleApi> {
  return (await activated()).exports as WhaleApi;
}

/** Every tree item of a provider, depth first, as VS Code would render them. */
async function render<T>(
  provider: vscode.TreeDataProvider<T>,
  parent?: T,
  depth = 0,
): Promise<{ item: T; label: string; description: string; depth: number }[]> {
  const out: { item: T; label: string; description: string; depth: number }[] = [];
  for (const child of (await provider.getChildren(parent)) ?? []) {
    const t = await provider.getTreeItem(child);
    const label = typeof t.label === 'string' ? t.label : (t.label?.label ?? '');
    out.push({ item: child, label, description: String(t.description ?? ''), depth });
    out.push(...(await render(provider, child, depth + 1)));
  }
  return out;
}

suite('views: new project, next phase, runs and archive trees, a candidate diff, a hand-made candidate', function () {
  this.timeout(600_000);

  test('New Project scaffolds a tiny kbqa project; the archive tree shows h0', async () => {
    const whale = await api();
    const root = projectFolder().fsPath;
    const r = await vscode.commands.executeCommand<{ domain: string }>('whale.newProject', { domain: 'kbqa', template: 'tiny', overwrite: true });
    assert.equal(r?.domain, 'kbqa');
    const config = JSON.parse(readFileSync(join(root, 'whale.config.json'), 'utf8')) as { evaluation: { limit: number } };
    assert.equal(config.evaluation.limit, 16, 'the tiny template');
    const rows = await eventually('h0 in the archive tree', async () => {
      await whale.archiveTree.reload();
      const rs = await render(whale.archiveTree);
      return rs.some((x) => /^[0-9a-f]{8} the initial harness h0$/.test(x.label)) ? rs : undefined;
    });
    assert.equal((rows.find((x) => x.label.includes('h0'))!.item as ArchiveItem as Extract<ArchiveItem, { kind: 'candidate' }>).node.origin, 'seed');
  });

  test('Next Phase runs one phase in the engine process; the Runs tree shows run → cycle → phase with val mean@k and rollouts', async () => {
    const whale = await api();
    const root = projectFolder().fsPath;
    // Other suites in this window may have left runs in the store: look only at the new one.
    const runsDir = join(root, '.whale', 'runs');
    const before = new Set(existsSync(runsDir) ? readdirSync(runsDir) : []);
    // Finished runs left by other suites: start the new run without the question.
    const r = await vscode.commands.executeCommand<{ code: number | null }>('whale.nextPhase', { newRun: true });
    assert.equal(r?.code, 0, 'the engine exited cleanly (see the WHALE log)');
    const runs = readdirSync(runsDir).filter((id) => !before.has(id));
    assert.equal(runs.length, 1, 'Next Phase started exactly one new run');
    const rows = await eventually('the completed phase in the Runs tree', async () => {
      whale.monitor.tick(true);
      const rs = await render(whale.runsTree);
      return rs.some((x) => x.label === 'phase 0: weight' && /val mean@1 \d+\.\d% ± /.test(x.description)) ? rs : undefined;
    });
    const run = rows.find((x) => x.depth === 0 && x.label === runs[0]);
    assert.ok(run, `the new run ${runs[0]} is a top-level row of the Runs tree`);
    assert.match(run.description, /^paused · best val \d+\.\d% · 64 rollouts$/);
    assert.ok(rows.some((x) => x.label === 'cycle 0'));
    assert.ok(rows.some((x) => x.label === 'ledger' && /^training 64, search 0, evaluation \d+ rollouts/.test(x.description)));
    const phase = rows.find((x) => x.label === 'phase 0: weight')!;
    assert.match(phase.description, /^1 step\(s\), reward \d+\.\d% · val mean@1 \d+\.\d% ± \d+\.\d · 64 rollouts$/);
  });

  test('Edit a Copy… + Submit as Candidate: the hand-made candidate joins the archive under its parent, and its diff opens', async () => {
    const whale = await api();
    const root = projectFolder().fsPath;
    await whale.archiveTree.reload();
    const h0 = (await render(whale.archiveTree)).find((x) => x.label.includes('h0'))!.item as ArchiveItem;
    const dest = await vscode.commands.executeCommand<string>('whale.proposeFromHere', h0, 'mine');
    assert.equal(dest, join(root, 'harnesses', 'proposals', 'mine'));
    const manifestFile = join(dest, 'harness.json');
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as { description: string };
    manifest.description = 'hand-made: the same harness, described better';
    writeFileSync(manifestFile, JSON.stringify(manifest, null, 2) + '\n');
    const s = await vscode.commands.executeCommand<{ treeHash: string }>('whale.submitCandidate', vscode.Uri.file(dest), 'a clearer description');
    assert.match(s?.treeHash ?? '', /^[0-9a-f]{40}$/);
    const rows = await eventually('the hand-made candidate below h0', async () => {
      await whale.archiveTree.reload();
      const rs = await render(whale.archiveTree);
      return rs.some((x) => x.label.startsWith(s!.treeHash.slice(0, 8)) && x.depth >= 1) ? rs : undefined;
    });
    const mine = rows.find((x) => x.label.startsWith(s!.treeHash.slice(0, 8)))!;
    assert.equal((mine.item as Extract<ArchiveItem, { kind: 'candidate' }>).node.origin, 'human');
    assert.match(mine.description, /^submitted, awaiting a harness phase$/);

    const file = await vscode.commands.executeCommand<string>('whale.diffWithParent', mine.item);
    assert.equal(file, 'harness.json');
    const tab = await eventually('the diff editor', () => {
      const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
      return input instanceof vscode.TabInputTextDiff ? input : undefined;
    });
    assert.equal(tab.original.scheme, 'whale-archive');
    assert.equal(tab.modified.toString(), `whale-archive:/${s!.treeHash}/harness.json`);
    const modified = await vscode.workspace.openTextDocument(tab.modified);
    assert.match(modified.getText(), /described better/);
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');

    // Compare Candidates: the same diff, and the two candidates' scores side by side.
    const cmp = await vscode.commands.executeCommand<{ file: string; scores: string; uri: string }>('whale.compareCandidates', h0, mine.item);
    assert.equal(cmp?.file, 'harness.json');
    assert.match(cmp!.scores, new RegExp(`^# [0-9a-f]{8} ↔ ${s!.treeHash.slice(0, 8)}\n`));
    assert.match(cmp!.scores, /\| origin \| seed \| human \|/);
    assert.ok(
      vscode.workspace.textDocuments.some((d) => d.uri.toString() === cmp!.uri && d.uri.scheme === 'whale-scores'),
      'the scores document is open',
    );
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  test('the next phase (harness) validates and scores the hand-made candidate; the archive tree shows its score', async () => {
    const whale = await api();
    const root = projectFolder().fsPath;
    const r = await vscode.commands.executeCommand<{ code: number | null }>('whale.nextPhase');
    assert.equal(r?.code, 0, 'the engine exited cleanly (see the WHALE log)');
    const [run] = readdirSync(join(root, '.whale', 'runs'));
    const journal = readFileSync(join(root, '.whale', 'runs', run, 'journal.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; phase?: number; kind?: string; origin?: string });
    assert.ok(journal.some((e) => e.type === 'phase_completed' && e.phase === 1 && e.kind === 'harness'));
    assert.ok(!journal.some((e) => e.type === 'candidate_invalid' && e.origin === 'human'), 'the hand-made candidate passed validation');
    const rows = await eventually('the scored hand-made candidate', async () => {
      whale.monitor.tick(true);
      await whale.archiveTree.reload();
      const rs = await render(whale.archiveTree);
      return rs.some(
        (x) =>
          (x.item as ArchiveItem).kind === 'candidate' &&
          (x.item as Extract<ArchiveItem, { kind: 'candidate' }>).node.origin === 'human' &&
          /^\d+\.\d% ± \d+\.\d under /.test(x.description),
      )
        ? rs
        : undefined;
    });
    assert.ok(rows.length > 0);
    const runRows = await render(whale.runsTree as vscode.TreeDataProvider<RunsItem>);
    assert.ok(runRows.some((x) => x.label === 'phase 1: harness' && /^round 1\/1, \d+ scored/.test(x.description)));
    assert.ok(existsSync(join(root, '.whale', 'logs')), 'the engine output went to the run store');
  });

  test('the WHALE side bar opens with both views', async () => {
    await vscode.commands.executeCommand('workbench.view.extension.whale');
    await vscode.commands.executeCommand('whale.runs.focus');
    await vscode.commands.executeCommand('list.expand');
    await vscode.commands.executeCommand('whale.archive.focus');
    await vscode.commands.executeCommand('list.expand');
    const whale = await api();
    const runs = readdirSync(join(projectFolder().fsPath, '.whale', 'runs'));
    assert.equal((await whale.runsTree.getChildren())?.length, runs.length, 'one row per run in the store');
  });
});
