// Connect Backend and backend health in the real workbench: a real `whale serve` process is
// connected with the command (the config's backend section written, capabilities detected); the
// status bar shows it reachable, unreachable (since when) after the process is killed, and
// reachable again when it comes back on the same port.
import * as assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite, test } from 'mocha';
import * as vscode from 'vscode';
import type { WhaleApi } from '../../../src/extension/extension.js';
import { activated, eventually, projectFolder } from './helpers.js';

function serve(extensionPath: string, store: string, port = 0): Promise<{ proc: ChildProcess; url: string; port: number }> {
  const proc = spawn('node', [join(extensionPath, 'bin', 'whale.js'), 'serve', '--backend', 'embedded', '--port', String(port), '--store', store], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /at (http:\/\/127\.0\.0\.1:(\d+))\/v1/.exec(out);
      if (m) resolve({ proc, url: m[1], port: Number(m[2]) });
    });
    proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    proc.once('exit', (code) => reject(new Error(`whale serve exited with ${code}: ${out}`)));
  });
}

function killed(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return Promise.resolve();
  return new Promise((r) => {
    p.once('exit', () => r());
    p.kill('SIGKILL');
  });
}

suite('backend health', function () {
  this.timeout(600_000);

  test('Connect Backend writes the section and reports capabilities; the status bar shows the backend reachable, unreachable since it was killed, and reachable again', async () => {
    const ext = await activated();
    const whale = ext.exports as WhaleApi;
    const configFile = join(projectFolder().fsPath, 'whale.config.json');
    const original = readFileSync(configFile, 'utf8');
    const settings = vscode.workspace.getConfiguration('whale');
    await settings.update('backend.healthIntervalSeconds', 1, vscode.ConfigurationTarget.Workspace);
    const store = mkdtempSync(join(tmpdir(), 'whale-health-'));
    let server = await serve(ext.extensionPath, store);
    try {
      const out = await vscode.commands.executeCommand<{
        backend: { kind: string; baseUrl: string };
        detected: { tokenIds: boolean; logprobs: boolean; loraLoading: boolean; training: string };
      }>('whale.backend.connect', { kind: 'openai-compatible', url: server.url });
      assert.deepEqual([out.backend.kind, out.backend.baseUrl], ['openai-compatible', `${server.url}/v1`]);
      assert.deepEqual([out.detected.tokenIds, out.detected.logprobs, out.detected.loraLoading, out.detected.training], [true, true, true, 'none']);
      const written = JSON.parse(readFileSync(configFile, 'utf8')) as { backend: { kind: string; baseUrl: string } };
      assert.deepEqual([written.backend.kind, written.backend.baseUrl], ['openai-compatible', `${server.url}/v1`]);

      await eventually('the backend reachable', () => (whale.health.view().state.status === 'ok' ? true : undefined));
      assert.match(whale.statusBar.snapshot().text, /\$\(pass\)$/);
      assert.match(whale.statusBar.snapshot().tooltip, /Configured backend openai-compatible: reachable/);

      await killed(server.proc);
      const down = await eventually('the backend unreachable', () => {
        const s = whale.health.view().state;
        return s.status === 'unreachable' ? s : undefined;
      });
      assert.match(down.error, /ECONNREFUSED/);
      assert.match(whale.statusBar.snapshot().text, /\$\(debug-disconnect\)$/);
      assert.match(whale.statusBar.snapshot().tooltip, /openai-compatible: unreachable since \d\d:\d\d:\d\d UTC/);
      assert.match(whale.statusBar.snapshot().tooltip, /\(command:whale\.backend\.connect\)/);

      server = await serve(ext.extensionPath, store, server.port);
      await eventually('the backend reachable again', () => (whale.health.view().state.status === 'ok' ? true : undefined), 120_000);
      assert.match(whale.statusBar.snapshot().text, /\$\(pass\)$/);
    } finally {
      await killed(server.proc);
      writeFileSync(configFile, original);
      whale.health.configChanged();
      await settings.update('backend.healthIntervalSeconds', undefined, vscode.ConfigurationTarget.Workspace);
      rmSync(store, { recursive: true, force: true });
    }
  });
});
