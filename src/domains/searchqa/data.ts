/**
 * SearchQA task files in the field's layouts, read through readTableFile:
 *  - Search-R1 (Parquet or JSONL): id, question, golden_answers, data_source, prompt, ability,
 *    reward_model {style, ground_truth {target}}, extra_info {split, index};
 *  - FlashRAG (JSONL): id, question, golden_answers (the source is the file's folder, `nq/test.jsonl`).
 * Train files feed the weight and harness splits, test files the val and test splits; with neither
 * given, one set of files is split by a seeded hash of each task id.
 */
import * as path from 'node:path';
import { InputError } from '../../core/errors.js';
import { hashSeed } from '../../core/rng.js';
import { readTableFile, rowLocation, type Table } from '../data/tableFile.js';
import type { Json, Split, Task } from '../types.js';

/** The seven QA sets of Search-R1's evaluation (train: nq + hotpotqa). */
export const QA_SOURCES = ['nq', 'triviaqa', 'popqa', 'hotpotqa', '2wikimultihopqa', 'musique', 'bamboogle'] as const;

/** What task.private holds: the gold answers (any one matches) and the set the question came from. */
export interface SearchqaPrivate {
  answers: string[];
  dataSource: string;
}

export function searchqaPrivate(task: Task): SearchqaPrivate {
  return task.private as unknown as SearchqaPrivate;
}

/** A FlashRAG file is named by its folder (`…/hotpotqa/dev.jsonl`); otherwise by its base name (`bamboogle.jsonl`). */
export function sourceFromPath(file: string): string {
  const dir = path.basename(path.dirname(file)).toLowerCase();
  if ((QA_SOURCES as readonly string[]).includes(dir)) return dir;
  const base = path
    .basename(file)
    .replace(/\.(jsonl|json|parquet|pq|csv)$/i, '')
    .toLowerCase();
  return QA_SOURCES.find((s) => base === s || base.startsWith(`${s}_`) || base.startsWith(`${s}-`)) ?? base;
}

function stringList(v: unknown): string[] | null {
  if (typeof v === 'string' && v.trim().startsWith('[')) {
    // A list column saved as a JSON string (some exporters do that): read the list.
    try {
      const parsed: unknown = JSON.parse(v);
      if (Array.isArray(parsed)) return stringList(parsed);
    } catch {
      // a plain answer that starts with '['
    }
  }
  if (typeof v === 'string') return v.trim() === '' ? null : [v];
  if (!Array.isArray(v) || v.length === 0) return null;
  const out = v.map((x) => (typeof x === 'number' ? String(x) : x));
  return out.every((x) => typeof x === 'string' && x.trim() !== '') ? (out as string[]) : null;
}

/** One row of either layout as a task (split assigned later); a broken row is an InputError naming file, line and field. */
export function rowToTask(table: Table, row: Record<string, unknown>, line: number, fallbackSource: string): Task {
  const where = (field: string) => rowLocation(table, line, field);
  const question = row.question;
  if (typeof question !== 'string' || question.trim() === '') throw new InputError(where('question'), 'must be a non-empty string');
  let answers: string[] | null;
  let answerField = 'golden_answers';
  if (row.golden_answers !== undefined && row.golden_answers !== null) answers = stringList(row.golden_answers);
  else {
    answerField = 'reward_model.ground_truth.target';
    const rm = row.reward_model as { ground_truth?: { target?: unknown } } | undefined;
    answers = stringList(rm?.ground_truth?.target);
  }
  if (!answers) throw new InputError(where(answerField), 'must be a non-empty list of non-empty strings (golden_answers, or reward_model.ground_truth.target)');
  const ds = row.data_source ?? fallbackSource;
  if (typeof ds !== 'string' || ds.trim() === '') throw new InputError(where('data_source'), 'must be a non-empty string');
  const dataSource = ds.trim().toLowerCase();
  let rawId = row.id;
  if (rawId === undefined || rawId === null) {
    const idx = (row.extra_info as { index?: unknown } | undefined)?.index;
    rawId = typeof idx === 'number' ? `${(row.extra_info as { split?: unknown }).split ?? 'row'}_${idx}` : `row${line}`;
  }
  if (typeof rawId !== 'string' && typeof rawId !== 'number') throw new InputError(where('id'), 'must be a string or a number');
  // Search-R1 and FlashRAG number rows per set ("test_0" exists in every set): the source makes ids unique.
  const id = `${dataSource}:${String(rawId)}`;
  const priv: SearchqaPrivate = { answers: answers.map((a) => a.trim()), dataSource };
  return { id, split: 'test', public: { id, question: question.trim(), meta: { data_source: dataSource } }, private: priv as unknown as Json };
}

