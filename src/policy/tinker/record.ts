/**
 * What the Tinker backend keeps in the run store about one server, so that the next CLI invocation
 * (another process, perhaps after a crash or a server restart) can continue:
 *
 * - `versions.jsonl`: for every trained version (its sampler path, the version's identity in the
 *   journal) the training checkpoint saved with it (`tinker://<model>/weights/<name>`, what
 *   `load_weights` takes) and where the sampler checkpoint lies. Append-only: one line per version.
 * - `models/<owner>.json`: the server-side training model a process holds (session, model id,
 *   pid). A process unloads its model when it closes; a process that died cannot, so the next one
 *   unloads every model whose recorded process is gone before it creates its own — the server's
 *   LoRA slots (`max_lora_adapters`) are never exhausted by CLI invocations.
 *
 * Both live under `<storeDir>/tinker/<server key>/`, the key naming the server URL and base model.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { appendJsonLine, writeJsonAtomic } from '../../core/atomic.js';

export interface VersionRecord {
  /** The version: the sampler path `save_weights_for_sampler` answered. */
  version: string;
  /** The training checkpoint saved with it (weights and optimizer state), for `load_weights`. */
  weights: string;
}

export interface ModelRecord {
  owner: string;
  sessionId: string;
  modelId: string;
  pid: number;
  at: string;
}

export class TinkerRecord {
  readonly dir: string;

  constructor(storeDir: string, baseUrl: string, baseModel: string) {
    const key = createHash('sha256').update(`${baseUrl}\n${baseModel}`).digest('hex').slice(0, 16);
    this.dir = join(storeDir, 'tinker', key);
  }

  version(version: string): VersionRecord | undefined {
    const file = join(this.dir, 'versions.jsonl');
    if (!existsSync(file)) return undefined;
    let found: VersionRecord | undefined;
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line.trim()) continue;
      try {
        const r = JSON.parse(line) as VersionRecord;
        if (r.version === version) found = r;
      } catch {
        // a torn last line from a crash: the version it named was never returned to anyone
      }
    }
    return found;
  }

  addVersion(r: VersionRecord): void {
    appendJsonLine(join(this.dir, 'versions.jsonl'), r);
  }

  models(): ModelRecord[] {
    const dir = join(this.dir, 'models');
    if (!existsSync(dir)) return [];
    const out: ModelRecord[] = [];
    for (const f of readdirSync(dir)) {
      if (!f.endsWith('.json')) continue;
      try {
        out.push(JSON.parse(readFileSync(join(dir, f), 'utf8')) as ModelRecord);
      } catch {
        // half-written by a crash (writes are atomic, so only a foreign file): ignore it
      }
    }
    return out;
  }

  setModel(r: ModelRecord): void {
    writeJsonAtomic(this.modelFile(r.owner), r);
  }

  dropModel(owner: string, modelId: string): void {
    const file = this.modelFile(owner);
    if (!existsSync(file)) return;
    try {
      if ((JSON.parse(readFileSync(file, 'utf8')) as ModelRecord).modelId !== modelId) return;
    } catch {
      // unreadable: remove it
    }
    rmSync(file, { force: true });
  }

  private modelFile(owner: string): string {
    return join(this.dir, 'models', `${owner.replace(/[^A-Za-z0-9_.-]/g, '_')}.json`);
  }
}
