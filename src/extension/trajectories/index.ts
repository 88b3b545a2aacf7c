// Trajectories, notes and the dashboard in the editor: the one call extension.ts makes
// (`registerTrajectoryFeatures`). Everything here reads the run store; nothing runs harness code,
// so it all works in an untrusted workspace too.
import * as vscode from 'vscode';
import { register } from '../commandRegistry.js';
import { DashboardPanel, DASHBOARD_VIEW_TYPE } from '../dashboard/panel.js';
import { registerReportCommand } from '../dashboard/reportCommand.js';
import { Annotations, AnnotationsProvider } from './annotations.js';
import { TranscriptDecorations } from './decorations.js';
import { fromUri, showTrajectory, TranscriptDocuments } from './documents.js';
import { FailingTrajectoriesProvider } from './failingView.js';
import { TRAJECTORY_SCHEME, type TrajectoryRef } from './ref.js';
import { projectStoreDir, storeSignature, type RunNote } from './store.js';
import { turnAt } from '../../report/transcript.js';

export interface TrajectoryFeatureDeps {
  log: vscode.LogOutputChannel;
}

/** The extension's one command wrapper (logging, timing, an error message whose button opens the log). */
function command(context: vscode.ExtensionContext, log: vscode.LogOutputChannel, id: string, handler: (...args: never[]) => unknown): void {
  register(context, log, id, handler as (...a: unknown[]) => unknown);
}

