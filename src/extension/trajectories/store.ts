// Where the run store of the open project is, and which run a note belongs to. The store is the
// `store` field of the first workspace folder's whale.config.json (default `.whale`), read
// leniently: a config with errors elsewhere still lets a person browse what was already run.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'jsonc-parser';
import * as vscode from 'vscode';
import { readAnnotations, type StoredAnnotation } from '../../archive/annotationStore.js';
import { RunStore } from '../../archive/runStore.js';

export function projectStoreDir(): string | undefined {
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    const cfg = join(folder.uri.fsPath, 'whale.config.json');
    if (!existsSync(cfg)) continue;
    let store = '.whale';
    try {
      const raw = parse(readFileSync(cfg, 'utf8')) as { store?: unknown } | undefined;
      if (typeof raw?.store === 'string' && raw.store.trim()) store = raw.store;
    } catch {
      // keep the default: the Problems panel reports config errors
    }
    return resolve(folder.uri.fsPath, store);
  }
  return undefined;
}

/** The run notes go to: the store's current run, else one the person picks; undefined if cancelled. */
export async function runForNotes(store: string): Promise<string | undefined> {
  const runs = new RunStore(store);
  const current = runs.current();
  if (current) return current;
  const all = runs.list();
  if (all.length === 0) throw new Error(`there is no run in ${runs.runsDir()} to keep the note with; start a run first`);
  const picked = await vscode.window.showQuickPick(all.map((r) => r.id).reverse(), {
    title: 'WHALE: which run should keep this note? (the proposer of that run reads it)',
    ignoreFocusOut: true,
  });
  return picked;
}

export interface RunNote extends StoredAnnotation {
  runId: string;
}

/** Every live note in the store, with the run that keeps it. */
export function allNotes(store: string): RunNote[] {
  const runs = new RunStore(store);
  return runs.list().flatMap((r) => readAnnotations(runs.runDir(r.id)).map((n) => ({ ...n, runId: r.id })));
}

/** Sizes and times of what the views read (current run, its journal and notes): changes when they do. */
export function storeSignature(store: string): string {
  const runs = new RunStore(store);
  const current = runs.current();
  const files = [join(store, 'current-run'), runs.runsDir(), ...(current ? [runs.journalFile(current), join(runs.runDir(current), 'annotations.jsonl')] : [])];
  return files
    .map((f) => {
      try {
        const st = statSync(f);
        return `${st.size}:${st.mtimeMs}`;
      } catch {
        return '-';
      }
    })
    .join('|');
}
