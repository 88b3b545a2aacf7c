// How every command is registered (logging, timing, an error message that opens the log), apart from
// the commands themselves, so each module of commands registers through it without importing another.
import * as vscode from 'vscode';
import { requireProject } from './workspaceProject.js';

export type Handler = (...args: unknown[]) => unknown;

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
        log.error(`command ${id} failed after ${Date.now() - started} ms: ${(e as Error).stack ?? String(e)}`);
        // Not awaited: the command settles now, whether or not anyone ever clicks the toast.
        void vscode.window.showErrorMessage(`WHALE: ${(e as Error).message}`, 'Open Log').then((choice) => {
          if (choice === 'Open Log') log.show();
        });
        return undefined;
      }
    }),
  );
}

/** The first workspace folder (commands that need a project; see workspaceProject.ts for the full one). */
export function workspaceRoot(): string {
  return requireProject().root;
}
