/**
 * The domain SDK: what a user's domain module imports as `whale/domain`. A module's default export is
 *
 *   import { defineDomain } from 'whale/domain';
 *   export default defineDomain({
 *     id: 'my-task', title: 'My task', description: '…',
 *     async tasks(ctx) { return [{ id: 't1', question: '…', private: { answer: '42' } }]; },
 *     verify(task, rollout) { return rollout.finalAnswer?.trim() === task.private.answer; },
 *     h0: './h0', searchSpace: 'what a proposer may change …',
 *   });
 *
 * This file is self-contained (it imports nothing) because it is copied beside the CLI bundle as
 * `whale-domain-sdk.ts` and bundled into the user's module: what a definition means — loading the
 * tasks once, checking them, calling the verifier — is done by the engine (domains/definition.ts),
 * which the built-in domains go through as well.
 */

export type Split = 'weight' | 'harness' | 'val' | 'test';
export type Regime = 'harness-dominated' | 'weight-dominated' | 'mixed' | 'unknown';
export type Json = string | number | boolean | null | Json[] | { [k: string]: Json };

/** One task as a domain writes it. `private` never reaches a harness; only tools, verifier, rules and diagnostics read it. */
export interface TaskInput<P = Json> {
  id: string;
  /** The task text as a user would pose it (what the harness gets). */
  question: string;
  /** Public extra fields a harness may read (e.g. a hop count, a data source). */
  meta?: { [k: string]: Json };
  /** Answers, the per-task environment, verifier data. */
  private?: P;
  /** Where the task goes when `tasks()` returns a flat list; without it a stable hash of the id decides. */
  split?: Split;
}

/** What `tasks()` returns: tasks per split (a split may be a thunk, generated when first asked for), or one flat list. */
export type TaskSet<P = Json> = TaskInput<P>[] | Partial<Record<Split, TaskInput<P>[] | (() => TaskInput<P>[])>>;

/** A task as the engine holds it and hands it to tools, verifier, rules and diagnostics. */
export interface DomainTask<P = Json> {
  id: string;
  split: Split;
  public: { id: string; question: string; meta?: { [k: string]: Json } };
  private: P;
}

export interface RolloutView {
  /** The harness's final answer, or null when it gave up. */
  finalAnswer: string | null;
  /** Every model call: the messages as sent and the completion text (plus usage, finish reason, token ids when known). */
  modelCalls: {
    messages: { role: string; content: string }[];
    completion: string;
    finishReason: string;
    usage: { promptTokens: number; completionTokens: number };
  }[];
  /** Harness events: tool calls with arguments and observations, logs, errors. */
  events: { t: number; type: string; name?: string; args?: unknown; observation?: string; message?: string }[];
}

export interface VerdictInput {
  pass: boolean;
  /** Default 1 when passed, else 0. */
  score?: number;
  /** The answer the verifier read out of the final answer. */
  extracted?: string | null;
  reason?: string;
}

/** A verifier run as a command in any language: the rollout as JSON on stdin, a verdict JSON on stdout. */
export interface CommandVerifier {
  kind: 'command';
  /** argv; the first element is looked up on PATH; runs in the module's folder. */
  command: string[];
  timeoutMs?: number;
}

export interface DomainLimits {
  maxTokensPerCall?: number;
  maxTurns?: number;
  maxAssistantTokens?: number;
  verifierTimeoutMs?: number;
}

export type Diagnostics = Record<string, number | boolean | string | null>;

/** What a domain's functions receive besides the task: its parsed options and a few engine helpers. */
export interface DomainContext<O> {
  options: O;
  /** The project folder (where whale.config.json is): relative data paths resolve against it. */
  baseDir: string;
  /** The module's own folder. */
  moduleDir: string;
  /** A per-project secret: mix it into generated tasks so none can be re-derived from its public id. */
  secret?: string;
  /** Reads a JSONL / JSON / CSV / Parquet file into rows that remember their line (a bad file is an input error naming it). */
  readTable(
    file: string,
    opts?: { format?: 'jsonl' | 'json' | 'csv' | 'parquet' },
  ): Promise<{ file: string; rows: { row: Record<string, unknown>; line: number }[] }>;
}

