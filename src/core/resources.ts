import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WhaleError } from './errors.js';

/** This module's folder: import.meta.url under ESM (tsx, the CLI bundle), else __dirname (a CJS bundle). */
function moduleDir(): string {
  try {
    return dirname(fileURLToPath(import.meta.url));
  } catch {
    return typeof __dirname === 'string' ? __dirname : process.cwd();
  }
}

/**
 * The folder of the installed WHALE package (its package.json is named whale-vscode), found by
 * walking up from this module, so it works from the sources, the CLI bundle and the extension.
 */
export function packageRoot(): string {
  const here = moduleDir();
  for (let dir = here; ;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        if ((JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'whale-vscode') return dir;
      } catch {
        // not ours; keep walking up
      }
    }
    const up = dirname(dir);
    if (up === dir) throw new WhaleError(`cannot find the whale-vscode package above ${here}`, 'resources');
    dir = up;
  }
}

/** The shipped resources folder: harnesses, the base model, the config schema. */
export function resourcesDir(): string {
  return join(packageRoot(), 'resources');
}
