import * as vscode from 'vscode';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { DetachedProcess, killGroup, splitLines } from './detachedEngine.js';
import { editorProxyEnv } from './model/proxyEnv.js';
import { delimiter, join } from 'node:path';

export interface EngineRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * The program that runs the `whale` CLI. The editor's own runtime is the last resort: inside VS Code
 * `process.execPath` is the editor binary (node only with ELECTRON_RUN_AS_NODE) and in a remote or
 * web host it is whatever Node the server ships; the engine and the harness sandbox it spawns are
 * tested on the project's Node. So: the `whale.nodePath` setting, else `node` on the PATH.
 */
export function nodeCommand(): { command: string; env: Record<string, string> } {
  const configured = vscode.workspace.getConfiguration('whale').get<string>('nodePath');
  if (configured) return { command: configured, env: {} };
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, process.platform === 'win32' ? 'node.exe' : 'node');
    if (dir && existsSync(candidate)) return { command: candidate, env: {} };
  }
  return { command: process.execPath, env: process.versions.electron ? { ELECTRON_RUN_AS_NODE: '1' } : {} };
}

/** VS Code's `http.proxy` / `http.noProxy`, so the engine's backend and proxy calls use the editor's proxy. */
export function proxyEnv(): Record<string, string> {
  const http = vscode.workspace.getConfiguration('http');
  return editorProxyEnv({ proxy: http.get<string>('proxy'), noProxy: http.get<string[]>('noProxy') });
}

function cliPath(extensionPath: string): string {
  return join(extensionPath, 'bin', 'whale.js');
}

/**
 * A short `whale` command (init, eval, candidate submit, domains) as a child of the extension host:
 * its output comes back through pipes, and cancelling kills its process group.
 */
export function runEngine(
  extensionPath: string,
  args: string[],
  cwd: string,
  log: vscode.LogOutputChannel,
  opts: { token?: vscode.CancellationToken; onLine?: (line: string) => void; env?: Record<string, string> } = {},
): Promise<EngineRun> {
  const node = nodeCommand();
  log.info(`engine: whale ${args.join(' ')} (cwd ${cwd})`);
  return new Promise((resolve, reject) => {
    const child = spawn(node.command, [cliPath(extensionPath), ...args], {
      cwd,
      env: { ...process.env, ...proxyEnv(), ...node.env, ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: process.platform !== 'win32',
    });
    let stdout = '';
    let stderr = '';
    let buf = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      const { lines, rest } = splitLines(buf + d.toString());
      buf = rest;
      for (const l of lines) {
        log.info(`engine: ${l}`);
        opts.onLine?.(l);
      }
    });
    const cancel = opts.token?.onCancellationRequested(() => {
      log.warn('engine: cancelled by the user');
      killGroup(child.pid, 'SIGTERM');
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      cancel?.dispose();
      resolve({ code, signal, stdout, stderr });
    });
  });
}

export interface PhaseProcessOptions {
  extensionPath: string;
  cwd: string;
  /** Where the engine's output is written (it outlives the window, so not a pipe). */
  logDir: string;
  log: vscode.LogOutputChannel;
  /** API keys and other secrets: passed to the child's environment only, never written or logged. */
  env: Record<string, string>;
  onLine?: (line: string) => void;
}

/**
 * A long `whale run` / `whale step`, detached (detachedEngine.ts) with its output in the run store:
 * the run store (journal, STOP file) is how the extension follows and stops it.
 */
export class PhaseProcess extends DetachedProcess {
  readonly logFile: string;

  constructor(
    readonly args: string[],
    opts: PhaseProcessOptions,
  ) {
    const logFile = join(opts.logDir, `engine-${new Date().toISOString().replace(/[:.]/g, '-')}.log`);
    const node = nodeCommand();
    opts.log.info(
      `engine: ${node.command} whale ${args.join(' ')} (cwd ${opts.cwd}; output ${logFile}; keys passed: ${Object.keys(opts.env).join(', ') || 'none'})`,
    );
    super(node.command, [cliPath(opts.extensionPath), ...args], {
      cwd: opts.cwd,
      env: { ...process.env, ...proxyEnv(), ...node.env, ...opts.env },
      logFile,
      onLine: (l) => {
        opts.log.info(`engine: ${l}`);
        opts.onLine?.(l);
      },
      onWarn: (l) => opts.log.warn(`engine: ${l}`),
    });
    this.logFile = logFile;
  }
}