export interface ToolDefinition<P = Json, O = unknown> {
  name: string;
  description: string;
  /** JSON schema of the arguments object. */
  parameters: { [k: string]: Json };
  /** Runs in the engine with the task's private data; returns the observation text. Throw `InfraError` when its service is down. */
  call(args: unknown, task: DomainTask<P>, ctx: DomainContext<O>): string | Promise<string>;
}

/** Anything with zod's `safeParse` (zod 3 or 4, valibot adapters…), or a function that returns the options or throws. */
export type OptionsSchema<O> =
  | { safeParse(v: unknown): { success: true; data: O } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } } }
  | ((raw: unknown) => O);

export interface DomainDefinition<O = Record<string, unknown>, P = Json> {
  /** Lower-case letters, digits, '-' and '_': names the domain in trajectories and reports. */
  id: string;
  title: string;
  description: string;
  /** One line for `whale domains` (default: the description's first sentence). */
  summary?: string;
  regime?: Regime;
  /** Validates `domain.options` from whale.config.json; a failure is reported with the field's path. */
  options?: OptionsSchema<O>;
  /** Loads or generates the tasks; called once when the domain loads (may be async: files, downloads). */
  tasks(ctx: DomainContext<O>): TaskSet<P> | Promise<TaskSet<P>>;
  tools?: ToolDefinition<P, O>[];
  /** The verdict: a boolean, a score in [0, 1] (pass when ≥ 1), or a full verdict; or a command in any language. A throw is an infrastructure failure, not a failed task. */
  verify:
    | ((task: DomainTask<P>, rollout: RolloutView, ctx: DomainContext<O>) => boolean | number | VerdictInput | Promise<boolean | number | VerdictInput>)
    | CommandVerifier;
  /** A rule the rollout broke (the answer did not come from the model, an illegal move…), or null. */
  checkRules?(task: DomainTask<P>, rollout: RolloutView, ctx: DomainContext<O>): string | null | Promise<string | null>;
  /** The answer a correct rollout gives (`whale domain check` verifies that it passes); default: `private.answer`, or the first of `private.answers`. */
  gold?(task: DomainTask<P>, ctx: DomainContext<O>): string | null | Promise<string | null>;
  /** Per-rollout numbers or flags the report aggregates (retrieval hit, format error…). */
  diagnostics?(task: DomainTask<P>, rollout: RolloutView & { termination: string }, ctx: DomainContext<O>): Diagnostics | Promise<Diagnostics>;
  limits?: DomainLimits | ((ctx: DomainContext<O>) => DomainLimits);
  /** The initial harness h0: a folder relative to the module (or absolute). */
  h0: string;
  /** What a proposer may change and what it may not (plain text). */
  searchSpace: string | ((ctx: DomainContext<O>) => string);
}

export const DOMAIN_BRAND = 'whale.domain/v1';

/** A checked definition; the engine recognises it by `kind`, whichever copy of this file made it. */
export type DefinedDomain<O = Record<string, unknown>, P = Json> = DomainDefinition<O, P> & { readonly kind: typeof DOMAIN_BRAND };

const ID = /^[a-z0-9][a-z0-9_-]*$/;

/** Checks a definition's shape (so a mistake is reported at the definition, not at the first rollout) and marks it. */
const DEFINITION_KEYS = [
  'id',
  'title',
  'description',
  'summary',
  'regime',
  'options',
  'tasks',
  'tools',
  'verify',
  'checkRules',
  'gold',
  'diagnostics',
  'limits',
  'h0',
  'searchSpace',
];
const LIMIT_KEYS = ['maxTokensPerCall', 'maxTurns', 'maxAssistantTokens', 'verifierTimeoutMs'];

