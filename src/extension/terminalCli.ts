// `whale` in the integrated terminal: a launcher in the extension's storage, prepended to the PATH
// of new terminals through the environment-variable collection (rewritten when whale.nodePath changes).
import * as vscode from 'vscode';
import { delimiter, join } from 'node:path';
import { nodeCommand } from './engineProcess.js';
import { writeLauncher } from './model/cliLauncher.js';

export function registerTerminalCli(context: vscode.ExtensionContext, log: vscode.LogOutputChannel): void {
  const install = () => {
    try {
      const node = nodeCommand();
      const dir = writeLauncher(join(context.globalStorageUri.fsPath, 'bin'), {
        node: node.command,
        env: node.env,
        cli: join(context.extensionPath, 'bin', 'whale.js'),
      });
      const env = context.environmentVariableCollection;
      env.description = 'Puts the `whale` CLI bundled with the WHALE extension on the PATH.';
      env.prepend('PATH', dir + delimiter);
      log.info(`terminal: whale on the PATH of new terminals (${dir}, node ${node.command})`);
    } catch (e) {
      log.warn(`terminal: could not put whale on the PATH: ${(e as Error).message}`);
    }
  };
  install();
  context.subscriptions.push(vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration('whale.nodePath') && install()));
}
