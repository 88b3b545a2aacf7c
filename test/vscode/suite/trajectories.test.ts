// Trajectories, notes and the dashboard in a real VS Code, over a run store made by the engine
// itself: suiteSetup runs a tiny harness-only run with the real `whale` CLI (embedded policy,
// sandboxed kbqa harness) in the opened project, so every failing trajectory here is a real one.
import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite, suiteSetup, test } from 'mocha';
import * as vscode from 'vscode';
import type { TrajectoryRef as Ref } from '../../../src/extension/trajectories/ref.js';
import { activated, eventually, projectFolder } from './helpers.js';

interface Item {
  label: string;
  description: string;
  command?: string;
  arguments?: unknown[];
}
interface Inspect {
  languageId?: string;
  loaded: boolean;
  marks?: { pass: number[]; fail: number[]; truncated: number[]; errors: number[] };
  threads: { line: number; label?: string; notes: string[] }[];
}

// Small enough to finish in seconds: 6 search tasks, one proposal, k = 1.
const CONFIG = {
  name: 'it-trajectories',
  domain: { id: 'kbqa', options: { sizes: { weight: 16, harness: 6, val: 4, test: 4 } } },
  harness: 'harnesses/h0',
  method: 'harness-only',
  evaluation: { k: 1, concurrency: 6 },
  search: { candidatesPerRound: 1 },
  schedule: { iterations: 2, cycles: 1 },
};

function whale(extensionPath: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [join(extensionPath, 'bin', 'whale.js'), ...args], { cwd, timeout: 600_000, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`whale ${args.join(' ')} failed: ${err.message}\n${stderr.slice(-4000)}`));
      else resolve(stdout);
    });
  });
}

const inspect = (uri: vscode.Uri) => vscode.commands.executeCommand<Inspect>('whale.trajectories.inspect', uri);
const transcriptUri = () => vscode.window.activeTextEditor?.document.uri;

