import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic, writeJsonAtomic } from '../core/atomic.js';

/**
 * Runs under `<store>/runs/<id>/`: `config.json` (the snapshot the run started with), `journal.jsonl`
 * (append-only events, the source of truth), `phases/…` (proposals, reports), and `STOP` (asks a
 * running engine to stop at its next safe point). `<store>/current-run` names the latest run.
 */
export class RunStore {
  constructor(readonly root: string) {}

  runsDir(): string {
    return join(this.root, 'runs');
  }

  runDir(id: string): string {
    return join(this.runsDir(), id);
  }

  journalFile(id: string): string {
    return join(this.runDir(id), 'journal.jsonl');
  }

  stopFile(id: string): string {
    return join(this.runDir(id), 'STOP');
  }

  create(id: string, config: unknown): string {
    const dir = this.runDir(id);
    if (existsSync(dir)) throw new Error(`run ${id} already exists in ${this.runsDir()}`);
    mkdirSync(dir, { recursive: true });
    writeJsonAtomic(join(dir, 'config.json'), config);
    // Not current yet: the engine makes it current once the run has started, so `current-run`
    // never names a run whose start failed (and was removed).
    return dir;
  }

  config<T>(id: string): T {
    return JSON.parse(readFileSync(join(this.runDir(id), 'config.json'), 'utf8')) as T;
  }

  setCurrent(id: string): void {
    writeFileAtomic(join(this.root, 'current-run'), id + '\n');
  }

  current(): string | undefined {
    const f = join(this.root, 'current-run');
    if (!existsSync(f)) return undefined;
    const id = readFileSync(f, 'utf8').trim();
    return existsSync(this.runDir(id)) ? id : undefined;
  }

  list(): { id: string; created: Date }[] {
    if (!existsSync(this.runsDir())) return [];
    return readdirSync(this.runsDir())
      .filter((id) => existsSync(this.journalFile(id)) || existsSync(join(this.runDir(id), 'config.json')))
      .map((id) => ({ id, created: statSync(this.runDir(id)).birthtime }))
      .sort((a, b) => a.id.localeCompare(b.id));
  }

  requestStop(id: string): void {
    writeFileAtomic(this.stopFile(id), new Date().toISOString() + '\n');
  }

  stopRequested(id: string): boolean {
    return existsSync(this.stopFile(id));
  }
}

/** A sortable, readable run id: method, UTC time, and a short random suffix. */
export function newRunId(method: string, now = new Date()): string {
  const t = now.toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '-');
  return `${t}-${method}-${Math.random().toString(36).slice(2, 6)}`;
}