export async function loadQaFiles(
  files: readonly string[],
  baseDir: string | undefined,
): Promise<{ tasks: Task[]; where: Map<string, { file: string; line?: number }> }> {
  const tasks: Task[] = [];
  const where = new Map<string, { file: string; line?: number }>();
  for (const f of files) {
    const table = await readTableFile(f, { baseDir });
    const fallback = sourceFromPath(table.file);
    for (const { row, line } of table.rows) {
      const t = rowToTask(table, row, line, fallback);
      const prev = where.get(t.id);
      if (prev) throw new InputError(rowLocation(table, line, 'id'), `duplicate task id '${t.id}' (first at ${prev.file}${prev.line ? `:${prev.line}` : ''})`);
      where.set(t.id, { file: table.file, line });
      tasks.push(t);
    }
  }
  return { tasks, where };
}

/** A stable order that does not follow the file (so a prefix mixes the sources), fixed by the seed. */
function seededOrder(tasks: Task[], seed: string): Task[] {
  return tasks
    .map((t) => ({ t, k: hashSeed(`whale:searchqa:${seed}:${t.id}`) }))
    .sort((a, b) => a.k - b.k || (a.t.id < b.t.id ? -1 : 1))
    .map((x) => x.t);
}

function take(tasks: Task[], split: Split): Task[] {
  return tasks.map((t) => ({ ...t, split }));
}

export interface SplitPlan {
  trainFiles: string[];
  testFiles: string[];
  /** Files split four ways when no train/test files are given. */
  files: string[];
  /** Tasks of the train files that go to the harness split (the rest train the weights). */
  harnessSize: number;
  /** Tasks of the test files that go to val (the rest are the sealed test split). */
  valSize: number;
  /** Caps per split (a prefix of the seeded order). */
  sizes: Partial<Record<Split, number>>;
  seed: string;
}

/** Loads the files of a plan into the four splits. */
export async function loadSplits(plan: SplitPlan, baseDir: string | undefined): Promise<Record<Split, Task[]>> {
  const out: Record<Split, Task[]> = { weight: [], harness: [], val: [], test: [] };
  const seen = new Map<string, string>();
  const add = (split: Split, tasks: Task[]) => {
    for (const t of tasks) {
      const other = seen.get(t.id);
      // The same question in train and test files would leak the test split into training.
      if (other !== undefined)
        throw new InputError({ file: 'whale.config.json', field: 'domain.options' }, `task '${t.id}' is in both the ${other} and the ${split} files`);
      seen.set(t.id, split);
    }
    out[split].push(...take(tasks, split));
  };
  if (plan.files.length > 0) {
    const all = seededOrder((await loadQaFiles(plan.files, baseDir)).tasks, plan.seed);
    // Fractions of Search-R1's scale: harness and val 256 each when the files allow, test 512, rest weights.
    const n = all.length;
    const h = Math.min(plan.harnessSize, Math.floor(n * 0.15));
    const v = Math.min(plan.valSize, Math.floor(n * 0.15));
    const te = Math.min(512, Math.floor(n * 0.3));
    add('harness', all.slice(0, h));
    add('val', all.slice(h, h + v));
    add('test', all.slice(h + v, h + v + te));
    add('weight', all.slice(h + v + te));
  } else {
    if (plan.trainFiles.length > 0) {
      const train = seededOrder((await loadQaFiles(plan.trainFiles, baseDir)).tasks, `${plan.seed}:train`);
      const h = Math.min(plan.harnessSize, Math.floor(train.length / 2));
      add('harness', train.slice(0, h));
      add('weight', train.slice(h));
    }
    if (plan.testFiles.length > 0) {
      const test = seededOrder((await loadQaFiles(plan.testFiles, baseDir)).tasks, `${plan.seed}:test`);
      const v = Math.min(plan.valSize, Math.floor(test.length / 2));
      add('val', test.slice(0, v));
      add('test', test.slice(v));
    }
  }
  for (const s of Object.keys(out) as Split[]) {
    const cap = plan.sizes[s];
    if (cap !== undefined) out[s] = out[s].slice(0, cap);
  }
  return out;
}
