/**
 * What a `defineDomain` definition means to the engine: options parsed, tasks loaded once and
 * checked, every function wrapped so that its failures name the module, the task and the field.
 * The built-in domains and users' modules go through here alike.
 */
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { InfraError, InputError, WhaleError } from '../core/errors.js';
import type { Verdict } from '../core/trajectory.js';
import { assignSplit, lazySplits } from './common.js';
import { readTableFile } from './data/tableFile.js';
import { DEFAULT_COMMAND_TIMEOUT_MS, runCommandVerifier } from './verifiers/command.js';
import type { DefinedDomain, DomainContext as SdkContext, DomainDefinition, OptionsSchema, TaskInput, TaskSet, VerdictInput } from './sdk.js';
import { SPLITS, type Domain, type Json, type RolloutRecord, type Split, type Task, type ToolSpec } from './types.js';

/** How a domain's tasks are split when a flat list does not say (user domains; the built-ins give splits). */
export const DEFAULT_SPLIT_WEIGHTS: Record<Split, number> = { weight: 60, harness: 15, val: 15, test: 10 };

export interface MaterialiseContext {
  /** Where the definition lives, for messages: the module file, or 'built-in kbqa'. */
  origin: string;
  /** Folder of the module (h0 and command verifiers resolve against it). */
  moduleDir: string;
  /** The project folder. */
  baseDir?: string;
  secret?: string;
  /** Skip loading the tasks (a worker that only verifies). */
  skipTasks?: boolean;
  /** The config file, named by options errors (default whale.config.json). */
  configFile?: string;
}

/** Parses options with a zod-like schema or a function; a failure is an InputError naming `domain.options.<field>`. */
export function parseDomainOptions<O>(schema: OptionsSchema<O> | undefined, raw: unknown, where: { file: string; domainId: string }): O {
  const value = raw ?? {};
  if (!schema) return value as O;
  if (typeof schema === 'function') {
    try {
      return schema(value);
    } catch (e) {
      // A parser that already names the field (a built-in's) keeps it; the file is the config's.
      if (e instanceof InputError && e.location.field?.startsWith('domain.options'))
        throw new InputError({ file: where.file, field: e.location.field }, e.detail);
      throw new InputError({ file: where.file, field: 'domain.options' }, `${(e as Error).message ?? String(e)} (options of domain '${where.domainId}')`);
    }
  }
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const field = ['domain', 'options', ...issue.path.map(String)].join('.');
  throw new InputError({ file: where.file, field }, `${issue.message} (options of domain '${where.domainId}')`);
}

function verdictOf(v: boolean | number | VerdictInput, where: string): Verdict {
  if (typeof v === 'boolean') return { pass: v, score: v ? 1 : 0, extracted: null, reason: v ? 'correct' : 'incorrect' };
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new WhaleError(`${where} returned the score ${v}, not a finite number`);
    return { pass: v >= 1, score: v, extracted: null, reason: `score ${v}` };
  }
  if (!v || typeof v !== 'object' || typeof v.pass !== 'boolean')
    throw new WhaleError(`${where} returned ${JSON.stringify(v)}: expected a boolean, a score or {pass, score?, extracted?, reason?}`);
  if (v.score !== undefined && (typeof v.score !== 'number' || !Number.isFinite(v.score)))
    throw new WhaleError(`${where} returned a verdict whose score is not a finite number`);
  return {
    pass: v.pass,
    score: v.score ?? (v.pass ? 1 : 0),
    extracted: typeof v.extracted === 'string' ? v.extracted : null,
    reason: typeof v.reason === 'string' && v.reason !== '' ? v.reason : v.pass ? 'correct' : 'incorrect',
  };
}

/** ' (at FILE:LINE:COL)' when the stack names the file `where` starts with (the user's module). */
function atLine(e: unknown, where: string): string {
  const file = where.split(': ')[0];
  const line = path.isAbsolute(file) ? lineIn(e, file) : '';
  return line ? ` (at ${path.basename(file)}${line})` : '';
}

