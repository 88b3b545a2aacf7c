import * as vscode from 'vscode';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { CONFIG_FILE, locateProject } from './model/projectLocator.js';

export { CONFIG_FILE };

/** Where the project of the open workspace lives: its folder, config file and run store. */
export interface WhaleProject {
  root: string;
  configFile: string;
  hasConfig: boolean;
  storeDir: string;
  /** Other projects found in the workspace, not used (the first wins). */
  others?: string[];
}

let located: { key: string; at: number; configFile?: string; others: string[] } | undefined;

/** The search of the workspace folders, redone at most every 2 s (the store monitor asks on every tick). */
function locate(roots: string[]): { configFile?: string; others: string[] } {
  const key = roots.join('\0');
  const fresh = located && located.key === key && Date.now() - located.at < 2000 && (!located.configFile || existsSync(located.configFile));
  if (!fresh) located = { key, at: Date.now(), ...locateProject(roots) };
  return located!;
}

/**
 * The project of the workspace: the first folder's whale.config.json, else the first found in a
 * subfolder of any workspace folder (projectLocator.ts); without one, the first folder, where New
 * Project creates it. The store folder is read from the config without validating it, so runs stay
 * browsable while the config has errors (they go to the Problems panel).
 */
export function currentProject(): WhaleProject | undefined {
  const roots = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
  if (roots.length === 0) return undefined;
  const found = locate(roots);
  const configFile = found.configFile ?? join(roots[0], CONFIG_FILE);
  const root = dirname(configFile);
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
  return { root, configFile, hasConfig, storeDir: resolve(root, store), others: found.others };
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
