import * as vscode from 'vscode';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const CONFIG_FILE = 'whale.config.json';

/** Where the project of the open workspace lives: its folder, config file and run store. */
export interface WhaleProject {
  root: string;
  configFile: string;
  hasConfig: boolean;
  storeDir: string;
}

/**
 * The project of the first workspace folder. The store folder is read from the config without
 * validating it, so runs stay browsable while the config has errors (they go to the Problems panel).
 */
export function currentProject(): WhaleProject | undefined {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder || folder.uri.scheme !== 'file') return undefined;
  const root = folder.uri.fsPath;
  const configFile = join(root, CONFIG_FILE);
  let store = '.whale';
  const hasConfig = existsSync(configFile);
  if (hasConfig) {
    try {
      const raw = JSON.parse(readFileSync(configFile, 'utf8')) as { store?: unknown };
      if (typeof raw.store === 'string' && raw.store) store = raw.store;
    } catch {
      // invalid JSON: reported by the diagnostics; the default store is browsed meanwhile
    }
  }
  return { root, configFile, hasConfig, storeDir: resolve(root, store) };
}

export function requireProject(): WhaleProject {
  const p = currentProject();
  if (!p) throw new Error('open a folder first (File → Open Folder), then run WHALE: New Project');
  return p;
}

/** Commands that run harness code refuse in an untrusted workspace (DESIGN.md, Habits). */
export function requireTrust(what: string): void {
  if (!vscode.workspace.isTrusted) throw new Error(`${what} runs harness code from this workspace: trust the workspace first (Manage Workspace Trust)`);
}
