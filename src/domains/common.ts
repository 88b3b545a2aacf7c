import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { InputError, WhaleError } from '../core/errors.js';
import { resourcesDir } from '../core/resources.js';
import { parseJsonLines } from '../core/jsonFile.js';
import { hashSeed } from '../core/rng.js';
import type { Verdict } from '../core/trajectory.js';
import { normaliseAnswer, wordsOf } from './text.js';
import { SPLITS, type Split, type Task } from './types.js';

/** `domain.options.sizes` of the built-in domains: at most this many tasks per split (each optional). */
export const SplitSizes = z
  .object({ weight: z.number().int().positive(), harness: z.number().int().positive(), val: z.number().int().positive(), test: z.number().int().positive() })
  .partial()
  .strict();

/** Options every built-in domain accepts (`domain.options` in whale.config.json). */
export const BuiltinDomainOptions = z
  .object({
    /** JSON-lines file of tasks to use instead of the generator (relative paths resolve against baseDir). */
    tasksFile: z.string().min(1).optional(),
    /** Smaller split sizes (a generated split of size n is the first n tasks of the full split). */
    sizes: SplitSizes.optional(),
  })
  .strict();
export type BuiltinDomainOptions = z.infer<typeof BuiltinDomainOptions>;

export interface DomainContext {
  /** Folder that relative paths in options resolve against (the config file's folder). */
  baseDir?: string;
  /**
   * A per-project secret kept in the run store, never given to a harness. Generated domains mix it
   * into every task seed so that no task can be re-derived from its public id.
   */
  secret?: string;
  /** The workspace is trusted: a domain's own code (a module, a command verifier) may run. */
  trusted?: boolean;
}

/** Validates a domain's options; unknown keys and bad values are InputErrors naming the field. */
export function parseOptions(domainId: string, options: unknown): BuiltinDomainOptions {
  const r = BuiltinDomainOptions.safeParse(options ?? {});
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const field = ['domain', 'options', ...issue.path.map(String)].join('.');
  throw new InputError({ file: 'whale.config.json', field }, `${issue.message} (options of domain '${domainId}': tasksFile, sizes)`);
}

/**
 * Per-split seed: distinct for every (domain, split). With the project's secret (the engine always
 * passes it) it is an HMAC of the secret, so the public generator and a public id re-derive nothing;
 * without one (unit tests, the shipped model's training scripts) it is the fixed public seed.
 */
export function splitSeed(domainId: string, split: Split, index: number, secret?: string): number {
  if (secret === undefined) return hashSeed(`whale:${domainId}:${split}:v1:${index}`);
  return createHmac('sha256', secret).update(`seed:${domainId}:${split}:${index}`).digest().readUInt32BE(0);
}

/** A generated task's public id: its position without a secret, else an HMAC that reveals nothing. */
export function generatedTaskId(domainId: string, split: Split, index: number, secret?: string): string {
  if (secret === undefined) return `${domainId}-${split}-${String(index).padStart(4, '0')}`;
  return `${domainId}-${split}-${createHmac('sha256', secret).update(`id:${domainId}:${split}:${index}`).digest('hex').slice(0, 12)}`;
}

/**
 * MurmurHash3's finaliser. FNV-1a alone leaves ids that differ in their last character (q-1, q-2…)
 * with nearly the same top bits, which put every such task into one split.
 */
function mix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Where a task without a `split` field in a tasks file goes: a stable hash of its id, weighted like the default sizes. */
export function assignSplit(id: string, sizes: Record<Split, number>): Split {
  const total = SPLITS.reduce((a, s) => a + sizes[s], 0);
  let x = (mix32(hashSeed(`whale:split:${id}`)) / 4294967296) * total;
  for (const s of SPLITS) {
    if (x < sizes[s]) return s;
    x -= sizes[s];
  }
  return 'weight';
}

