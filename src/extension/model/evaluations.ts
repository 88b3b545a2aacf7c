// vscode-free: every finished evaluation in the run store (results/<2>/<keyHash>/summary.json),
// read through the result store (only summaries whose digest checks out), for the archive view: a
// candidate's figures on each split under each policy, whoever paid for them (a run's validation,
// WHALE: Evaluate, `whale eval` in a terminal).
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ResultStore } from '../../archive/resultStore.js';

export interface EvaluationRow {
  keyHash: string;
  harness: string;
  split: string;
  version: string;
  mean: number;
  se: number;
  k: number;
  tasks: number;
  completedAt: string;
}

/** The store's finished evaluations, oldest first. */
export function storedEvaluations(storeDir: string): EvaluationRow[] {
  const results = join(storeDir, 'results');
  if (!existsSync(results)) return [];
  const store = new ResultStore(storeDir);
  const out: EvaluationRow[] = [];
  for (const shard of readdirSync(results)) {
    if (!/^[0-9a-f]{2}$/.test(shard)) continue;
    for (const keyHash of readdirSync(join(results, shard))) {
      let s;
      try {
        s = store.summary(keyHash);
      } catch {
        continue; // unreadable: `whale eval` reports it; the view shows what it can
      }
      if (!s) continue;
      out.push({
        keyHash,
        harness: s.key.harnessHash,
        split: s.key.split,
        version: s.key.policyVersion,
        mean: s.meanAtK,
        se: s.standardError,
        k: s.k,
        tasks: s.tasks,
        completedAt: s.completedAt,
      });
    }
  }
  return out.sort((a, b) => a.completedAt.localeCompare(b.completedAt));
}
