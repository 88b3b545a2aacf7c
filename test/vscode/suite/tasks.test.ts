// The `whale` task type in a real VS Code: the provider offers run, step and eval for the project,
// and a task from tasks.json-style definition runs the bundled CLI to completion.
import * as assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite, test } from 'mocha';
import * as vscode from 'vscode';
import { activated, eventually } from './helpers.js';

suite('whale tasks and the terminal', function () {
  this.timeout(120_000);

  test('the provider offers run, step and eval; an eval task with arguments runs and exits 0', async () => {
    await activated();
    const tasks = await vscode.tasks.fetchTasks({ type: 'whale' });
    assert.deepEqual(tasks.map((t) => t.definition.command).sort(), ['eval', 'run', 'step']);
    for (const t of tasks) assert.equal(t.source, 'whale');
    const evalTask = tasks.find((t) => t.definition.command === 'eval')!;
    assert.ok(evalTask.execution instanceof vscode.ProcessExecution);
    assert.ok(
      (evalTask.execution as vscode.ProcessExecution).args.some((a) => a.endsWith('whale.config.json')),
      'the project config is passed',
    );

    const def = { type: 'whale', command: 'eval', args: ['--k', '1', '--limit', '2', '--json'] };
    const task = new vscode.Task(def, vscode.TaskScope.Workspace, 'eval small', 'whale');
    const resolved = tasks.find((t) => t.definition.command === 'eval')!;
    task.execution = new vscode.ProcessExecution(
      (resolved.execution as vscode.ProcessExecution).process,
      [...(resolved.execution as vscode.ProcessExecution).args, ...def.args],
      (resolved.execution as vscode.ProcessExecution).options,
    );
    const ended = new Promise<number | undefined>((resolve) => {
      const d = vscode.tasks.onDidEndTaskProcess((e) => {
        if (e.execution.task.name === 'eval small') {
          d.dispose();
          resolve(e.exitCode);
        }
      });
    });
    await vscode.tasks.executeTask(task);
    assert.equal(await ended, 0);
  });

  test('a new integrated terminal has the bundled whale on its PATH', async () => {
    const ext = await activated();
    const dir = mkdtempSync(join(tmpdir(), 'whale-term-'));
    const out = join(dir, 'version.txt');
    const term = vscode.window.createTerminal({
      name: 'whale PATH probe',
      shellPath: '/bin/sh',
      shellArgs: ['-c', `command -v whale > '${out}.tmp'; whale --version >> '${out}.tmp'; mv '${out}.tmp' '${out}'`],
    });
    try {
      await eventually('the terminal to write its probe', () => (existsSync(out) ? true : undefined), 30_000);
      const [where, version] = readFileSync(out, 'utf8').trim().split('\n');
      assert.match(where, /whale-dev\.whale-vscode\/bin\/whale$/, 'the launcher in the extension storage, not another whale');
      assert.equal(version, (ext.packageJSON as { version: string }).version);
    } finally {
      term.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
