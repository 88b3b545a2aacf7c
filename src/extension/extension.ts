// The extension is a client of the engine: long work runs in a `whale` CLI child process, never in
// the extension host (DESIGN.md). This entry point registers the commands available so far.
import * as vscode from 'vscode';
import { registerCommands } from './commands.js';
import { registerTrajectoryFeatures } from './trajectories/index.js';
import { registerBackendCommands } from './backendCommands.js';

export function activate(context: vscode.ExtensionContext): void {
  const log = vscode.window.createOutputChannel('WHALE', { log: true });
  context.subscriptions.push(log);
  log.info(`WHALE activated (VS Code ${vscode.version})`);
  registerCommands(context, log);
  registerTrajectoryFeatures(context, { log });
  registerBackendCommands(context, log);
}

export function deactivate(): void {}