/** Any error a domain function threw, as one that names where it came from (InfraError keeps its class so the runtime sees it). */
function named(e: unknown, where: string, infraSource?: 'tool' | 'verifier'): Error {
  const message = e instanceof Error ? e.message : String(e);
  if (e instanceof InfraError) return new InfraError(e.source, `${where}: ${message}`);
  // The SDK's own InfraError (a copy of sdk.ts bundled into the user's module) is recognised by name.
  if (e instanceof Error && e.name === 'InfraError')
    return new InfraError((e as { source?: string }).source === 'verifier' ? 'verifier' : (infraSource ?? 'tool'), `${where}: ${message}`);
  if (e instanceof InputError) return e;
  return new WhaleError(`${where}: ${message}${atLine(e, where)}`, 'domain');
}

const TASK_KEYS = ['id', 'question', 'meta', 'private', 'split'];

/**
 * A tool's failure: an infrastructure one names the module and task (it is reported); any other is
 * the tool's answer to the harness (bad arguments…), which the model reads — so it keeps the tool's
 * own words, without this machine's paths.
 */
function toolError(e: unknown, where: string): Error {
  if (e instanceof InfraError || (e instanceof Error && e.name === 'InfraError')) return named(e, where, 'tool');
  return new Error(e instanceof Error ? e.message : String(e));
}

/** Turns what `tasks()` returned into Task objects per split; a malformed task is an InputError naming the task and field. */
export function splitTasks(set: TaskSet<unknown>, where: { file: string; domainId: string }): (split: Split) => Task[] {
  const seen = new Map<string, Split>();
  const check = (t: TaskInput<unknown>, field: string, split: Split | undefined): Task => {
    const bad = (f: string, msg: string): never => {
      throw new InputError({ file: where.file, field: `${field}.${f}` }, `${msg}${typeof t?.id === 'string' ? ` (task '${t.id}')` : ''}`);
    };
    if (!t || typeof t !== 'object') throw new InputError({ file: where.file, field }, 'a task must be an object {id, question, meta?, private?, split?}');
    if (typeof t.id !== 'string' || t.id.trim() === '') bad('id', 'must be a non-empty string');
    for (const k of Object.keys(t))
      if (!TASK_KEYS.includes(k)) bad(k, `is not a task field (known: ${TASK_KEYS.join(', ')}; put your own data in private or meta)`);
    if (typeof t.question !== 'string' || t.question.trim() === '') bad('question', 'must be a non-empty string');
    if (t.meta !== undefined && (typeof t.meta !== 'object' || t.meta === null || Array.isArray(t.meta))) bad('meta', 'must be an object');
    const s = split ?? t.split ?? assignSplit(t.id, DEFAULT_SPLIT_WEIGHTS);
    if (!SPLITS.includes(s)) bad('split', `must be one of ${SPLITS.join(', ')}`);
    if (split && t.split && t.split !== split) bad('split', `says '${t.split}' but the task is listed under '${split}'`);
    const before = seen.get(t.id);
    if (before) bad('id', `duplicate task id '${t.id}' (also in split ${before})`);
    seen.set(t.id, s);
    return {
      id: t.id,
      split: s,
      public: { id: t.id, question: t.question, ...(t.meta !== undefined ? { meta: t.meta } : {}) },
      private: (t.private ?? null) as Json,
    };
  };
  if (Array.isArray(set)) {
    const out: Record<Split, Task[]> = { weight: [], harness: [], val: [], test: [] };
    set.forEach((t, i) => {
      const task = check(t, `tasks[${i}]`, undefined);
      out[task.split].push(task);
    });
    return (s) => out[s];
  }
  if (!set || typeof set !== 'object')
    throw new InputError({ file: where.file, field: 'tasks' }, 'tasks() must return a list of tasks or {weight, harness, val, test} lists');
  for (const k of Object.keys(set))
    if (!SPLITS.includes(k as Split)) throw new InputError({ file: where.file, field: `tasks.${k}` }, `unknown split '${k}' (known: ${SPLITS.join(', ')})`);
  return lazySplits((s) => {
    const given = set[s];
    const list = typeof given === 'function' ? given() : (given ?? []);
    if (!Array.isArray(list)) throw new InputError({ file: where.file, field: `tasks.${s}` }, 'must be a list of tasks');
    return list.map((t, i) => check(t, `tasks.${s}[${i}]`, s));
  });
}

