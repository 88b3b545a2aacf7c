/**
 * A data-only domain (`domain.data` in whale.config.json): task files in the field's formats with a
 * field mapping, a verifier from the library, tools declared as HTTP endpoints. No code: it becomes
 * a `defineDomain` definition like any other and goes through the same engine.
 */
import * as path from 'node:path';
import type { DataDomainConfig } from '../../core/config.js';
import { InputError } from '../../core/errors.js';
import { assignSplit, harnessDir } from '../common.js';
import { DEFAULT_SPLIT_WEIGHTS } from '../definition.js';
import { defineDomain, type DefinedDomain, type TaskInput } from '../sdk.js';
import { SPLITS, type Json, type Split, type Task } from '../types.js';
import { goldCompare, goldProblem } from '../verifiers/library.js';
import { httpTool } from '../tools/http.js';
import { readTableFile, rowLocation, type Table } from './tableFile.js';

/** What a data task keeps private: its gold answers and the whole row (for a command verifier or a mapped tool argument). */
export interface DataPrivate {
  answers: string[];
  row: Record<string, Json>;
}

function answersOf(row: Record<string, unknown>, fields: DataDomainConfig['fields'], loc: (field: string) => InputError): string[] {
  const name = fields.answers ?? fields.answer;
  let v = row[name];
  if (typeof v === 'string' && fields.answers && v.trim().startsWith('[')) {
    try {
      v = JSON.parse(v);
    } catch {
      // a plain string that happens to start with '['
    }
  }
  const list = Array.isArray(v) ? v : v === undefined || v === null ? [] : [v];
  const out = list
    .filter((x) => typeof x === 'string' || typeof x === 'number')
    .map(String)
    .filter((x) => x.trim() !== '');
  if (out.length === 0 || out.length !== list.length) throw loc(name);
  return out;
}

/** Reads the task files into tasks; a broken row is an InputError naming file:line and the field. */
export async function loadDataTasks(cfg: DataDomainConfig, baseDir: string, configFile: string): Promise<TaskInput<DataPrivate>[]> {
  const files: [string, Split | undefined][] =
    typeof cfg.tasks === 'string'
      ? [[cfg.tasks, undefined]]
      : SPLITS.filter((s) => (cfg.tasks as Record<string, string | undefined>)[s]).map((s) => [(cfg.tasks as Record<string, string>)[s], s]);
  const f = cfg.fields;
  const out: TaskInput<DataPrivate>[] = [];
  const seen = new Map<string, string>();
  for (const [file, fileSplit] of files) {
    const table: Table = await readTableFile(file, { baseDir, ...(cfg.format ? { format: cfg.format } : {}) });
    for (const { row, line } of table.rows) {
      const bad = (field: string, msg: string) => new InputError(rowLocation(table, line, field), msg);
      const rawId = row[f.id];
      if (typeof rawId !== 'string' && typeof rawId !== 'number')
        throw bad(f.id, `every row needs an id (a string or number in field '${f.id}'; map another with fields.id)`);
      const id = String(rawId);
      const question = row[f.question];
      if (typeof question !== 'string' || question.trim() === '') throw bad(f.question, `the question must be a non-empty string (task '${id}')`);
      const answers = answersOf(row, f, (name) =>
        bad(name, `needs the gold answer${f.answers ? 's (a list of strings)' : ' (a string or number)'} (task '${id}')`),
      );
      const unusable = answers.map((g) => goldProblem(cfg.verifier, g)).find((m) => m !== null);
      if (unusable) throw bad(f.answers ?? f.answer, `${unusable} (task '${id}')`);
      let split = fileSplit;
      const rowSplit = row[f.split];
      if (rowSplit !== undefined && rowSplit !== null && rowSplit !== '') {
        if (!SPLITS.includes(rowSplit as Split)) throw bad(f.split, `unknown split ${JSON.stringify(rowSplit)} (known: ${SPLITS.join(', ')})`);
        if (fileSplit && rowSplit !== fileSplit) throw bad(f.split, `says '${String(rowSplit)}' in the ${fileSplit} file`);
        split = rowSplit as Split;
      }
      const where = `${table.file}:${line}`;
      if (seen.has(id)) throw bad(f.id, `duplicate task id '${id}' (first at ${seen.get(id)})`);
      seen.set(id, where);
      // A tool's private argument read from a column the row lacks would be sent as null on every call.
      for (const tool of cfg.tools)
        for (const [arg, field] of Object.entries(tool.privateArgs ?? {}))
          if (row[field] === undefined || row[field] === null)
            throw bad(field, `tool '${tool.name}' sends this field as its argument '${arg}' (privateArgs), but the row has none (task '${id}')`);
      const meta: { [k: string]: Json } = {};
      for (const m of f.meta) if (row[m] !== undefined) meta[m] = row[m] as Json;
      out.push({ id, question, meta, split: split ?? assignSplit(id, DEFAULT_SPLIT_WEIGHTS), private: { answers, row: row as Record<string, Json> } });
    }
  }
  // A meta column no row has is a misspelt name: the harness would never see the field.
  const rows = out.map((t) => t.meta ?? {});
  for (const m of f.meta)
    if (out.length > 0 && !rows.some((r) => m in r))
      throw new InputError({ file: configFile, field: 'fields.meta' }, `no row of ${files.map(([file]) => file).join(', ')} has the column '${m}'`);
  return out;
}

/** The definition of a data-only domain; `configFile` is where errors point and what relative paths resolve against. */
export function dataDomainDefinition(cfg: DataDomainConfig, configFile: string): DefinedDomain<Record<string, unknown>, DataPrivate> {
  const baseDir = path.dirname(configFile);
  const where = { file: configFile, field: 'domain.data.verifier' };
  const spec = cfg.verifier;
  const compare = spec.kind === 'command' ? undefined : goldCompare(spec, where);
  const files = typeof cfg.tasks === 'string' ? cfg.tasks : Object.values(cfg.tasks).join(', ');
  const privateRow = (task: Task) => (task.private as unknown as DataPrivate).row;
  return defineDomain<Record<string, unknown>, DataPrivate>({
    id: cfg.id,
    title: cfg.title ?? `${cfg.id} — tasks from ${files}`,
    description:
      cfg.description ??
      `Tasks read from ${files}, verified by '${spec.kind}'${cfg.tools.length ? `, with tools ${cfg.tools.map((t) => t.name).join(', ')}` : ''}.`,
    regime: 'unknown',
    tasks: () => loadDataTasks(cfg, baseDir, configFile),
    tools: cfg.tools.map((t) => {
      const tool = httpTool(t, privateRow);
      return { ...tool, call: (args, task) => tool.call(args, task as unknown as Task) };
    }),
    verify:
      spec.kind === 'command'
        ? { kind: 'command', command: spec.command, timeoutMs: spec.timeoutMs }
        : (task, rollout) => compare!(rollout.finalAnswer, task.private.answers),
    ...(cfg.limits ? { limits: cfg.limits } : {}),
    h0: cfg.h0 ? path.resolve(baseDir, cfg.h0) : harnessDir('qa-h0'),
    searchSpace:
      cfg.searchSpace ??
      `${cfg.id}: questions from ${files}; the final answer is judged by the '${spec.kind}' verifier against the gold answer(s).${cfg.tools.length ? ` Tools: ${cfg.tools.map((t) => `${t.name} (${t.description})`).join('; ')}.` : ' No tools.'} A harness may change prompts, how the question is framed, answer extraction, tool use and turn budgets; it never sees the gold answers.`,
  });
}
