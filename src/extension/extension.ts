// The extension is a client of the engine: long work runs in a `whale` CLI child process, never in
// the extension host (DESIGN.md). Activation is a list of `registerX(context, deps)` calls.
import * as vscode from 'vscode';
import { registerTerminalCli } from './terminalCli.js';
import { registerTaskProvider } from './tasks.js';
import { currentProject } from './workspaceProject.js';
import { registerArchiveFs } from './archiveFs.js';
import { registerArchiveView, type ArchiveTreeProvider } from './archiveView.js';
import { registerCommands } from './commands.js';
import { registerResearchCommands } from './researchCommands.js';
import { registerWalkthroughProgress } from './walkthroughProgress.js';
import { registerConfigDiagnostics } from './configDiagnostics.js';
import { ApiKeys } from './secrets.js';
import { WhaleStatusBar } from './statusBar.js';
import { StoreMonitor } from './storeMonitor.js';
import { registerRunsView, type RunsTreeProvider } from './runsView.js';
import { registerTrajectoryFeatures } from './trajectories/index.js';
import { registerBackendCommands } from './backendCommands.js';
import { BackendHealthMonitor } from './backendHealth.js';

/** What activation returns: the trees' providers, so integration tests read what the views render. */
export interface WhaleApi {
  runsTree: RunsTreeProvider;
  archiveTree: ArchiveTreeProvider;
  monitor: StoreMonitor;
  health: BackendHealthMonitor;
  statusBar: WhaleStatusBar;
}

export function activate(context: vscode.ExtensionContext): WhaleApi {
  const log = vscode.window.createOutputChannel('WHALE', { log: true });
  context.subscriptions.push(log);
  log.info(`WHALE activated (VS Code ${vscode.version}; workspace ${vscode.workspace.isTrusted ? 'trusted' : 'untrusted: browsing only'})`);
  const monitor = new StoreMonitor();
  const health = new BackendHealthMonitor();
  const statusBar = new WhaleStatusBar(monitor, health);
  context.subscriptions.push(monitor, health, statusBar);
  const storeDir = () => monitor.current().project?.storeDir;

  registerArchiveFs(context, { storeDir });
  const runsTree = registerRunsView(context, { monitor, health });
  const archive = registerArchiveView(context, { monitor, log });
  runsTree.useArchive(archive);
  registerConfigDiagnostics(context, {
    log,
    onConfigChanged: () => {
      monitor.reset();
      health.configChanged();
    },
  });
  const keys = new ApiKeys(context.secrets);
  const research = registerResearchCommands(context, { log, monitor, archive, statusBar, keys });
  registerCommands(context, { log, monitor, archive, statusBar, keys, research });
  registerTaskProvider(context, { keys, log });
  registerTrajectoryFeatures(context, { log });
  registerBackendCommands(context, log, health);
  registerTerminalCli(context, log);
  registerWalkthroughProgress(context);
  const others = currentProject()?.others ?? [];
  if (others.length > 0)
    log.warn(
      `workspace: several WHALE projects; using ${currentProject()?.configFile}, not ${others.join(', ')} (open one as the first workspace folder to use it)`,
    );

  monitor.onEngineDied((run) => {
    vscode.window
      .showWarningMessage(`WHALE: the engine running ${run.id} died during phase ${run.current?.index}. ${run.detail ?? ''}`, 'Resume Run', 'Open Log')
      .then((c) => {
        if (c === 'Resume Run') vscode.commands.executeCommand('whale.resumeRun', { run });
        if (c === 'Open Log') log.show();
      });
  });
  context.subscriptions.push(vscode.workspace.onDidGrantWorkspaceTrust(() => log.info('workspace trusted: commands that run harness code are enabled')));
  return { runsTree, archiveTree: archive, monitor, health, statusBar };
}

export function deactivate(): void {}
