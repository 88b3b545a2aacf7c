import * as vscode from 'vscode';
import { basename } from 'node:path';
import { configProblems } from './model/configProblems.js';
import { CONFIG_FILE } from './workspaceProject.js';

/** whale.config.json problems in the Problems panel, with locations; refreshed on open and save. */
export function registerConfigDiagnostics(context: vscode.ExtensionContext, deps: { log: vscode.LogOutputChannel; onConfigChanged: () => void }): void {
  const collection = vscode.languages.createDiagnosticCollection('whale');
  context.subscriptions.push(collection);
  const check = (doc: vscode.TextDocument) => {
    if (doc.uri.scheme !== 'file' || basename(doc.uri.fsPath) !== CONFIG_FILE) return;
    const problems = configProblems(doc.getText(), doc.uri.fsPath);
    collection.set(
      doc.uri,
      problems.map((p) => {
        const start = new vscode.Position(p.line - 1, Math.max(0, p.column - 1));
        const word = doc.getWordRangeAtPosition(start, /"[^"]*"|[^\s,{}[\]]+/);
        const d = new vscode.Diagnostic(
          word ?? new vscode.Range(start, start.translate(0, 1)),
          p.field ? `${p.field}: ${p.message}` : p.message,
          vscode.DiagnosticSeverity.Error,
        );
        d.source = 'whale';
        return d;
      }),
    );
    deps.log.info(`config: ${doc.uri.fsPath}: ${problems.length} problem(s)`);
  };
  context.subscriptions.push(
    vscode.workspace.onDidOpenTextDocument(check),
    vscode.workspace.onDidSaveTextDocument((d) => {
      check(d);
      if (basename(d.uri.fsPath) === CONFIG_FILE) deps.onConfigChanged();
    }),
    vscode.workspace.onDidCloseTextDocument((d) => {
      if (basename(d.uri.fsPath) === CONFIG_FILE && !vscode.workspace.workspaceFolders?.some((f) => d.uri.fsPath.startsWith(f.uri.fsPath)))
        collection.delete(d.uri);
    }),
  );
  vscode.workspace.textDocuments.forEach(check);
  // The config is checked at activation too, opened or not: a broken project shows up in Problems.
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    const uri = vscode.Uri.joinPath(folder.uri, CONFIG_FILE);
    vscode.workspace.fs.stat(uri).then(
      () => vscode.workspace.openTextDocument(uri).then(check),
      () => undefined,
    );
  }
}
