// People's notes on trajectories, kept in the run store as `runs/<id>/annotations.jsonl`: an
// append-only log of `add` and `delete` records (a note is never rewritten in place, so two
// writers — the editor and `whale annotate` — cannot lose each other's notes). The harness phase
// reads the live notes into the proposer's ArchiveView (engine/harnessPhase.ts).
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, readSync, statSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';

/** A person's comment on a trajectory (or a task, or a candidate), shown to the proposer. */
export interface Annotation {
  text: string;
  harnessHash?: string;
  taskId?: string;
  trajectoryId?: string;
  keyHash?: string;
  /** 0-based turn (model call) the note is about; absent: the whole trajectory. */
  turn?: number;
  author?: string;
  createdAt?: string;
  /** Stable id in this store. */
  id?: string;
}

export const AnnotationInput = z.object({
  text: z.string().trim().min(1, 'an annotation needs some text'),
  harnessHash: z.string().optional(),
  taskId: z.string().optional(),
  trajectoryId: z.string().optional(),
  keyHash: z.string().optional(),
  /** 0-based turn; absent: the note is on the whole trajectory. */
  turn: z.number().int().nonnegative().optional(),
  author: z.string().optional(),
});
export type AnnotationInput = z.infer<typeof AnnotationInput>;

/** A stored note: the proposer's Annotation plus its id and time (always present once saved). */
export type StoredAnnotation = Annotation & { id: string; createdAt: string };

const AddRecord = AnnotationInput.extend({ op: z.literal('add').optional(), id: z.string().optional(), createdAt: z.string().optional() });
const DeleteRecord = z.object({ op: z.literal('delete'), id: z.string(), at: z.string().optional() });

export function annotationsFile(runDir: string): string {
  return join(runDir, 'annotations.jsonl');
}

/**
 * Appends one record as a single O_APPEND write, fsynced, so concurrent writers never interleave
 * inside a line and a saved note survives a crash. A line torn by an earlier crash is closed
 * first so that the new record starts on a line of its own.
 */
function appendRecord(runDir: string, record: Record<string, unknown>): void {
  const file = annotationsFile(runDir);
  mkdirSync(dirname(file), { recursive: true });
  let prefix = '';
  if (existsSync(file) && statSync(file).size > 0) {
    const fd = openSync(file, 'r');
    const last = Buffer.alloc(1);
    readSync(fd, last, 0, 1, statSync(file).size - 1);
    closeSync(fd);
    if (last[0] !== 10) prefix = '\n';
  }
  const fd = openSync(file, 'a');
  try {
    writeSync(fd, prefix + JSON.stringify(record) + '\n');
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export function addAnnotation(runDir: string, input: AnnotationInput, now = new Date()): StoredAnnotation {
  const parsed = AnnotationInput.safeParse(input);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    throw new Error(`annotation ${i.path.join('.') || ''}: ${i.message}`.replace('annotation : ', 'annotation: '));
  }
  const note: StoredAnnotation = { ...parsed.data, id: `a-${now.getTime().toString(36)}-${randomBytes(3).toString('hex')}`, createdAt: now.toISOString() };
  appendRecord(runDir, { op: 'add', ...note });
  return note;
}

/** Deletes a note by id; false when there is no live note with that id. */
export function deleteAnnotation(runDir: string, id: string, now = new Date()): boolean {
  if (!readAnnotations(runDir).some((a) => a.id === id)) return false;
  appendRecord(runDir, { op: 'delete', id, at: now.toISOString() });
  return true;
}

/**
 * The live notes in the order they were written. Lines that are not records (torn by a crash,
 * edited by hand) are skipped, so one bad line never hides the others; records written before
 * notes had ids get one from their line number.
 */
export function readAnnotations(runDir: string): StoredAnnotation[] {
  const file = annotationsFile(runDir);
  if (!existsSync(file)) return [];
  const live = new Map<string, StoredAnnotation>();
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (!line.trim()) return;
      let json: unknown;
      try {
        json = JSON.parse(line);
      } catch {
        return;
      }
      const del = DeleteRecord.safeParse(json);
      if (del.success) {
        live.delete(del.data.id);
        return;
      }
      const add = AddRecord.safeParse(json);
      if (!add.success) return;
      const { op: _op, ...note } = add.data;
      void _op;
      const id = note.id ?? `line-${i + 1}`;
      live.set(id, { ...note, id, createdAt: note.createdAt ?? '' });
    });
  return [...live.values()];
}

/** The notes on one trajectory (by id), whole-trajectory notes first, then by turn. */
export function annotationsFor(notes: readonly StoredAnnotation[], trajectoryId: string): StoredAnnotation[] {
  return notes.filter((n) => n.trajectoryId === trajectoryId).sort((a, b) => (a.turn ?? -1) - (b.turn ?? -1));
}
