// The extension activates in a folder holding a whale.config.json, and every command its
// package.json declares is registered (read at test time, so new commands are covered).
import * as assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite, test } from 'mocha';
import * as vscode from 'vscode';
import { activated, declaredCommands, projectFolder, whaleExtension } from './helpers.js';

suite('activation', () => {
  test('a folder with whale.config.json activates WHALE without being asked', async () => {
    const config = vscode.Uri.joinPath(projectFolder(), 'whale.config.json');
    await vscode.workspace.fs.stat(config);
    const ext = whaleExtension();
    // activationEvents: workspaceContains:whale.config.json — nothing here calls activate().
    const end = Date.now() + 60_000;
    while (!ext.isActive && Date.now() < end) await new Promise((r) => setTimeout(r, 200));
    assert.equal(ext.isActive, true, 'not activated by the workspaceContains marker within 60 s');
    console.log(`    [info] VS Code ${vscode.version}, extension host Node ${process.version}, ${vscode.env.appHost}, trusted=${vscode.workspace.isTrusted}`);
  });

  test('every command in package.json contributes.commands is registered', async () => {
    const ext = await activated();
    const onDisk = JSON.parse(await readFile(join(ext.extensionPath, 'package.json'), 'utf8')) as { contributes: { commands: { command: string }[] } };
    const declared = declaredCommands(ext);
    assert.deepEqual(
      declared,
      onDisk.contributes.commands.map((c) => c.command),
      'VS Code read a different package.json',
    );
    assert.ok(declared.length > 0, 'package.json declares no commands');
    const registered = new Set(await vscode.commands.getCommands(true));
    const missing = declared.filter((c) => !registered.has(c));
    assert.deepEqual(missing, [], `declared in package.json but not registered: ${missing.join(', ')}`);
  });

  test('commands named in menus and keybindings are declared commands', async () => {
    const ext = await activated();
    const contributes =
      (ext.packageJSON as { contributes?: { menus?: Record<string, { command?: string }[]>; keybindings?: { command: string }[] } }).contributes ?? {};
    const declared = new Set(declaredCommands(ext));
    const used = [
      ...Object.values(contributes.menus ?? {})
        .flat()
        .map((m) => m.command),
      ...(contributes.keybindings ?? []).map((k) => k.command),
    ].filter((c): c is string => typeof c === 'string' && c.startsWith('whale.'));
    const undeclared = [...new Set(used.filter((c) => !declared.has(c)))];
    assert.deepEqual(undeclared, [], `used in menus/keybindings but not declared: ${undeclared.join(', ')}`);
  });
});