export function registerTrajectoryFeatures(context: vscode.ExtensionContext, deps: TrajectoryFeatureDeps): void {
  const { log } = deps;
  const docs = new TranscriptDocuments(log);
  const decorations = new TranscriptDecorations(docs);
  const annotations = new Annotations(docs);
  const failing = new FailingTrajectoriesProvider(projectStoreDir);
  const notes = new AnnotationsProvider(projectStoreDir);
  const failingView = vscode.window.createTreeView('whale.failingTrajectories', { treeDataProvider: failing, showCollapseAll: true });
  const notesView = vscode.window.createTreeView('whale.annotations', { treeDataProvider: notes });
  context.subscriptions.push(
    docs,
    decorations,
    annotations,
    vscode.workspace.registerTextDocumentContentProvider(TRAJECTORY_SCHEME, docs),
    failingView,
    notesView,
    // A view that comes into sight is read afresh, whatever the file watcher saw while it was hidden.
    failingView.onDidChangeVisibility((e) => e.visible && failing.refresh()),
    notesView.onDidChangeVisibility((e) => e.visible && notes.refresh()),
    vscode.window.registerWebviewPanelSerializer(DASHBOARD_VIEW_TYPE, DashboardPanel.serializer(context.extensionUri, projectStoreDir, log)),
    annotations.onDidChange(() => notes.refresh()),
  );

  // Views follow the store: a run started from a terminal shows up too. Bursts of journal appends
  // (a phase writes many) are folded into one refresh.
  let timer: NodeJS.Timeout | undefined;
  const storeChanged = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      failing.refresh();
      notes.refresh();
      DashboardPanel.active?.refresh();
    }, 500);
  };
  // The store followed is the open project's, and a folder can become a project later (New
  // Project in an empty folder): every 2 s the store's place is looked up again and the watcher
  // moved with it. File watchers also miss folders created after they start (a first run) on some
  // hosts (seen in code-server), so the same tick compares a few stats, without reading any file.
  let watched: { store: string; watcher: vscode.FileSystemWatcher } | undefined;
  let last = '';
  const followStore = () => {
    const store = projectStoreDir();
    if (store !== watched?.store) {
      watched?.watcher.dispose();
      watched = undefined;
      if (store) {
        const w = vscode.workspace.createFileSystemWatcher(
          new vscode.RelativePattern(vscode.Uri.file(store), '{current-run,runs/*/journal.jsonl,runs/*/annotations.jsonl}'),
        );
        w.onDidChange(storeChanged);
        w.onDidCreate(storeChanged);
        w.onDidDelete(storeChanged);
        watched = { store, watcher: w };
      }
    }
    const now = store ? storeSignature(store) : '';
    if (now !== last) {
      last = now;
      storeChanged();
    }
  };
  followStore();
  const poll = setInterval(followStore, 2000);
  context.subscriptions.push({ dispose: () => (clearTimeout(timer), clearInterval(poll), watched?.watcher.dispose()) });

  command(context, log, 'whale.openTrajectory', async (arg?: TrajectoryRef | vscode.Uri) => {
    if (!arg) throw new Error('pick a trajectory in the Failing Trajectories view');
    const ref = arg instanceof vscode.Uri ? fromUri(arg) : arg;
    const editor = await showTrajectory(ref);
    return editor.document.uri.toString();
  });
  command(context, log, 'whale.refreshFailingTrajectories', () => {
    failing.refresh();
    notes.refresh();
  });
  command(context, log, 'whale.annotation.save', (reply: { thread: vscode.CommentThread; text: string }) => annotations.save(reply));
  command(context, log, 'whale.annotation.delete', (target: Parameters<Annotations['remove']>[0] | { note: RunNote; store: string }) =>
    'store' in target && 'note' in target ? annotations.remove(target.note, target.store) : annotations.remove(target, projectStoreDir()),
  );
  // From the palette or the editor title: a note on the turn under the cursor (or the whole
  // trajectory from the header). Arguments let scripts and tests call it without prompts.
  command(context, log, 'whale.annotateTrajectory', async (uri?: vscode.Uri, text?: string, turn?: number | null) => {
    const editor = vscode.window.activeTextEditor;
    const target = uri ?? (editor?.document.uri.scheme === TRAJECTORY_SCHEME ? editor.document.uri : undefined);
    if (!target) throw new Error('open a trajectory transcript first (Failing Trajectories view)');
    const open = docs.get(target);
    if (!open) throw new Error('this transcript is still loading; try again');
    const where =
      turn !== undefined
        ? (turn ?? undefined)
        : editor && editor.document.uri.toString() === target.toString()
          ? turnAt(open.transcript, editor.selection.start.line, editor.selection.end.line)
          : undefined;
    const turns = open.trajectory.modelCalls.length;
    if (where !== undefined && (!Number.isInteger(where) || where < 0 || where >= turns))
      throw new Error(`there is no turn ${where + 1} in this trajectory (it has ${turns})`);
    const body =
      text ??
      (await vscode.window.showInputBox({
        title: `WHALE note on ${where !== undefined ? `turn ${where + 1}` : 'the whole trajectory'}`,
        prompt: 'The proposer of the run reads it in its next harness phase.',
        ignoreFocusOut: true,
      }));
    if (!body) return undefined;
    const note = await annotations.add(target, body, where);
    if (note) annotations.redraw(target);
    return note;
  });
  command(context, log, 'whale.openDashboard', () => {
    DashboardPanel.show(context.extensionUri, projectStoreDir, log);
  });
  // For integration tests and diagnostics: what a transcript editor shows, without scraping pixels.
  command(context, log, 'whale.trajectories.inspect', (uri: vscode.Uri) => {
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    return { languageId: doc?.languageId, loaded: docs.get(uri) !== undefined, marks: decorations.marksOf(uri), threads: annotations.threadsOf(uri) };
  });
  // The Failing Trajectories tree as a person would expand it: the runs, the current run's candidates
  // (else the newest run's that has any), the failing tasks of the first candidate that has any, the
  // failing rollouts of its first task (with their open commands).
  command(context, log, 'whale.trajectories.inspectFailing', async () => {
    const item = async (n: Parameters<typeof failing.getTreeItem>[0]) => {
      const t = failing.getTreeItem(n);
      return { label: String(t.label), description: String(t.description ?? ''), command: t.command?.command, arguments: t.command?.arguments };
    };
    // What VS Code itself last asked the tree for, before this command asks it too.
    const shown = { visible: failingView.visible, ...failing.lastRoots };
    const runs = await failing.children();
    const run = runs.find((r) => r.kind === 'run' && r.current && r.candidates.length) ?? runs.find((r) => r.kind === 'run' && r.candidates.length);
    const candidates = run ? await failing.children(run) : [];
    const runItems = await Promise.all(runs.map(item));
    for (const c of candidates) {
      const tasks = await failing.children(c);
      if (tasks.length === 0) continue;
      const rollouts = await failing.children(tasks[0]);
      return {
        shown,
        runs: runItems,
        candidates: await Promise.all(candidates.map(item)),
        tasks: await Promise.all(tasks.map(item)),
        rollouts: await Promise.all(rollouts.map(item)),
      };
    }
    return { shown, runs: runItems, candidates: await Promise.all(candidates.map(item)), tasks: [], rollouts: [] };
  });
  command(context, log, 'whale.dashboard.drawn', (next?: boolean) => DashboardPanel.active?.drawn(next === true));
  // For tests and commands that open the dashboard on runs: tick them in its list, as a person would.
  command(context, log, 'whale.dashboard.select', (runs: string[], methods: string[] = [], focus?: string) =>
    DashboardPanel.active?.select(runs, methods, focus),
  );
  registerReportCommand(context, log, projectStoreDir);
}
