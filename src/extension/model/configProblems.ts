// vscode-free: what the Problems panel shows for whale.config.json — the core's own validation
// (zod schema with InputError locations) plus the checks that need the project around the file.
import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import * as jsonc from 'jsonc-parser';
import { WhaleConfigSchema } from '../../core/config.js';
import { InputError } from '../../core/errors.js';
import { lineColumn, parseJsonWithSchema } from '../../core/jsonFile.js';
import { listDomains } from '../../domains/index.js';

export interface ConfigProblem {
  /** 1-based, as InputError reports them. */
  line: number;
  column: number;
  field?: string;
  message: string;
}

function at(text: string, path: (string | number)[]): { line: number; column: number } {
  const root = jsonc.parseTree(text);
  const node = root && jsonc.findNodeAtLocation(root, path);
  return lineColumn(text, node ? node.offset : 0);
}

export function configProblems(text: string, file: string): ConfigProblem[] {
  let config;
  try {
    config = parseJsonWithSchema(text, file, WhaleConfigSchema);
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    return e.all.map((x) => ({
      line: x.location.line ?? 1,
      column: x.location.column ?? 1,
      ...(x.location.field ? { field: x.location.field } : {}),
      message: x.detail,
    }));
  }
  const problems: ConfigProblem[] = [];
  const root = dirname(file);
  const known = listDomains().map((d) => d.id);
  // Only names and files are checked here: a domain module is code and is never loaded by the editor.
  const id = config.domain.id;
  if (id !== undefined && !known.includes(id))
    problems.push({
      ...at(text, ['domain', 'id']),
      field: 'domain.id',
      message: `unknown domain '${id}' (known domains: ${known.join(', ')}); for your own use "module" or "data"`,
    });
  if (config.domain.module !== undefined && !existsSync(resolve(root, config.domain.module)))
    problems.push({ ...at(text, ['domain', 'module']), field: 'domain.module', message: `no domain module at ${resolve(root, config.domain.module)}` });
  const data = config.domain.data;
  if (typeof data === 'string' && !existsSync(resolve(root, data)))
    problems.push({ ...at(text, ['domain', 'data']), field: 'domain.data', message: `no data domain file at ${resolve(root, data)}` });
  const files = data && typeof data === 'object' ? (typeof data.tasks === 'string' ? { tasks: data.tasks } : data.tasks) : {};
  for (const [k, f] of Object.entries(files)) {
    if (f !== undefined && !existsSync(resolve(root, f)))
      problems.push({
        ...at(text, ['domain', 'data', 'tasks', ...(k === 'tasks' ? [] : [k])]),
        field: `domain.data.tasks${k === 'tasks' ? '' : `.${k}`}`,
        message: `no tasks file at ${resolve(root, f)}`,
      });
  }
  const harness = resolve(root, config.harness);
  if (!existsSync(harness) || !statSync(harness).isDirectory())
    problems.push({ ...at(text, ['harness']), field: 'harness', message: `no harness folder at ${harness}` });
  else if (!existsSync(resolve(harness, 'harness.json')))
    problems.push({ ...at(text, ['harness']), field: 'harness', message: `${harness} has no harness.json` });
  return problems;
}
