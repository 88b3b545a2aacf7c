import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { HarnessArchive } from '../archive/harnessArchive.js';
import { ResultStore } from '../archive/resultStore.js';
import { RunStore } from '../archive/runStore.js';
import type { WhaleConfig } from '../core/config.js';
import type { Domain, Task } from '../domains/types.js';
import type { HarnessRuntime } from '../harness/runtime.js';
import type { PolicyBackend } from '../policy/types.js';
import type { Journal } from '../archive/journal.js';

/** What every phase of a run works with. One per engine session; closed when the session ends. */
export interface RunContext {
  runId: string;
  runDir: string;
  config: WhaleConfig;
  /** The file the config came from (for error locations); '(flags)' when built from flags. */
  configFile: string;
  storeDir: string;
  domain: Domain;
  backend: PolicyBackend;
  runtime: HarnessRuntime;
  results: ResultStore;
  runs: RunStore;
  archive: HarnessArchive;
  journal: Journal;
  /** The harness-split tasks candidates are scored on. */
  searchTasks: Task[];
  signal: AbortSignal;
  log(line: string): void;
  progress(label: string, done: number, total: number): void;
}

/** A candidate's folder, written out from the archive once and reused (evaluation needs a path). */
export async function candidateDir(ctx: Pick<RunContext, 'archive' | 'storeDir'>, treeHash: string): Promise<string> {
  const dir = join(ctx.storeDir, 'candidates', treeHash);
  if (existsSync(join(dir, 'harness.json'))) return dir;
  try {
    await ctx.archive.materialize(treeHash, dir);
  } catch (e) {
    // Another engine sharing the store wrote it first (materialize renames a finished folder in).
    if (!existsSync(join(dir, 'harness.json'))) throw e;
  }
  return dir;
}
