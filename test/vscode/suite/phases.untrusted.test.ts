// Restricted Mode: runs and the archive can be browsed, but no command runs harness code.
import * as assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { suite, test } from 'mocha';
import * as vscode from 'vscode';
import type { WhaleApi } from '../../../src/extension/extension.js';
import { activated, eventually, projectFolder } from './helpers.js';

suite('untrusted workspace: browse, never run', function () {
  this.timeout(120_000);

  test('Next Phase and Run refuse and start no engine', async () => {
    assert.equal(vscode.workspace.isTrusted, false);
    await activated();
    const runs = join(projectFolder().fsPath, '.whale', 'runs');
    for (const id of ['whale.nextPhase', 'whale.run']) {
      const r = await vscode.commands.executeCommand(id);
      assert.equal(r, undefined, `${id} returned a result in an untrusted folder`);
    }
    assert.equal(existsSync(runs), false, 'an engine ran: .whale/runs/ was created');
  });

  test('the Harness Archive tree is browsable: h0 is listed and its source opens read-only', async () => {
    const whale = (await activated()).exports as WhaleApi;
    const roots = await eventually('h0 in the archive tree', async () => {
      await whale.archiveTree.reload();
      const r = await whale.archiveTree.getChildren();
      return r.length > 0 ? r : undefined;
    });
    const uri = await vscode.commands.executeCommand<string>('whale.openCandidate', roots[0]);
    assert.match(uri ?? '', /^whale-archive:\/[0-9a-f]{40}\/harness\.ts$/);
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(uri!));
    assert.match(doc.getText(), /defineHarness/);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });
});
