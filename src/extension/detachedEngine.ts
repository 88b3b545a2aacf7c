// vscode-free (unit-tested): the process side of a long engine command started from the editor.
import { spawn } from 'node:child_process';
import { closeSync, fstatSync, mkdirSync, openSync, readSync } from 'node:fs';
import { dirname } from 'node:path';

/** Lines of engine output, with the terminal's redraw codes taken out. */
export function splitLines(buf: string): { lines: string[]; rest: string } {
  const parts = buf.replace(/\r/g, '\n').split('\n');
  const rest = parts.pop() ?? '';
  return { lines: parts.map((x) => x.replace(/\x1b\[K/g, '').trim()).filter(Boolean), rest };
}

export function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
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

export interface DetachedOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Where the process writes stdout and stderr (it outlives the editor, so not a pipe). */
  logFile: string;
  onLine?: (line: string) => void;
  onWarn?: (line: string) => void;
  pollMs?: number;
}

/**
 * A process in its own process group, detached from its parent, its output going to a file that is
 * followed by offset: closing the editor neither kills it nor breaks a pipe it writes to.
 */
export class DetachedProcess {
  readonly pid: number | undefined;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private offset = 0;
  private rest = '';
  private readonly timer: NodeJS.Timeout;

  constructor(
    command: string,
    args: string[],
    private readonly opts: DetachedOptions,
  ) {
    mkdirSync(dirname(opts.logFile), { recursive: true });
    const fd = openSync(opts.logFile, 'a');
    const child = spawn(command, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', fd, fd], detached: process.platform !== 'win32' });
    closeSync(fd);
    child.unref();
    this.pid = child.pid;
    this.exited = new Promise((resolve) => {
      child.on('error', (e) => {
        opts.onWarn?.(`could not start ${command}: ${e.message}`);
        resolve({ code: null, signal: null });
      });
      child.on('exit', (code, signal) => resolve({ code, signal }));
    });
    this.timer = setInterval(() => this.pump(), opts.pollMs ?? 500);
    // `exited` never rejects: a spawn error resolves it too.
    void this.exited.then(() => {
      clearInterval(this.timer);
      this.pump();
      if (this.rest.trim()) opts.onLine?.(this.rest.trim());
      this.rest = '';
    });
  }

  /** Relays what the process wrote since the last call. */
  private pump(): void {
    let fd: number;
    try {
      fd = openSync(this.opts.logFile, 'r');
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
      for (const l of lines) this.opts.onLine?.(l);
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Ends the process: the caller has already asked it to stop at its next safe point (for the engine,
   * the run store's STOP file); after `graceMs` a SIGTERM (the engine aborts in-flight work, the
   * journal stays resumable), after as long again a SIGKILL.
   */
  async stop(graceMs: number): Promise<'exited' | 'terminated' | 'killed'> {
    const wait = async (ms: number) => {
      let timer: NodeJS.Timeout | undefined;
      try {
        return await Promise.race([this.exited.then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)))]);
      } finally {
        clearTimeout(timer);
      }
    };
    if (await wait(graceMs)) return 'exited';
    this.opts.onWarn?.(`still running ${graceMs / 1000} s after the stop request; sending SIGTERM`);
    killGroup(this.pid, 'SIGTERM');
    if (await wait(graceMs)) return 'terminated';
    this.opts.onWarn?.('sending SIGKILL (the run can be resumed)');
    killGroup(this.pid, 'SIGKILL');
    await this.exited;
    return 'killed';
  }
}
