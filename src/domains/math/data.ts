/**
 * Math task files in the field's layouts, read with readTableFile:
 * - DAPO-Math-17k (Parquet): `prompt` (chat messages; the problem sits inside DAPO's own "Answer:"
 *   instruction, kept by default as verl's ReTool recipe keeps it — `dapoInstruction: 'strip'`
 *   leaves the bare problem), `reward_model.ground_truth`, `data_source`, `extra_info.index`;
 * - AIME 2024/2025 as the hub exports them (one row per problem): `problem` / `question` / `Problem`,
 *   `answer` / `Answer` (an integer, or a string such as "033"), `id` / `ID` optional.
 * A broken row is an InputError naming file:line (or file (row N)) and the field.
 */
import * as path from 'node:path';
import { InputError } from '../../core/errors.js';
import { readTableFile, rowLocation, type Table } from '../data/tableFile.js';
import type { Split, Task } from '../types.js';

export interface MathPrivate {
  answer: string;
  source: string;
}

export interface MathLoadOptions {
  /** DAPO's "Answer:" instruction around each problem: kept (as the field's ReTool recipe does) or stripped. */
  dapoInstruction?: 'keep' | 'strip';
  /**
   * Skip a row whose problem and answer an earlier row (of any split, in the order weight, harness,
   * val, test) already gave: DAPO-Math-17k ships each problem ~100 times, DAPO's AIME-2024 32 times.
   */
  dedupe?: boolean;
}

/** One file (or a row range of it) feeding a split. */
export interface MathFileSpec {
  file: string;
  /** Rows to skip first (so one DAPO file can feed the weight and the harness split without overlap). */
  offset?: number;
  /** At most this many rows after the offset. */
  limit?: number;
}

// DAPO-Math-17k wraps every problem in this instruction (its own "Answer: $Answer" format).
const DAPO_PREFIX = /^\s*Solve the following math problem step by step\.[^\n]*\n+/;
const DAPO_SUFFIX = /\n+\s*Remember to put your answer on its own line after "Answer:"\.?\s*$/;

/** The bare problem of a DAPO prompt (its instruction wrapper removed); other text is returned as is. */
export function dapoProblem(content: string): string {
  return content.replace(DAPO_PREFIX, '').replace(DAPO_SUFFIX, '').trim();
}

const QUESTION_COLUMNS = ['problem', 'question', 'Problem', 'Question'];
const ANSWER_COLUMNS = ['answer', 'Answer', 'expected_answer', 'final_answer'];
const ID_COLUMNS = ['id', 'ID', 'problem_id', 'idx'];

function pick(row: Record<string, unknown>, names: string[]): [string, unknown] | undefined {
  for (const n of names) if (row[n] !== undefined && row[n] !== null) return [n, row[n]];
  return undefined;
}

function answerText(v: unknown): string | null {
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v === 'string' && v.trim() !== '') return v.trim();
  return null;
}

/** One row as a task: DAPO when it has `prompt` + `reward_model`, else the AIME-style columns. */
export function mathRowToTask(table: Table, row: Record<string, unknown>, line: number, split: Split, opts: MathLoadOptions = {}): Task {
  const where = (field: string) => rowLocation(table, line, field);
  const base = path.basename(table.file).replace(/\.[^.]+$/, '');
  let question: string;
  let answer: string | null;
  let source: string;
  let id: string | undefined;
  if ('reward_model' in row || 'prompt' in row) {
    const prompt = row.prompt;
    if (!Array.isArray(prompt)) throw new InputError(where('prompt'), 'must be a list of chat messages ({role, content})');
    const user = prompt.find(
      (m): m is { role: string; content: string } =>
        !!m && typeof m === 'object' && (m as { role?: unknown }).role === 'user' && typeof (m as { content?: unknown }).content === 'string',
    );
    if (!user) throw new InputError(where('prompt'), 'has no user message with text content');
    question = opts.dapoInstruction === 'strip' ? dapoProblem(user.content) : user.content.trim();
    const rm = row.reward_model as { ground_truth?: unknown } | undefined;
    if (!rm || typeof rm !== 'object') throw new InputError(where('reward_model'), 'must be an object with ground_truth');
    answer = answerText(rm.ground_truth);
    if (answer === null) throw new InputError(where('reward_model.ground_truth'), 'must be a non-empty answer string or a number');
    source = typeof row.data_source === 'string' && row.data_source ? row.data_source : base;
    const extra = row.extra_info as { index?: unknown } | undefined;
    const idx = extra && typeof extra === 'object' ? extra.index : undefined;
    if (typeof idx === 'string' || typeof idx === 'number') id = `${source}-${idx}`;
  } else {
    const q = pick(row, QUESTION_COLUMNS);
    if (!q)
      throw new InputError(
        where('problem'),
        `missing: a math row needs a problem text (one of ${QUESTION_COLUMNS.join(', ')}) or DAPO's prompt + reward_model`,
      );
    if (typeof q[1] !== 'string' || q[1].trim() === '') throw new InputError(where(q[0]), 'must be a non-empty string');
    question = q[1].trim();
    const a = pick(row, ANSWER_COLUMNS);
    if (!a) throw new InputError(where('answer'), `missing: a math row needs an answer (one of ${ANSWER_COLUMNS.join(', ')})`);
    answer = answerText(a[1]);
    if (answer === null) throw new InputError(where(a[0]), 'must be a non-empty answer string or a number');
    source = typeof row.data_source === 'string' && row.data_source ? row.data_source : base;
    const i = pick(row, ID_COLUMNS);
    if (i && (typeof i[1] === 'string' || typeof i[1] === 'number')) id = `${source}-${i[1]}`;
  }
  if (question === '') throw new InputError(where('prompt'), 'the problem text is empty');
  id ??= `${base}-${line}`;
  const priv: MathPrivate = { answer, source };
  return { id, split, public: { id, question, meta: { source } }, private: { ...priv } };
}

/** Reads the files feeding each split; a task id seen twice (in one split or across splits) is an error. */
export async function loadMathSplits(
  files: Partial<Record<Split, MathFileSpec[]>>,
  baseDir: string | undefined,
  opts: MathLoadOptions = {},
): Promise<Record<Split, Task[]>> {
  const out: Record<Split, Task[]> = { weight: [], harness: [], val: [], test: [] };
  const seen = new Map<string, { split: Split; where: string }>();
  const problems = new Set<string>();
  for (const split of Object.keys(out) as Split[]) {
    for (const spec of files[split] ?? []) {
      const offset = spec.offset ?? 0;
      const table = await readTableFile(spec.file, { baseDir, ...(spec.limit !== undefined ? { limit: offset + spec.limit } : {}) });
      for (const { row, line } of table.rows.slice(offset)) {
        const task = mathRowToTask(table, row, line, split, opts);
        const loc = rowLocation(table, line);
        const here = `${loc.file}${loc.line !== undefined ? `:${loc.line}` : ''}`;
        const before = seen.get(task.id);
        if (before)
          throw new InputError(
            rowLocation(table, line, 'id'),
            `task id '${task.id}' already used by ${before.where} (split ${before.split}): splits must not share tasks`,
          );
        seen.set(task.id, { split, where: here });
        if (opts.dedupe) {
          const key = `${task.public.question}\u0000${(task.private as unknown as MathPrivate).answer}`;
          if (problems.has(key)) continue;
          problems.add(key);
        }
        out[split].push(task);
      }
    }
  }
  return out;
}
