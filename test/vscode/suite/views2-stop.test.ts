// Run → Stop → Resume Run through the extension: the STOP control stops the engine at its next safe
// point, the Runs tree says so, and Resume Run continues the same run to its end.
import * as assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite, test } from 'mocha';
import * as vscode from 'vscode';
import type { WhaleApi } from '../../../src/extension/extension.js';
import { activated, eventually, projectFolder } from './helpers.js';

suite('run, stop, resume', function () {
  this.timeout(600_000);

  test('Stop ends a run at its next safe point; Resume Run finishes the same run', async () => {
    const whale = (await activated()).exports as WhaleApi;
    const root = projectFolder().fsPath;
    const configFile = join(root, 'whale.config.json');
    const original = readFileSync(configFile, 'utf8');
    await vscode.commands.executeCommand('whale.newProject', { domain: 'kbqa', template: 'tiny', overwrite: true });
    const config = JSON.parse(readFileSync(configFile, 'utf8')) as { schedule: { cycles: number }; budget: Record<string, number> };
    // Six phases: a stop during the first cannot be outrun by the end of the schedule.
    config.schedule.cycles = 3;
    config.budget = { rollouts: 5000 };
    writeFileSync(configFile, JSON.stringify(config, null, 2) + '\n');
    try {
      const before = new Set(whale.monitor.current().runs.map((r) => r.id));
      const running = vscode.commands.executeCommand<{ code: number | null }>('whale.run', { newRun: true });
      const run = await eventually(
        'the new run running a phase',
        () => {
          whale.monitor.tick();
          return whale.monitor.current().runs.find((r) => !before.has(r.id) && r.status === 'running' && r.current);
        },
        240_000,
      );
      const stopped = await vscode.commands.executeCommand<string[]>('whale.stop');
      assert.deepEqual(stopped, [run.id]);
      const exit = await running;
      assert.equal(exit?.code, 0, 'a stopped engine exits cleanly');
      const journal = readFileSync(join(root, '.whale', 'runs', run.id, 'journal.jsonl'), 'utf8');
      assert.match(journal, /"type":"run_stopped"/);
      const node = await eventually('the stopped run in the Runs tree', () => {
        whale.monitor.tick(true);
        return whale.monitor.current().runs.find((r) => r.id === run.id && r.status === 'stopped');
      });
      const item = await whale.runsTree.getTreeItem({ kind: 'run', run: node });
      assert.match(String(item.description), /^stopped/);
      assert.equal(item.contextValue, 'whale.run.stopped', 'the inline Resume action applies');

      const resumed = await vscode.commands.executeCommand<{ code: number | null }>('whale.resumeRun', { run: node });
      assert.equal(resumed?.code, 0);
      const done = await eventually('the resumed run finished', () => {
        whale.monitor.tick(true);
        return whale.monitor.current().runs.find((r) => r.id === run.id && r.status === 'finished');
      });
      assert.equal(done.detail, 'schedule complete');
      assert.equal(done.cycles.length, 3);
    } finally {
      writeFileSync(configFile, original);
    }
  });
});
