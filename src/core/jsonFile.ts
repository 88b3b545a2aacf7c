import { readFileSync, statSync } from 'node:fs';
import * as jsonc from 'jsonc-parser';
import type { z } from 'zod';
import { InputError } from './errors.js';

/** 1-based line and column of a character offset. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lastNl = -1;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lastNl = i;
    }
  }
  return { line, column: offset - lastNl };
}

/** The offset of the value at `path`, or of its nearest existing ancestor (a missing field is reported where its parent is). */
function offsetOfPath(root: jsonc.Node | undefined, path: (string | number)[]): number {
  if (!root) return 0;
  for (let n = path.length; n >= 0; n--) {
    const node = jsonc.findNodeAtLocation(root, path.slice(0, n));
    if (node) {
      // For an object property, point at the key rather than the value.
      const prop = node.parent?.type === 'property' ? node.parent : node;
      return prop.offset;
    }
  }
  return 0;
}

export function fieldName(path: PropertyKey[]): string {
  return path
    .map((p) => (typeof p === 'number' ? `[${p}]` : String(p)))
    .join('.')
    .replace(/\.\[/g, '[');
}

/**
 * Parses JSON text (comments allowed) and validates it with a zod schema. Every problem becomes an
 * InputError with file, line, column and field; all problems are reported at once.
 */
export function parseJsonWithSchema<T extends z.ZodType>(text: string, file: string, schema: T): z.output<T> {
  const syntaxErrors: jsonc.ParseError[] = [];
  const root = jsonc.parseTree(text, syntaxErrors, { allowTrailingComma: true, disallowComments: false });
  if (syntaxErrors.length > 0) {
    throw InputError.combine(
      syntaxErrors.map((e) => new InputError({ file, ...lineColumn(text, e.offset) }, `invalid JSON (${jsonc.printParseErrorCode(e.error)})`)),
    );
  }
  const value: unknown = root ? jsonc.getNodeValue(root) : undefined;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw InputError.combine(
    result.error.issues.map((issue) => {
      const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
      return new InputError({ file, field: fieldName(path) || '(root)', ...lineColumn(text, offsetOfPath(root, path)) }, issue.message);
    }),
  );
}

/** Reads and validates a JSON file; one larger than `maxBytes` is refused before it is read. */
export function readJsonWithSchema<T extends z.ZodType>(file: string, schema: T, maxBytes?: number): z.output<T> {
  let text: string;
  try {
    if (maxBytes !== undefined) {
      const size = statSync(file).size;
      if (size > maxBytes) throw new InputError({ file }, `is ${size} bytes; the limit is ${maxBytes} bytes`);
    }
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if (e instanceof InputError) throw e;
    throw new InputError({ file }, `cannot read file (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
  }
  return parseJsonWithSchema(text, file, schema);
}

/**
 * Parses a JSON-lines file, validating each line. A broken line is an error naming its line number;
 * blank lines are skipped.
 */
export function parseJsonLines<T extends z.ZodType>(text: string, file: string, schema: T): z.output<T>[] {
  const out: z.output<T>[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i].trim();
    if (raw === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (e) {
      throw new InputError({ file, line: i + 1 }, `invalid JSON on this line (${(e as Error).message})`);
    }
    const r = schema.safeParse(value);
    if (!r.success) {
      const issue = r.error.issues[0];
      const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
      throw new InputError({ file, line: i + 1, field: fieldName(path) || '(root)' }, issue.message);
    }
    out.push(r.data);
  }
  return out;
}