export function defineDomain<O = Record<string, unknown>, P = Json>(def: DomainDefinition<O, P>): DefinedDomain<O, P> {
  const bad = (field: string, what: string): never => {
    // `field` lets the engine report it as bad input naming the module and the field.
    throw Object.assign(new TypeError(`defineDomain: ${field} ${what}`), { field, detail: what });
  };
  if (!def || typeof def !== 'object') bad('(definition)', 'must be an object');
  // A misspelt key (limitz, verfiy) would otherwise be ignored in silence: no type checker runs on the bundle.
  for (const k of Object.keys(def)) if (!DEFINITION_KEYS.includes(k)) bad(k, `is not a field of a domain definition (known: ${DEFINITION_KEYS.join(', ')})`);
  if (def.limits !== undefined && typeof def.limits !== 'function') {
    if (!def.limits || typeof def.limits !== 'object') bad('limits', 'must be an object or a function of the context');
    for (const [k, n] of Object.entries(def.limits)) {
      if (!LIMIT_KEYS.includes(k)) bad(`limits.${k}`, `is not a limit (known: ${LIMIT_KEYS.join(', ')})`);
      if (n !== undefined && (typeof n !== 'number' || !Number.isInteger(n) || n <= 0))
        bad(`limits.${k}`, `must be a positive integer (got ${JSON.stringify(n)})`);
    }
  }
  if (typeof def.id !== 'string' || !ID.test(def.id)) bad('id', `must be lower-case letters, digits, '-' or '_' (got ${JSON.stringify(def.id)})`);
  for (const f of ['title', 'description', 'h0'] as const) if (typeof def[f] !== 'string' || def[f].trim() === '') bad(f, 'must be a non-empty string');
  if (typeof def.searchSpace !== 'string' && typeof def.searchSpace !== 'function') bad('searchSpace', 'must be a string or a function of the context');
  if (typeof def.tasks !== 'function') bad('tasks', 'must be a function returning the tasks (per split, or a list)');
  const v = def.verify as unknown;
  const isCommand = !!v && typeof v === 'object' && (v as CommandVerifier).kind === 'command';
  if (typeof v !== 'function' && !isCommand) bad('verify', "must be a function or { kind: 'command', command: [...] }");
  if (
    isCommand &&
    (!Array.isArray((v as CommandVerifier).command) ||
      (v as CommandVerifier).command.length === 0 ||
      !(v as CommandVerifier).command.every((s) => typeof s === 'string'))
  )
    bad('verify.command', 'must be a non-empty array of strings');
  for (const [i, t] of (def.tools ?? []).entries()) {
    if (!t || typeof t.name !== 'string' || !/^[A-Za-z_][A-Za-z0-9_-]*$/.test(t.name)) bad(`tools[${i}].name`, 'must be an identifier');
    if (typeof t.call !== 'function') bad(`tools[${i}].call`, 'must be a function');
    if (typeof t.description !== 'string') bad(`tools[${i}].description`, 'must be a string');
  }
  if (def.regime !== undefined && !['harness-dominated', 'weight-dominated', 'mixed', 'unknown'].includes(def.regime))
    bad('regime', 'must be harness-dominated, weight-dominated, mixed or unknown');
  return Object.freeze({ ...def, kind: DOMAIN_BRAND });
}

/**
 * Throw from a tool whose service cannot be reached (or from a verifier whose backing service is down):
 * the rollout is recorded as an infrastructure failure — not scored, not cached, not trained on.
 */
export class InfraError extends Error {
  constructor(
    readonly source: 'tool' | 'verifier',
    message: string,
  ) {
    super(message);
    this.name = 'InfraError';
  }
}

export function isDefinedDomain(x: unknown): x is DefinedDomain<unknown, unknown> {
  return !!x && typeof x === 'object' && (x as { kind?: unknown }).kind === DOMAIN_BRAND;
}
