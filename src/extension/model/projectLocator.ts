// Which whale.config.json the extension works on, given the workspace folders: a folder's own config
// first, else the nearest one in its subfolders (two levels, so a repository whose project lives in
// `ml/agent/` is found), in workspace-folder order. vscode-free, so it is tested without VS Code.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export const CONFIG_FILE = 'whale.config.json';
const SKIP = new Set(['node_modules', 'out', 'dist', 'build']);

/** Configs under `root`, breadth first: root itself, then subfolders to `depth` levels (no dot-folders, no node_modules). */
function configsUnder(root: string, depth: number): string[] {
  const found: string[] = [];
  let level = [root];
  for (let d = 0; d <= depth && level.length > 0; d++) {
    const next: string[] = [];
    for (const dir of level) {
      if (existsSync(join(dir, CONFIG_FILE))) {
        found.push(join(dir, CONFIG_FILE));
        continue; // a project's own subfolders (harnesses, the store) are not other projects
      }
      if (d === depth) continue;
      let entries;
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        continue;
      }
      for (const e of entries) if (e.isDirectory() && !e.name.startsWith('.') && !SKIP.has(e.name)) next.push(join(dir, e.name));
    }
    if (found.length > 0) break;
    level = next.sort();
  }
  return found;
}

/** The config to use and the others found (which the extension names, so nobody wonders why one was ignored). */
export function locateProject(roots: readonly string[], depth = 2): { configFile?: string; others: string[] } {
  const all = roots.flatMap((r) => configsUnder(r, depth));
  return { configFile: all[0], others: all.slice(1) };
}