export function sdkContext<O>(options: O, ctx: MaterialiseContext): SdkContext<O> {
  const baseDir = ctx.baseDir ?? process.cwd();
  return {
    options,
    baseDir,
    moduleDir: ctx.moduleDir,
    ...(ctx.secret !== undefined ? { secret: ctx.secret } : {}),
    readTable: (file, opts) => readTableFile(file, { baseDir, ...(opts?.format ? { format: opts.format } : {}) }),
  };
}

/** `private.answer`, or the first of `private.answers`, when the task has one. */
export function defaultGold(task: Task): string | null {
  const p = task.private as { answer?: unknown; answers?: unknown } | null;
  if (p && typeof p === 'object') {
    if (typeof p.answer === 'string' || typeof p.answer === 'number') return String(p.answer);
    if (Array.isArray(p.answers) && (typeof p.answers[0] === 'string' || typeof p.answers[0] === 'number')) return String(p.answers[0]);
  }
  return null;
}

/** Calls `fn`, keeping it synchronous when it is; a throw (or rejection) goes through `onError`. */
function guarded<T, R>(fn: () => T | Promise<T>, then: (v: T) => R, onError: (e: unknown) => Error): R | Promise<R> {
  let v: T | Promise<T>;
  try {
    v = fn();
  } catch (e) {
    throw onError(e);
  }
  if (v instanceof Promise) return v.then(then, (e: unknown) => Promise.reject(onError(e)));
  return then(v);
}

/** A definition as a Domain: options parsed, tasks loaded once (unless skipped), functions wrapped. */
export async function materialise<O, P>(def: DefinedDomain<O, P> | DomainDefinition<O, P>, rawOptions: unknown, ctx: MaterialiseContext): Promise<Domain> {
  const options = parseDomainOptions(def.options, rawOptions, { file: ctx.configFile ?? 'whale.config.json', domainId: def.id });
  const sctx = sdkContext(options, ctx);
  let set: TaskSet<P> = [];
  if (!ctx.skipTasks) {
    try {
      set = await def.tasks(sctx);
    } catch (e) {
      throw tasksError(e, def.id, ctx);
    }
  }
  return assemble(def, sctx, set, ctx);
}

/** The same, for a definition whose tasks() is synchronous (getDomain's callers). */
export function materialiseSync<O, P>(def: DefinedDomain<O, P> | DomainDefinition<O, P>, rawOptions: unknown, ctx: MaterialiseContext): Domain {
  const options = parseDomainOptions(def.options, rawOptions, { file: ctx.configFile ?? 'whale.config.json', domainId: def.id });
  const sctx = sdkContext(options, ctx);
  let set: TaskSet<P> | Promise<TaskSet<P>>;
  try {
    set = def.tasks(sctx);
  } catch (e) {
    throw tasksError(e, def.id, ctx);
  }
  if (set instanceof Promise) throw new WhaleError(`domain '${def.id}' loads asynchronously: use loadDomain`);
  return assemble(def, sctx, set, ctx);
}

function tasksError(e: unknown, id: string, ctx: MaterialiseContext): Error {
  return e instanceof InputError
    ? e
    : new WhaleError(`${ctx.origin}${lineIn(e, ctx.origin)}: tasks() of domain '${id}' threw: ${e instanceof Error ? e.message : String(e)}`, 'domain');
}

/** ':LINE:COL' of the innermost stack frame in `file` (the user's module), or ''. */
export function lineIn(e: unknown, file: string): string {
  const stack = e instanceof Error ? (e.stack ?? '') : '';
  const at = stack.split('\n').find((l) => l.includes(file + ':'));
  const m = at ? /:(\d+):(\d+)\)?\s*$/.exec(at) : null;
  return m ? `:${m[1]}:${m[2]}` : '';
}