suite('trajectories, notes and the dashboard', () => {
  let root: string;
  let store: string;
  let runId: string;
  let failing: { shown: { visible: boolean; run?: string; candidates: number }; candidates: Item[]; tasks: Item[]; rollouts: Item[] };
  /** The failing trajectory the transcript tests opened. */
  let ref: Ref;

  suiteSetup(async function () {
    this.timeout(900_000);
    const ext = await activated();
    root = projectFolder().fsPath;
    writeFileSync(join(root, 'it-trajectories.config.json'), JSON.stringify(CONFIG, null, 2));
    const out = await whale(ext.extensionPath, ['run', '--config', 'it-trajectories.config.json'], root);
    runId = /^run (\S+): /m.exec(out)![1];
    store = join(root, '.whale');
    assert.equal(readFileSync(join(store, 'current-run'), 'utf8').trim(), runId);
  });

  test('the Failing Trajectories tree populates: candidates → failing tasks → failing rollouts', async () => {
    await vscode.commands.executeCommand('whale.failingTrajectories.focus');
    failing = await eventually('failing trajectories in the tree', async () => {
      // The tree is the current run's: it fills as soon as the run's journal and results exist.
      const f = await vscode.commands.executeCommand<typeof failing>('whale.trajectories.inspectFailing');
      return f && f.rollouts.length > 0 ? f : undefined;
    });
    const shown = await eventually('the view itself showing the run', async () => {
      const f = await vscode.commands.executeCommand<{ shown: { visible: boolean; run?: string; candidates: number } }>('whale.trajectories.inspectFailing');
      return f.shown.visible && f.shown.run === runId && f.shown.candidates > 0 ? f.shown : undefined;
    });
    assert.equal(shown.candidates, failing.candidates.length, 'VS Code rendered as many candidates as the model has');
    assert.ok(failing.candidates.length >= 1);
    assert.match(
      failing.candidates[0].description,
      /^\d+\.\d% · (harness split, phase \d+ round \d+|val split after phase \d+|val split, baseline validation \(h0, base weights\)) · (base|policy after (phase|step) .+|[0-9a-f]{8})$/,
    );
    assert.match(failing.tasks[0].description, /^\d+\/\d+ passed/);
    assert.match(failing.rollouts[0].label, /^sample \d+$/);
    assert.equal(failing.rollouts[0].command, 'whale.openTrajectory');
  });

  test('a failing trajectory opens as a transcript with its language and decorations', async () => {
    // The first failing rollout that reached the model (a crash before any call has no turns).
    let uri: vscode.Uri | undefined;
    let calls = 0;
    for (const r of failing.rollouts) {
      const candidate = r.arguments![0] as Ref;
      await vscode.commands.executeCommand('whale.openTrajectory', candidate);
      uri = await eventually('the transcript editor', () =>
        transcriptUri()?.scheme === 'whale-trajectory' && transcriptUri()!.path.startsWith(`/${candidate.keyHash}/${candidate.index}/`)
          ? transcriptUri()
          : undefined,
      );
      calls = Number(/^ended .* · (\d+) model calls? · /m.exec(vscode.window.activeTextEditor!.document.getText())?.[1] ?? 0);
      ref = candidate;
      if (calls > 0) break;
    }
    assert.ok(uri && calls > 0, 'a failing rollout with at least one model call');
    const doc = vscode.window.activeTextEditor!.document;
    const lines = doc.getText().split('\n');
    assert.equal(lines[0], `# Trajectory ${ref.id}`);
    assert.equal(lines.filter((l) => l.startsWith('▶ model call ')).length, calls, 'every model call is shown');
    assert.equal(doc.languageId, 'whale-transcript');
    assert.ok(lines.some((l) => l.startsWith('termination   ')));
    const state = await eventually('decorations applied', async () => ((await inspect(uri!))?.marks ? inspect(uri!) : undefined));
    assert.equal(state.languageId, 'whale-transcript');
    assert.deepEqual(state.marks!.pass, [], 'a failing trajectory has no pass mark');
    assert.equal(state.marks!.fail.length, 1);
    assert.match(lines[state.marks!.fail[0]], /^verdict {5}FAIL /, 'the fail mark is on the verdict line');
    for (const l of [...state.marks!.truncated, ...state.marks!.errors]) assert.ok(l < lines.length);
    const hover = await vscode.commands.executeCommand<vscode.Hover[]>(
      'vscode.executeHoverProvider',
      uri!,
      new vscode.Position(
        lines.findIndex((l) => l.startsWith('▶ model call 1')),
        2,
      ),
    );
    const text = hover.flatMap((h) => h.contents.map((c) => (typeof c === 'string' ? c : c.value))).join('\n');
    assert.match(text, /\*\*Model call 1\*\*/);
    assert.match(text, /tokens: \d+ prompt \+ \d+ completion/);
    assert.match(text, /logprob: mean -?\d+\.\d{3}, min/, 'the embedded backend records logprobs');
  });

  test('a note on a turn is saved in the run store, comes back when the trajectory is opened again, and can be deleted', async () => {
    const uri = transcriptUri()!;
    const text = `IT note ${Date.now()}: the harness never checks the retrieved fact`;
    const note = await vscode.commands.executeCommand<{ id: string; runId: string; turn?: number; trajectoryId?: string }>(
      'whale.annotateTrajectory',
      uri,
      text,
      0,
    );
    assert.ok(note, 'the note was saved');
    assert.equal(note.runId, runId);
    assert.equal(note.turn, 0);
    const file = join(store, 'runs', runId, 'annotations.jsonl');
    const saved = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.ok(
      saved.some(
        (r) =>
          r.op === 'add' &&
          r.text === text &&
          r.trajectoryId === ref.id &&
          r.turn === 0 &&
          r.keyHash === ref.keyHash &&
          typeof r.harnessHash === 'string' &&
          typeof r.author === 'string',
      ),
    );

    // Another address of the same trajectory (found by id): a new document, rendered from the store.
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    await vscode.commands.executeCommand('whale.openTrajectory', { ...ref, index: ref.index === 0 ? 1 : 0 });
    const reopened = await eventually('the reopened transcript', () =>
      transcriptUri() && transcriptUri()!.toString() !== uri.toString() && transcriptUri()!.scheme === 'whale-trajectory' ? transcriptUri() : undefined,
    );
    const threads = await eventually('the note shown again', async () => {
      const s = await inspect(reopened);
      return s?.threads.some((t) => t.notes.includes(text)) ? s.threads : undefined;
    });
    const thread = threads.find((t) => t.notes.includes(text))!;
    assert.equal(thread.label, 'turn 1');
    const lines = vscode.window.activeTextEditor!.document.getText().split('\n');
    assert.match(lines[thread.line], /^══ turn 1 /, 'shown on the turn it was written on');

    assert.equal(await vscode.commands.executeCommand('whale.annotation.delete', { note, store }), true);
    assert.match(readFileSync(file, 'utf8'), new RegExp(`"op":"delete","id":"${note.id}"`));
    const after = await eventually('the note gone from the transcript', async () => {
      const s = await inspect(reopened);
      return s && !s.threads.some((t) => t.notes.includes(text)) ? s : undefined;
    });
    assert.ok(after.loaded);
  });

  test("the dashboard webview draws the run's best-so-far curve", async () => {
    await vscode.commands.executeCommand('whale.openDashboard');
    const drawn = await eventually('the dashboard reporting a drawing', async () =>
      vscode.commands.executeCommand<{ series: number; points: number; runs: number } | undefined>('whale.dashboard.drawn'),
    );
    assert.ok(drawn.runs >= 1, `runs: ${drawn.runs}`);
    assert.ok(drawn.series >= 1, `series: ${drawn.series}`);
    assert.ok(drawn.points >= 1, `points: ${drawn.points}`);
    const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs.map((t) => t.label));
    assert.ok(tabs.includes('WHALE Dashboard'), JSON.stringify(tabs));
  });
});
