// The dashboard webview: best-so-far mean@k against cumulative rollouts for every run and method in
// the store, and each run's ledger. The extension owns the data (report/dashboardData.ts) and sends
// whole snapshots after the webview's `ready` and whenever a journal changes; the webview draws
// them with uPlot (bundled into media/dist by scripts/build.mjs). Strict CSP: nothing but our own
// nonce'd script and our own stylesheet; no retainContextWhenHidden — the webview is redrawn from a
// fresh snapshot when it becomes visible again, and a serializer restores it after a reload.
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { FromWebview, type DashboardSnapshot, type DrawnView, type ToWebview } from '../../core/dashboardContract.js';
import { loadDashboard } from '../../report/dashboardData.js';

export const DASHBOARD_VIEW_TYPE = 'whale.dashboard';

export interface DrawnReport {
  series: number;
  points: number;
  runs: number;
  /** What the webview's DOM shows (chart legends, table cells, the picker), read back after drawing. */
  view?: DrawnView;
}

export class DashboardPanel implements vscode.Disposable {
  private static current: DashboardPanel | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private lastDrawn: DrawnReport | undefined;
  private disposed = false;
  private readonly drawnWaiters: ((d: DrawnReport) => void)[] = [];

  private constructor(
    private readonly panel: vscode.WebviewPanel,
    private readonly extensionUri: vscode.Uri,
    private readonly storeDir: () => string | undefined,
    private readonly log: vscode.LogOutputChannel,
  ) {
    panel.webview.options = { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'media')] };
    panel.webview.html = this.html();
    this.disposables.push(
      panel.webview.onDidReceiveMessage((raw: unknown) => this.receive(raw)),
      panel.onDidDispose(() => this.dispose()),
    );
  }

  /** Shows the dashboard (one per window), creating it when needed. */
  static show(extensionUri: vscode.Uri, storeDir: () => string | undefined, log: vscode.LogOutputChannel): DashboardPanel {
    if (DashboardPanel.current) {
      DashboardPanel.current.panel.reveal();
      return DashboardPanel.current;
    }
    const panel = vscode.window.createWebviewPanel(DASHBOARD_VIEW_TYPE, 'WHALE Dashboard', vscode.ViewColumn.Active, {
      enableScripts: true,
      localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'media')],
    });
    DashboardPanel.current = new DashboardPanel(panel, extensionUri, storeDir, log);
    return DashboardPanel.current;
  }

  static serializer(extensionUri: vscode.Uri, storeDir: () => string | undefined, log: vscode.LogOutputChannel): vscode.WebviewPanelSerializer {
    return {
      async deserializeWebviewPanel(panel: vscode.WebviewPanel) {
        DashboardPanel.current?.dispose();
        DashboardPanel.current = new DashboardPanel(panel, extensionUri, storeDir, log);
      },
    };
  }

  static get active(): DashboardPanel | undefined {
    return DashboardPanel.current;
  }

  /** Sends a fresh snapshot (after a journal changed); the webview redraws from it. */
  refresh(): void {
    const store = this.storeDir();
    const snapshot: DashboardSnapshot = store
      ? loadDashboard(store)
      : {
          store: '',
          generatedAt: new Date().toISOString(),
          runs: [],
          methods: [],
          skipped: [],
          error: 'no WHALE project open (no whale.config.json in the workspace)',
        };
    const msg: ToWebview = { type: 'snapshot', snapshot };
    this.panel.webview.postMessage(msg);
  }

  /** Picks what the charts overlay and which run the detail charts show (as a person ticks them in the list). */
  select(runs: string[], methods: string[], focus?: string): void {
    const msg: ToWebview = { type: 'select', runs, methods, focus };
    this.panel.webview.postMessage(msg);
  }

  /** What the webview reported it drew last (waits for the next report when `next`). */
  drawn(next = false): Promise<DrawnReport> {
    if (this.lastDrawn && !next) return Promise.resolve(this.lastDrawn);
    return new Promise((r) => this.drawnWaiters.push(r));
  }

  private receive(raw: unknown): void {
    const parsed = FromWebview.safeParse(raw);
    if (!parsed.success) {
      this.log.warn(`dashboard: dropped a message that is not in the contract: ${parsed.error.issues[0]?.message}`);
      return;
    }
    const msg = parsed.data;
    switch (msg.type) {
      case 'ready':
      case 'refresh':
        this.refresh();
        break;
      case 'drawn':
        this.lastDrawn = { series: msg.series, points: msg.points, runs: msg.runs, view: msg.view };
        this.log.info(`dashboard drew ${msg.series} series, ${msg.points} points, ${msg.runs} runs`);
        this.drawnWaiters.splice(0).forEach((r) => r(this.lastDrawn!));
        break;
      case 'report':
        // Beside the dashboard: the preview opens in the next column.
        void vscode.commands.executeCommand('whale.openReport', { runs: msg.runs });
        break;
      case 'error':
        this.log.error(`dashboard webview: ${msg.message}`);
        break;
    }
  }

  private html(): string {
    const w = this.panel.webview;
    const nonce = randomBytes(16).toString('base64');
    const media = (f: string) => w.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'media', 'dist', f));
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src ${w.cspSource} data:; style-src ${w.cspSource}; font-src ${w.cspSource}; script-src 'nonce-${nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${media('dashboard.css')}">
<title>WHALE Dashboard</title>
</head>
<body>
<header><h1>WHALE</h1><span id="store"></span><button id="report" type="button" title="whale report of the picked runs, opened as a preview beside the dashboard">Open Report</button><button id="refresh" type="button">Refresh</button></header>
<p id="message"></p>
<section id="picker" aria-label="what the charts show">
<div class="pick-group"><h3>Runs</h3><div id="pick-runs" class="picks"></div></div>
<div class="pick-group"><h3>Method means (band: ± 1 sd over seeds)</h3><div id="pick-methods" class="picks"></div></div>
<div class="pick-group"><h3>Detail for</h3><select id="focus" aria-label="the run the detail charts show"></select></div>
</section>
<div class="grid">
<section class="card"><h2>Best-so-far validation against cumulative rollouts</h2><p class="note">Band: ± 1 se (runs) or ± 1 sd over seeds (means); shaded: the detail run's W/H phases; large dot: its sealed test ± se.</p><div id="chart-curve" data-chart></div></section>
<section class="card"><h2>Training signals per weight step</h2><p class="note" id="focus-name"></p><div id="chart-training" data-chart></div></section>
<section class="card"><h2>Candidate scores per round</h2><p class="note">Each harness candidate's mean@k ± se on the harness split; the accepted one in red.</p><div id="chart-rounds" data-chart></div></section>
<section class="card"><h2>Accepted per harness phase</h2><p class="note">The rule, the harness it accepted, and why.</p><ul id="acceptances"></ul></section>
<section class="card wide"><h2>Diagnostics per phase</h2><p class="note" id="diagnostics-note"></p><div class="scroll"><table id="diagnostics"></table></div></section>
</div>
<section><h2>Budget ledger</h2><div class="scroll"><table id="ledger"></table></div></section>
<script nonce="${nonce}" src="${media('dashboard.js')}"></script>
</body>
</html>`;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    if (DashboardPanel.current === this) DashboardPanel.current = undefined;
    this.panel.dispose();
    this.disposables.splice(0).forEach((d) => d.dispose());
  }
}