/** Reads a JSON-lines tasks file; a broken line is an InputError naming the file and line. */
export function loadTaskLines<T extends z.ZodType>(
  file: string,
  baseDir: string | undefined,
  schema: T,
): { file: string; rows: z.output<T>[]; lines: number[] } {
  const abs = path.resolve(baseDir ?? process.cwd(), file);
  let text: string;
  try {
    text = readFileSync(abs, 'utf8');
  } catch (e) {
    throw new InputError({ file: abs }, `cannot read tasks file (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
  }
  const rows = parseJsonLines(text, abs, schema);
  if (rows.length === 0) throw new InputError({ file: abs }, 'the tasks file has no tasks');
  // 1-based line of each row (parseJsonLines skips blank lines).
  const lines: number[] = [];
  text.split('\n').forEach((l, i) => {
    if (l.trim() !== '') lines.push(i + 1);
  });
  return { file: abs, rows, lines };
}

/** Fields every tasks-file row may have. */
export const TaskRowBase = z.object({
  id: z.string().min(1).optional(),
  split: z.enum(['weight', 'harness', 'val', 'test']).optional(),
  question: z.string().min(1),
  answer: z.string().min(1),
});

/** Groups loaded tasks into splits; ids must be unique. */
export function groupBySplit(domainId: string, file: string, tasks: Task[], lines: number[]): Record<Split, Task[]> {
  const out: Record<Split, Task[]> = { weight: [], harness: [], val: [], test: [] };
  const seen = new Set<string>();
  for (const [i, t] of tasks.entries()) {
    if (seen.has(t.id)) throw new InputError({ file, line: lines[i], field: 'id' }, `duplicate task id '${t.id}' in the ${domainId} tasks file`);
    seen.add(t.id);
    out[t.split].push(t);
  }
  return out;
}

/** The verifier's verdict for an extracted answer against the expected one; the reason is always filled. */
export function exactMatchVerdict(expected: string, answer: string | null): Verdict {
  if (answer === null) return { pass: false, score: 0, extracted: null, reason: 'no answer' };
  const got = normaliseAnswer(answer);
  if (got === '') return { pass: false, score: 0, extracted: '', reason: 'empty answer' };
  const want = normaliseAnswer(expected);
  if (got === want) return { pass: true, score: 1, extracted: got, reason: 'correct' };
  return { pass: false, score: 0, extracted: got, reason: `expected ${want}, got ${got}` };
}

/** The part of a rollout the text rules read (a RolloutRecord, or the SDK's RolloutView). */
export interface RolloutText {
  finalAnswer: string | null;
  modelCalls: { messages: { role: string; content: string }[]; completion: string }[];
}

/**
 * Domain rule shared by both toy domains: the final answer must be text the model wrote (its words
 * appear, in order, in one completion), and no message sent to the model may contain chat-template
 * markers (`<|…|>`), which would let a harness forge turns inside a message.
 */
export function answerFromModelRule(rollout: RolloutText): string | null {
  for (const call of rollout.modelCalls) {
    for (const m of call.messages) {
      if (m.content.includes('<|')) return `a ${m.role} message sent to the model contains a chat-template marker '<|': harness text may not forge turns`;
    }
  }
  if (rollout.finalAnswer === null) return null;
  const want = wordsOf(rollout.finalAnswer);
  if (want.length === 0) return null;
  for (const call of rollout.modelCalls) {
    const have = wordsOf(call.completion);
    for (let i = 0; i + want.length <= have.length; i++) {
      if (want.every((w, j) => have[i + j] === w)) return null;
    }
  }
  return `the answer '${rollout.finalAnswer}' does not appear in any model completion: the answer must come from the model's own text`;
}

export { resourcesDir };

export function harnessDir(name: string): string {
  return path.join(resourcesDir(), 'harnesses', name);
}

/** Splits with sizes applied (prefixes of the full generated splits). */
export function effectiveSizes(defaults: Record<Split, number>, opts: BuiltinDomainOptions): Record<Split, number> {
  return { ...defaults, ...(opts.sizes ?? {}) };
}

/** Lazily generated, cached splits. */
export function lazySplits(make: (split: Split) => Task[]): (split: Split) => Task[] {
  const cache = new Map<Split, Task[]>();
  return (split) => {
    if (!SPLITS.includes(split)) throw new WhaleError(`unknown split '${String(split)}' (known: ${SPLITS.join(', ')})`, 'split');
    let t = cache.get(split);
    if (!t) {
      t = make(split);
      cache.set(split, t);
    }
    return t;
  };
}
