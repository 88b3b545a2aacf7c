import * as vscode from 'vscode';
import { RunsFeed, type RunNode } from './model/runsModel.js';
import { currentProject, type WhaleProject } from './workspaceProject.js';

/**
 * Follows the project's run store, whoever runs the engine (this window, a terminal's `whale run`,
 * another window): a file watcher on the journals for promptness and a poll as the fallback (watchers
 * miss events on some file systems, and a dead engine writes nothing). Each tick reads only what the
 * journals gained (RunsFeed), sets the context keys and tells the views when something changed.
 */
export class StoreMonitor implements vscode.Disposable {
  private feed: RunsFeed | undefined;
  private project: WhaleProject | undefined;
  private runs: RunNode[] = [];
  private readonly emitter = new vscode.EventEmitter<RunNode[]>();
  private readonly deadEmitter = new vscode.EventEmitter<RunNode>();
  private watcher: vscode.FileSystemWatcher | undefined;
  private readonly timer: NodeJS.Timeout;
  /** Engines this window started: their deaths are reported by the command that started them. */
  readonly ownPids = new Set<number>();
  /** Fires with every run when anything changed. */
  readonly onDidChange = this.emitter.event;
  /** Fires when a run that was running is found with its engine gone mid-phase. */
  readonly onEngineDied = this.deadEmitter.event;

  constructor(pollMs = 2000) {
    this.reset();
    this.timer = setInterval(() => this.tick(), pollMs);
  }

  /** Re-reads the project (after New Project or a config edit that moved the store). */
  reset(): void {
    const p = currentProject();
    if (p?.storeDir !== this.project?.storeDir || p?.hasConfig !== this.project?.hasConfig) {
      this.watcher?.dispose();
      this.project = p;
      this.feed = p ? new RunsFeed(p.storeDir) : undefined;
      if (p) {
        this.watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.file(p.storeDir), 'runs/*/journal.jsonl'));
        this.watcher.onDidChange(() => this.tick());
        this.watcher.onDidCreate(() => this.tick());
      }
    }
    this.tick(true);
  }

  current(): { project: WhaleProject | undefined; runs: RunNode[] } {
    return { project: this.project, runs: this.runs };
  }

  tick(force = false): void {
    const before = new Map(this.runs.map((r) => [r.id, r.status]));
    const r = this.feed?.refresh() ?? { runs: [], changed: this.runs.length > 0 };
    if (!r.changed && !force) return;
    this.runs = r.runs;
    for (const run of r.runs)
      if (before.get(run.id) === 'running' && run.status === 'interrupted' && !(run.pid !== undefined && this.ownPids.has(run.pid))) this.deadEmitter.fire(run);
    vscode.commands.executeCommand('setContext', 'whale.hasProject', !!this.project?.hasConfig);
    vscode.commands.executeCommand('setContext', 'whale.hasRun', r.runs.length > 0);
    vscode.commands.executeCommand(
      'setContext',
      'whale.running',
      r.runs.some((x) => x.status === 'running'),
    );
    vscode.commands.executeCommand(
      'setContext',
      'whale.resumable',
      r.runs.some((x) => x.status === 'interrupted' || x.status === 'paused' || x.status === 'stopped'),
    );
    this.emitter.fire(r.runs);
  }

  entries(runId: string) {
    return this.feed?.entries(runId) ?? [];
  }

  dispose(): void {
    clearInterval(this.timer);
    this.watcher?.dispose();
    this.emitter.dispose();
    this.deadEmitter.dispose();
  }
}
