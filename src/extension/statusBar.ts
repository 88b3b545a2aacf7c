import * as vscode from 'vscode';
import { statusState, statusView } from './model/statusModel.js';
import type { StoreMonitor } from './storeMonitor.js';
import type { BackendHealthMonitor } from './backendHealth.js';

/** The status bar item: a state machine (model/statusModel.ts) fed by the store monitor. */
export class WhaleStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('whale.status', vscode.StatusBarAlignment.Left, 10);
  private engineError: string | undefined;
  /** A short engine command this window is running (an evaluation), shown instead of the run's state. */
  private activity: string | undefined;

  constructor(
    private readonly monitor: StoreMonitor,
    private readonly health?: BackendHealthMonitor,
  ) {
    this.item.name = 'WHALE';
    this.item.command = 'whale.showLogs';
    monitor.onDidChange(() => this.update());
    health?.onDidChange(() => this.update());
    this.update();
    this.item.show();
  }

  /** An engine this window started failed (cleared when the next one starts). */
  setEngineError(message: string | undefined): void {
    this.engineError = message;
    this.update();
  }

  /** Shows a short engine command's progress ("evaluating 82fa96f4 on val: 12/16 rollouts"); undefined ends it. */
  setActivity(text: string | undefined): void {
    this.activity = text;
    this.update();
  }

  /** What the item shows (integration tests read it here; a status bar item has no read API). */
  snapshot(): StatusBarSnapshot {
    return { text: this.item.text, tooltip: typeof this.item.tooltip === 'string' ? this.item.tooltip : (this.item.tooltip?.value ?? '') };
  }

  update(): void {
    const { project, runs } = this.monitor.current();
    const v = statusView(statusState(!!project?.hasConfig, runs, this.engineError), runs[0]?.backend, this.health?.view());
    this.item.text = this.activity ? `$(sync~spin) WHALE: ${this.activity}` : v.text;
    const md = new vscode.MarkdownString(this.activity ? `**${this.activity}**\n\n${v.tooltip}` : v.tooltip, true);
    md.isTrusted = {
      enabledCommands: [
        'whale.newProject',
        'whale.nextPhase',
        'whale.run',
        'whale.resumeRun',
        'whale.stop',
        'whale.showLogs',
        'whale.backend.checkHealth',
        'whale.backend.connect',
      ],
    };
    this.item.tooltip = md;
    this.item.backgroundColor = v.error ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}

/** What the status bar shows now (for the integration tests, which cannot read a status bar item). */
export interface StatusBarSnapshot {
  text: string;
  tooltip: string;
}
