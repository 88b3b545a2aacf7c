import * as vscode from 'vscode';
import { spawn } from 'node:child_process';
import { join } from 'node:path';

export interface EngineRun {
  code: number | null;
  stdout: string;
}

/**
 * Runs the `whale` CLI as a child process in the workspace folder, relaying its stderr (progress)
 * to the log and killing it when the user cancels. `env` adds variables (API keys from SecretStorage;
 * their values are never logged).
 */
export function runEngine(extensionPath: string, args: string[], cwd: string, log: vscode.LogOutputChannel, token?: vscode.CancellationToken, onLine?: (line: string) => void, env: Record<string, string> = {}): Promise<EngineRun> {
  const cli = join(extensionPath, 'bin', 'whale.js');
  log.info(`engine: whale ${args.join(' ')} (cwd ${cwd})`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: process.platform !== 'win32' });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    let buf = '';
    child.stderr.on('data', (d: Buffer) => {
      buf += d.toString().replace(/\r/g, '\n');
      const lines = buf.split('\n');
      buf = lines.pop() ?? '';
      for (const l of lines.map((x) => x.replace(/\x1b\[K/g, '').trim()).filter(Boolean)) {
        log.info(`engine: ${l}`);
        onLine?.(l);
      }
    });
    const cancel = token?.onCancellationRequested(() => {
      log.warn('engine: cancelled by the user');
      try {
        if (child.pid) process.kill(-child.pid, 'SIGTERM');
      } catch {
        child.kill('SIGTERM');
      }
    });
    child.on('error', reject);
    child.on('close', (code) => {
      cancel?.dispose();
      resolve({ code, stdout });
    });
  });
}
