import * as vscode from 'vscode';
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readSync, fstatSync } from 'node:fs';
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

function cliPath(extensionPath: string): string {
  return join(extensionPath, 'bin', 'whale.js');
}

/** Lines of engine output, with the terminal's redraw codes taken out. */
function splitLines(buf: string): { lines: string[]; rest: string } {
  const parts = buf.replace(/\r/g, '\n').split('\n');
  const rest = parts.pop() ?? '';
  return { lines: parts.map((x) => x.replace(/\x1b\[K/g, '').trim()).filter(Boolean), rest };
}

/**
 * A short `whale` command (init, eval, candidate submit, domains) as a child of the extension host:
 * its output comes back through pipes, and cancelling kills its process group.
 */
export function runEngine(extensionPath: string, args: string[], cwd: string, log: vscode.LogOutputChannel, opts: { token?: vscode.CancellationToken; onLine?: (line: string) => void; env?: Record<string, string> } = {}): Promise<EngineRun> {
  const node = nodeCommand();
  log.info(`engine: whale ${args.join(' ')} (cwd ${cwd})`);
  return new Promise((resolve, reject) => {
    const child = spawn(node.command, [cliPath(extensionPath), ...args], { cwd, env: { ...process.env, ...node.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'], detached: process.platform !== 'win32' });
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

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (!pid) return;
  try {
    process.kill(process.platform === 'win32' ? pid : -pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
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
 * A long `whale run` / `whale step` in its own process group, detached from the extension host with
 * its output going to a file in the run store: closing the window neither kills it nor breaks a
 * pipe it writes to, and the run store (journal, STOP file) is how the extension follows and stops it.
 */
export class PhaseProcess {
  readonly pid: number | undefined;
  readonly logFile: string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private offset = 0;
  private rest = '';
  private readonly timer: NodeJS.Timeout;

  constructor(
    readonly args: string[],
    private readonly opts: PhaseProcessOptions,
  ) {
    mkdirSync(opts.logDir, { recursive: true });
    this.logFile = join(opts.logDir, `engine-${new Date().toISOString().replace(/[:.]/g, '-')}.log`);
    const fd = openSync(this.logFile, 'a');
    const node = nodeCommand();
    opts.log.info(`engine: ${node.command} whale ${args.join(' ')} (cwd ${opts.cwd}; output ${this.logFile}; keys passed: ${Object.keys(opts.env).join(', ') || 'none'})`);
    const child = spawn(node.command, [cliPath(opts.extensionPath), ...args], { cwd: opts.cwd, env: { ...process.env, ...node.env, ...opts.env }, stdio: ['ignore', fd, fd], detached: process.platform !== 'win32' });
    closeSync(fd);
    child.unref();
    this.pid = child.pid;
    this.exited = new Promise((resolve) => {
      child.on('error', (e) => {
        opts.log.error(`engine: could not start: ${e.message}`);
        resolve({ code: null, signal: null });
      });
      child.on('exit', (code, signal) => resolve({ code, signal }));
    });
    this.timer = setInterval(() => this.pump(), 500);
    this.exited.then(() => {
      clearInterval(this.timer);
      this.pump();
    });
  }

  /** Relays what the engine wrote since the last call to the log and the progress callback. */
  private pump(): void {
    let fd: number;
    try {
      fd = openSync(this.logFile, 'r');
    } catch {
      return;
    }
    try {
      const size = fstatSync(fd).size;
      if (size <= this.offset) return;
      const buf = Buffer.alloc(size - this.offset);
      const n = readSync(fd, buf, 0, buf.length, this.offset);
      this.offset += n;
      const { lines, rest } = splitLines(this.rest + buf.subarray(0, n).toString('utf8'));
      this.rest = rest;
      for (const l of lines) {
        this.opts.log.info(`engine: ${l}`);
        this.opts.onLine?.(l);
      }
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Stops the engine: the caller has already asked it to stop at its next safe point (the STOP
   * file); after `graceMs` a SIGTERM (the engine aborts in-flight work and the journal stays
   * resumable), after as long again a SIGKILL.
   */
  async stop(graceMs: number): Promise<void> {
    const wait = (ms: number) => Promise.race([this.exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);
    if (await wait(graceMs)) return;
    this.opts.log.warn(`engine: still running ${graceMs / 1000} s after the stop request; sending SIGTERM`);
    killGroup(this.pid, 'SIGTERM');
    if (await wait(graceMs)) return;
    this.opts.log.warn('engine: sending SIGKILL (the run can be resumed)');
    killGroup(this.pid, 'SIGKILL');
    await this.exited;
  }
}
