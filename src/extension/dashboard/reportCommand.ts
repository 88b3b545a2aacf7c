// WHALE: Open Report — the real `whale report` CLI (the same one a terminal runs: vega charts
// rendered to PNG by resvg, which the extension bundle does not carry) for the runs picked in the
// dashboard or in a quick pick, its Markdown then opened as VS Code's rendered preview beside the
// dashboard. It only reads the run store, so it works in an untrusted workspace too.
import * as vscode from 'vscode';
import { RunStore } from '../../archive/runStore.js';
import { register } from '../commandRegistry.js';
import { runEngine } from '../engineProcess.js';

export interface OpenedReport {
  file: string;
  runs: number;
  skipped: { id: string; why: string }[];
}

/** `whale report` arguments for a store and its chosen runs (every run when none is named). */
export function reportArgs(storeDir: string, runIds: readonly string[]): string[] {
  return ['report', '--store', storeDir, '--json', ...runIds.flatMap((id) => ['--run', id])];
}

export function registerReportCommand(context: vscode.ExtensionContext, log: vscode.LogOutputChannel, storeDir: () => string | undefined): void {
  register(context, log, 'whale.openReport', async (arg?: unknown) => {
    const store = storeDir();
    if (!store) throw new Error('no WHALE project open (no whale.config.json in the workspace)');
    const given = arg && typeof arg === 'object' && Array.isArray((arg as { runs?: unknown }).runs) ? (arg as { runs: unknown[] }).runs.map(String) : undefined;
    let runs = given;
    if (!runs) {
      const listed = new RunStore(store).list();
      if (listed.length === 0) throw new Error(`no runs in ${store} yet: the report needs at least one`);
      const picked = await vscode.window.showQuickPick(
        listed.map((r) => ({ label: r.id, picked: true })),
        { title: 'WHALE: runs to report', canPickMany: true, placeHolder: 'every run is picked; untick the ones to leave out' },
      );
      if (!picked || picked.length === 0) return undefined;
      runs = picked.length === listed.length ? [] : picked.map((p) => p.label);
    }
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'WHALE: writing the report', cancellable: true },
      (progress, token) =>
        runEngine(context.extensionPath, reportArgs(store, runs), store, log, { token, onLine: (line) => progress.report({ message: line }) }),
    );
    if (result.code !== 0) throw new Error(`whale report failed (exit ${result.code}): ${result.stderr.trim().split('\n').slice(-1)[0] || 'see the log'}`);
    const out = JSON.parse(result.stdout) as OpenedReport;
    log.info(`report: ${out.file} (${out.runs} run(s))`);
    await vscode.commands.executeCommand('markdown.showPreviewToSide', vscode.Uri.file(out.file));
    return out;
  });
}
