import * as vscode from 'vscode';
import { runEngine } from './engineProcess.js';

type Handler = (...args: unknown[]) => unknown;

/** Every command is registered once, wrapped with logging, timing and an error message whose button opens the log. */
export function register(context: vscode.ExtensionContext, log: vscode.LogOutputChannel, id: string, handler: Handler): void {
  context.subscriptions.push(
    vscode.commands.registerCommand(id, async (...args: unknown[]) => {
      const started = Date.now();
      log.info(`command ${id} started`);
      try {
        const r = await handler(...args);
        log.info(`command ${id} finished in ${Date.now() - started} ms`);
        return r;
      } catch (e) {
        log.error(`command ${id} failed: ${(e as Error).stack ?? String(e)}`);
        // Not awaited: the command settles now, whether or not anyone ever clicks the toast.
        void vscode.window.showErrorMessage(`WHALE: ${(e as Error).message}`, 'Open Log').then((choice) => {
          if (choice === 'Open Log') log.show();
        });
        return undefined;
      }
    }),
  );
}

export function workspaceRoot(): string {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder) throw new Error('open a folder with a whale.config.json first');
  return folder.uri.fsPath;
}

export function registerCommands(context: vscode.ExtensionContext, log: vscode.LogOutputChannel): void {
  register(context, log, 'whale.showLogs', () => log.show());

  register(context, log, 'whale.evaluateCandidate', async (arg?: unknown) => {
    if (!vscode.workspace.isTrusted) throw new Error('evaluating a harness runs its code: trust this workspace first');
    const root = workspaceRoot();
    let dir = arg instanceof vscode.Uri ? arg.fsPath : undefined;
    if (!dir) {
      const picked = await vscode.window.showOpenDialog({ canSelectFolders: true, canSelectFiles: false, defaultUri: vscode.Uri.file(root), openLabel: 'Evaluate this harness' });
      if (!picked?.[0]) return undefined;
      dir = picked[0].fsPath;
    }
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'WHALE: evaluating', cancellable: true },
      (progress, token) => runEngine(context.extensionPath, ['eval', '--config', 'whale.config.json', '--harness', dir!, '--json'], root, log, token, (line) => progress.report({ message: line })),
    );
    if (result.code !== 0) throw new Error(`evaluation failed (exit ${result.code}); see the log`);
    const summary = JSON.parse(result.stdout) as { meanAtK: number; standardError: number; k: number; cacheHit: boolean };
    vscode.window.showInformationMessage(`WHALE: mean@${summary.k} = ${(100 * summary.meanAtK).toFixed(1)}% ± ${(100 * summary.standardError).toFixed(1)}${summary.cacheHit ? ' (cached)' : ''}`);
    return summary;
  });
}