function assemble<O, P>(def: DomainDefinition<O, P>, sctx: SdkContext<O>, set: TaskSet<P>, ctx: MaterialiseContext): Domain {
  const tasks = splitTasks(set as TaskSet<unknown>, { file: ctx.origin, domainId: def.id });
  const limits = typeof def.limits === 'function' ? def.limits(sctx) : (def.limits ?? {});
  const searchSpace = typeof def.searchSpace === 'function' ? def.searchSpace(sctx) : def.searchSpace;
  type SdkTask = Parameters<NonNullable<DomainDefinition<O, P>['checkRules']>>[0];
  type SdkRollout = Parameters<NonNullable<DomainDefinition<O, P>['checkRules']>>[1];
  const pub = (t: Task) => t as unknown as SdkTask;
  const view = (r: RolloutRecord) => r as unknown as SdkRollout;
  const tools: ToolSpec[] = (def.tools ?? []).map((t) => ({
    name: t.name,
    description: t.description,
    parameters: t.parameters,
    call: (args, task) =>
      guarded(
        () => t.call(args, pub(task), sctx),
        (v) => v,
        (e) => toolError(e, `${ctx.origin}: tool '${t.name}' (task '${task.id}')`),
      ),
  }));
  const verifier = def.verify;
  const verify: Domain['verify'] =
    typeof verifier === 'function'
      ? (task, rollout) => {
          const at = `${ctx.origin}: verify (task '${task.id}')`;
          return guarded(
            () => verifier(pub(task), view(rollout), sctx),
            (v) => verdictOf(v, at),
            (e) => named(e, at, 'verifier'),
          );
        }
      : (task, rollout) => runCommandVerifier(verifier, task, rollout, { cwd: ctx.moduleDir, origin: ctx.origin });
  const domain: Domain = {
    id: def.id,
    title: def.title,
    description: def.description,
    regime: def.regime ?? 'unknown',
    get splitSizes() {
      return { weight: tasks('weight').length, harness: tasks('harness').length, val: tasks('val').length, test: tasks('test').length };
    },
    tasks,
    tools,
    verify,
    // A command verifier times itself out (and kills its process); the runtime's deadline is a backstop past it.
    limits: {
      ...limits,
      ...(typeof verifier !== 'function' && limits.verifierTimeoutMs === undefined
        ? { verifierTimeoutMs: (verifier.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS) + 2000 }
        : {}),
    },
    h0Dir: path.resolve(ctx.moduleDir, def.h0),
    searchSpace,
  };
  // Found now, not when `whale init` or a run first needs the initial harness.
  if (!existsSync(path.join(domain.h0Dir, 'harness.json')))
    throw new InputError({ file: ctx.origin, field: 'h0' }, `${domain.h0Dir} is not a harness folder (no harness.json there)`);
  const rules = def.checkRules;
  if (rules) {
    domain.checkRules = (task, rollout) =>
      guarded(
        () => rules(pub(task), view(rollout), sctx),
        (v) => v ?? null,
        (e) => named(e, `${ctx.origin}: checkRules (task '${task.id}')`, 'verifier'),
      );
  }
  const gold = def.gold;
  domain.gold = (task) =>
    gold
      ? guarded(
          () => gold(pub(task), sctx),
          (v) => (typeof v === 'string' ? v : null),
          (e) => named(e, `${ctx.origin}: gold (task '${task.id}')`),
        )
      : defaultGold(task);
  const diag = def.diagnostics;
  if (diag) {
    domain.diagnostics = (task, rollout) =>
      guarded(
        () => diag(pub(task), rollout as unknown as Parameters<typeof diag>[1], sctx),
        (v) => v,
        (e) => named(e, `${ctx.origin}: diagnostics (task '${task.id}')`),
      );
  }
  return domain;
}
