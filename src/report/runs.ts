// Runs as the report and the dashboard read them: `<store>/runs/<id>/journal.jsonl` and the config
// snapshot beside it. No chart code here, so the extension bundle stays free of vega and resvg.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RunStore } from '../archive/runStore.js';
import { WhaleError } from '../core/errors.js';
import { Journal } from '../archive/journal.js';
import type { RunInput } from './aggregate.js';

export interface LoadedRuns {
  runs: RunInput[];
  /** Runs that were asked for (or found) but cannot be reported, with why. */
  skipped: { id: string; why: string }[];
}

/** Reads runs from `<store>/runs/`: the given ids, or every run there. An unknown id is an error. */
export function loadRuns(storeDir: string, ids?: readonly string[]): LoadedRuns {
  const store = new RunStore(storeDir);
  const wanted = ids && ids.length > 0 ? [...ids] : store.list().map((r) => r.id);
  const runs: RunInput[] = [];
  const skipped: LoadedRuns['skipped'] = [];
  for (const id of wanted) {
    if (!existsSync(store.runDir(id))) throw new WhaleError(`no run '${id}' in ${store.runsDir()}`);
    const entries = Journal.read(store.journalFile(id));
    if (!entries.some((e) => e.type === 'run_started')) {
      skipped.push({ id, why: 'not started (its journal has no run_started event)' });
      continue;
    }
    let config: RunInput['config'];
    const cfgFile = join(store.runDir(id), 'config.json');
    if (existsSync(cfgFile)) {
      try {
        config = JSON.parse(readFileSync(cfgFile, 'utf8')) as RunInput['config'];
      } catch {
        config = undefined;
      }
    }
    runs.push({ id, entries, config });
  }
  return { runs, skipped };
}
