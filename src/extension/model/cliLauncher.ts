// The `whale` launcher the extension puts on the integrated terminal's PATH: a two-line script that
// runs the bundled CLI (bin/whale.js) with the Node the extension itself uses for the engine.
// vscode-free, so a unit test can write one and run it.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface LauncherTarget {
  /** The Node binary (or the editor's runtime, then with ELECTRON_RUN_AS_NODE in env). */
  node: string;
  env: Record<string, string>;
  /** The CLI script: <extension>/bin/whale.js. */
  cli: string;
}

const sh = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** Writes `whale` (POSIX sh) and `whale.cmd` (Windows) into `dir`; returns `dir`. */
export function writeLauncher(dir: string, t: LauncherTarget): string {
  mkdirSync(dir, { recursive: true });
  const envSh = Object.entries(t.env)
    .map(([k, v]) => `${k}=${sh(v)} `)
    .join('');
  writeFileSync(
    join(dir, 'whale'),
    `#!/bin/sh\n# Written by the WHALE extension: the bundled whale CLI on the terminal's PATH.\n${envSh}exec ${sh(t.node)} ${sh(t.cli)} "$@"\n`,
  );
  chmodSync(join(dir, 'whale'), 0o755);
  const envCmd = Object.entries(t.env)
    .map(([k, v]) => `set "${k}=${v}"\r\n`)
    .join('');
  writeFileSync(
    join(dir, 'whale.cmd'),
    `@echo off\r\nrem Written by the WHALE extension: the bundled whale CLI on the terminal's PATH.\r\nsetlocal\r\n${envCmd}"${t.node}" "${t.cli}" %*\r\n`,
  );
  return dir;
}
