// Runs in a session with Workspace Trust on and the project folder untrusted (the runner's
// *.untrusted naming): the extension still activates for browsing, but runs no harness code.
import * as assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { suite, test } from 'mocha';
import * as vscode from 'vscode';
import { activated, declaredCommands, projectFolder } from './helpers.js';

suite('untrusted workspace', () => {
  test('the folder really is untrusted', () => {
    assert.equal(vscode.workspace.isTrusted, false, 'the runner was meant to open this folder in Restricted Mode');
  });

  test('the extension activates and registers its commands anyway (limited support)', async () => {
    const ext = await activated();
    const registered = new Set(await vscode.commands.getCommands(true));
    assert.deepEqual(
      declaredCommands(ext).filter((c) => !registered.has(c)),
      [],
    );
  });

  test('Evaluate Candidate refuses to run the harness and writes no results', async () => {
    await activated();
    const root = projectFolder().fsPath;
    const result = await vscode.commands.executeCommand('whale.evaluateCandidate', vscode.Uri.file(join(root, 'harnesses', 'h0')));
    assert.equal(result, undefined, 'the command returned an evaluation summary in an untrusted folder');
    // whale init already made .whale/ (the archive holds h0); an evaluation would write results/.
    assert.equal(existsSync(join(root, '.whale', 'results')), false, 'the engine ran: .whale/results/ was created');
  });
});
