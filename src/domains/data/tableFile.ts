/**
 * Reads the tabular task files the field ships — JSON lines (FlashRAG, our own), Parquet (Search-R1,
 * DAPO-Math, the Hugging Face hub's exports) and CSV (the Lichess puzzle database) — into plain rows
 * that remember where they came from, so a bad row can be named as `file:line` (or `file: row N`).
 */
import { readFile, stat } from 'node:fs/promises';
import * as path from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { InputError } from '../../core/errors.js';

export type TableFormat = 'jsonl' | 'json' | 'parquet' | 'csv';

export interface TableRow {
  row: Record<string, unknown>;
  /** 1-based line in a text file, or 1-based row number in a Parquet file. */
  line: number;
}

export interface Table {
  file: string;
  format: TableFormat;
  rows: TableRow[];
}

/** How a row is named in an error: `file:line` for text files, `file: row N` for Parquet. */
export function rowLocation(table: Pick<Table, 'file' | 'format'>, line: number, field?: string): { file: string; line?: number; field?: string } {
  return table.format === 'parquet'
    ? { file: `${table.file} (row ${line})`, ...(field ? { field } : {}) }
    : { file: table.file, line, ...(field ? { field } : {}) };
}

export function formatOf(file: string, format?: TableFormat): TableFormat {
  if (format) return format;
  const ext = path.extname(file).toLowerCase();
  if (ext === '.parquet' || ext === '.pq') return 'parquet';
  if (ext === '.csv') return 'csv';
  if (ext === '.json') return 'json';
  return 'jsonl';
}

/** Reads a table file; relative paths resolve against baseDir. Unreadable or malformed input is an InputError naming the file (and line). */
export async function readTableFile(file: string, opts: { baseDir?: string; format?: TableFormat; limit?: number } = {}): Promise<Table> {
  const abs = path.resolve(opts.baseDir ?? process.cwd(), file);
  const format = formatOf(abs, opts.format);
  try {
    await stat(abs);
  } catch (e) {
    throw new InputError({ file: abs }, `cannot read tasks file (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
  }
  const rows = format === 'parquet' ? await readParquet(abs, opts.limit) : readText(abs, format, await readFile(abs, 'utf8'), opts.limit);
  if (rows.length === 0) throw new InputError({ file: abs }, 'the file has no rows');
  return { file: abs, format, rows };
}

function readText(file: string, format: Exclude<TableFormat, 'parquet'>, text: string, limit = Infinity): TableRow[] {
  if (format === 'csv') {
    let records: { record: Record<string, unknown>; info: { lines: number } }[];
    try {
      records = parseCsv(text, { columns: true, skip_empty_lines: true, info: true, bom: true, relax_column_count: false }) as typeof records;
    } catch (e) {
      const err = e as { lines?: number; message: string };
      throw new InputError({ file, ...(err.lines ? { line: err.lines } : {}) }, `not valid CSV: ${err.message}`);
    }
    return records.slice(0, limit).map((r) => ({ row: r.record, line: r.info.lines }));
  }
  if (format === 'json') {
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (e) {
      throw new InputError({ file }, `not valid JSON: ${(e as Error).message}`);
    }
    if (!Array.isArray(data)) throw new InputError({ file }, 'a .json tasks file must hold an array of objects');
    return data.slice(0, limit).map((row, i) => ({ row: asRecord(row, { file, field: `[${i}]` }), line: i + 1 }));
  }
  const rows: TableRow[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length && rows.length < limit; i++) {
    const l = lines[i].trim();
    if (l === '') continue;
    let v: unknown;
    try {
      v = JSON.parse(l);
    } catch (e) {
      throw new InputError({ file, line: i + 1 }, `not valid JSON: ${(e as Error).message}`);
    }
    rows.push({ row: asRecord(v, { file, line: i + 1 }), line: i + 1 });
  }
  return rows;
}

function asRecord(v: unknown, where: { file: string; line?: number; field?: string }): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new InputError(where, 'each row must be a JSON object');
  return v as Record<string, unknown>;
}

async function readParquet(file: string, limit?: number): Promise<TableRow[]> {
  // hyparquet is ESM-only and pure JS: loaded lazily so the CLI's cold start does not pay for it.
  const [{ asyncBufferFromFile, parquetReadObjects }, { compressors }] = await Promise.all([import('hyparquet'), import('hyparquet-compressors')]);
  let objects: Record<string, unknown>[];
  try {
    const buffer = await asyncBufferFromFile(file);
    objects = (await parquetReadObjects({ file: buffer, compressors, ...(limit !== undefined ? { rowEnd: limit } : {}) })) as Record<string, unknown>[];
  } catch (e) {
    throw new InputError({ file }, `not a readable Parquet file: ${(e as Error).message}`);
  }
  return objects.map((o, i) => ({ row: plain(o) as Record<string, unknown>, line: i + 1 }));
}

/** Parquet gives BigInt for int64 columns and Dates for timestamps: make them JSON values. */
function plain(v: unknown): unknown {
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (v instanceof Date) return v.toISOString();
  if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
  if (Array.isArray(v)) return v.map(plain);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}
