// Bad input: an invalid whale.config.json puts its problems, with locations, in the Problems panel
// (updated on save), and a phase refuses to start; fixing it clears them. The config is restored.
import * as assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite, test } from 'mocha';
import * as vscode from 'vscode';
import { activated, eventually, projectFolder } from './helpers.js';

suite('config diagnostics', function () {
  this.timeout(180_000);

  test('errors in whale.config.json show in the Problems panel at their lines, and clear when fixed', async () => {
    await activated();
    const uri = vscode.Uri.joinPath(projectFolder(), 'whale.config.json');
    const original = readFileSync(uri.fsPath, 'utf8');
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc);
    // An earlier suite may have rewritten the file on disk (backendHealth restores it with
    // writeFileSync): editing the model before it has caught up would make the save a conflict.
    await eventually('the open config to match the file on disk', () => (doc.getText() === original ? true : undefined));
    try {
      const broken = original.replace(/"k": \d+/, '"k": -3').replace(/"id": "kbqa"/, '"id": "chess"');
      assert.notEqual(broken, original);
      const edit = new vscode.WorkspaceEdit();
      edit.replace(uri, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), broken);
      await vscode.workspace.applyEdit(edit);
      assert.equal(await doc.save(), true, 'the broken config was saved');
      const diags = await eventually('diagnostics for the broken config', () => {
        const d = vscode.languages.getDiagnostics(uri).filter((x) => x.source === 'whale');
        return d.length > 0 ? d : undefined;
      });
      const kLine = broken.split('\n').findIndex((l) => l.includes('"k": -3'));
      const k = diags.find((d) => d.message.startsWith('evaluation.k:'));
      assert.ok(k, diags.map((d) => d.message).join('\n'));
      assert.equal(k.range.start.line, kLine);
      assert.equal(k.severity, vscode.DiagnosticSeverity.Error);

      const before = existsSync(join(projectFolder().fsPath, '.whale', 'runs'));
      const r = await vscode.commands.executeCommand('whale.nextPhase');
      assert.equal(r, undefined, 'Next Phase refused');
      assert.equal(existsSync(join(projectFolder().fsPath, '.whale', 'runs')), before, 'no run was started');

      const fix = new vscode.WorkspaceEdit();
      fix.replace(uri, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), original);
      await vscode.workspace.applyEdit(fix);
      await doc.save();
      await eventually('the problems to clear', () =>
        vscode.languages.getDiagnostics(uri).filter((x) => x.source === 'whale').length === 0 ? true : undefined,
      );
    } finally {
      if (readFileSync(uri.fsPath, 'utf8') !== original) writeFileSync(uri.fsPath, original);
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    }
  });
});
