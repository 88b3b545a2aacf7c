// Shared by the suites (each suite bundles its own copy): finding and activating the extension,
// the opened project folder, and polling for a condition without timed assertions.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';

export const EXTENSION_ID = 'whale-dev.whale-vscode';

export function whaleExtension(): vscode.Extension<unknown> {
  const ext = vscode.extensions.getExtension(EXTENSION_ID);
  assert.ok(
    ext,
    `extension ${EXTENSION_ID} is not loaded (loaded: ${vscode.extensions.all
      .map((e) => e.id)
      .filter((id) => !id.startsWith('vscode.'))
      .join(', ')})`,
  );
  return ext;
}

/** Activates the extension the way VS Code would (workspaceContains marker) and waits for it. */
export async function activated(): Promise<vscode.Extension<unknown>> {
  const ext = whaleExtension();
  await ext.activate();
  assert.equal(ext.isActive, true);
  return ext;
}

export function projectFolder(): vscode.Uri {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, 'the runner opens a project folder; none is open');
  return folder.uri;
}

/** Commands declared in the extension's own package.json, as VS Code read it. */
export function declaredCommands(ext: vscode.Extension<unknown>): string[] {
  const commands = (ext.packageJSON as { contributes?: { commands?: { command: string }[] } }).contributes?.commands ?? [];
  return commands.map((c) => c.command);
}

/** Polls until `probe` returns a value other than undefined; fails with `what` after `ms`. */
export async function eventually<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`gave up after ${ms} ms waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
