import { z } from 'zod';
import { InputError } from '../core/errors.js';
import { Rng, hashSeed } from '../core/rng.js';
import {
  BuiltinDomainOptions,
  type DomainContext,
  TaskRowBase,
  answerFromModelRule,
  assignSplit,
  effectiveSizes,
  exactMatchVerdict,
  groupBySplit,
  harnessDir,
  loadTaskLines,
  splitSeed,
  generatedTaskId,
} from './common.js';
import { type Fact, KBQA_FEEDBACK, KBQA_INSTRUCTIONS, kbqaQuestion, normaliseAnswer, observationText } from './text.js';
import { materialiseSync } from './definition.js';
import { defineDomain, type TaskInput } from './sdk.js';
import type { Domain, Json, Split, Task, ToolSpec } from './types.js';
import { ATTRIBUTES, ENTITY_ATTRIBUTES, NAMES, VALUES, VALUE_ATTRIBUTES, type ValueAttribute } from './vocab.js';

export const KBQA_ID = 'kbqa';
export const KBQA_SIZES: Record<Split, number> = { weight: 4096, harness: 256, val: 256, test: 512 };
/** Entities in a task's knowledge base, facts per entity, and the most facts one search returns. */
export const KB_ENTITIES = 6;
export const FACTS_PER_ENTITY = 3;
export const MAX_K = 5;
/** How often a distractor is ranked among an entity's own facts (so top-3 misses one ≈ 10% of the time). */
export const DISTRACTOR_INTRUSION = 0.3;

/** What task.private holds for kbqa. */
export interface KbqaPrivate {
  answer: string;
  facts: Fact[];
  hops: number;
}

/** A fresh knowledge base and the 1- or 2-hop question drawn over it (kbqa's and kbchain's). */
interface KbDraw {
  facts: Fact[];
  answer: string;
  hops: 1 | 2;
  /** The attribute asked about, of `target`. */
  asked: ValueAttribute;
  start: string;
  relation: (typeof ENTITY_ATTRIBUTES)[number] | undefined;
  target: string;
}

/** Draws `entities` entities with `factsPerEntity` distinct attributes each (the needed ones forced in), values from `values`. */
export function drawKb(rng: Rng, entities: number, factsPerEntity: number, values: Readonly<Record<ValueAttribute, readonly string[]>>): KbDraw {
  const names = rng.sample(NAMES, entities);
  const hops = rng.chance(0.5) ? 2 : 1;
  const asked = rng.pick(VALUE_ATTRIBUTES);
  const relation = hops === 2 ? rng.pick(ENTITY_ATTRIBUTES) : undefined;
  const [start, second] = names;
  const target = hops === 2 ? second : start;
  const attrsOf = new Map<string, string[]>();
  for (const n of names) {
    const forced: string[] = [];
    if (n === start && relation) forced.push(relation);
    if (n === target) forced.push(asked);
    const rest = rng.shuffle(ATTRIBUTES.filter((a) => !forced.includes(a)));
    attrsOf.set(n, [...forced, ...rest].slice(0, factsPerEntity));
  }
  const facts: Fact[] = [];
  let answer = '';
  for (const n of names) {
    for (const a of attrsOf.get(n)!) {
      let v: string;
      if (n === start && a === relation) v = second;
      else if ((ENTITY_ATTRIBUTES as readonly string[]).includes(a)) v = rng.pick(names.filter((m) => m !== n));
      else v = rng.pick(values[a as ValueAttribute]);
      if (n === target && a === asked) answer = v;
      facts.push([n, a, v]);
    }
  }
  rng.shuffle(facts);
  return { facts, answer, hops, asked, start, relation, target };
}

/** A fresh random knowledge base and a 1- or 2-hop question over it. */
export function generateKbqaTask(rng: Rng, id: string, split: Split): Task {
  // Attributes per entity: 3 distinct of the 6, the needed ones forced in.
  const { facts, answer, hops, asked, start, relation } = drawKb(rng, KB_ENTITIES, FACTS_PER_ENTITY, VALUES);
  const question = kbqaQuestion(asked, start, relation);
  const priv: KbqaPrivate = { answer, facts, hops };
  return { id, split, public: { id, question, meta: { hops } }, private: priv as unknown as Json };
}

/**
 * The search tool's ranking: the queried entity's own facts in an order fixed per (task, entity) —
 * so the top-1 passage is the needed fact about one time in three — then facts that mention the
 * entity, then other facts; sometimes a distractor intrudes among the first three. A query that also
 * names an attribute ranks that attribute's fact first (query rewriting is a harness lever).
 * `offset` pages through the same ranking (a repeated search can ask for the next page).
 */
export function searchFacts(taskId: string, facts: Fact[], query: string, k: number, offset = 0): Fact[] {
  const words = query.split(/[\s.,:?;!"'()]+/).filter((w) => w !== '');
  const lower = new Set(words.map((w) => w.toLowerCase()));
  const entities = new Set(facts.map((f) => f[0]));
  const entity = words.find((w) => entities.has(w)) ?? [...entities].find((e) => lower.has(e.toLowerCase()));
  if (!entity) return [];
  const rng = new Rng(hashSeed(`kbqa:rank:${taskId}:${entity}`));
  const own = rng.shuffle(facts.filter((f) => f[0] === entity));
  const mentions = rng.shuffle(facts.filter((f) => f[0] !== entity && f[2] === entity));
  const others = rng.shuffle(facts.filter((f) => f[0] !== entity && f[2] !== entity));
  const ranked = [...own, ...mentions, ...others];
  if (own.length > 0 && ranked.length > own.length && rng.chance(DISTRACTOR_INTRUSION)) {
    const [d] = ranked.splice(own.length, 1);
    ranked.splice(rng.int(Math.min(3, own.length)), 0, d);
  }
  const boosted = ATTRIBUTES.filter((a) => lower.has(a));
  if (boosted.length > 0) {
    const first = ranked.filter((f) => f[0] === entity && boosted.includes(f[1]));
    const rest = ranked.filter((f) => !(f[0] === entity && boosted.includes(f[1])));
    ranked.splice(0, ranked.length, ...first, ...rest);
  }
  const kk = Math.max(1, Math.min(MAX_K, Math.floor(k)));
  const off = Math.max(0, Math.floor(offset));
  return ranked.slice(off, off + kk);
}

function kbqaPrivate(task: Task): KbqaPrivate {
  return task.private as unknown as KbqaPrivate;
}

export const SEARCH_TOOL_DESCRIPTION =
  'search(query, k = 1, offset = 0): up to k facts (k at most 5) about the entity named in the query, one `subject attribute value` line each, best first; `no facts` when the query names no known entity. Ranking is imperfect; a query that also names an attribute ranks that fact first; offset pages through the ranking.';

export const searchTool: ToolSpec = {
  name: 'search',
  description: SEARCH_TOOL_DESCRIPTION,
  parameters: {
    type: 'object',
    properties: {
      query: { type: 'string', description: 'text naming an entity (and optionally an attribute)' },
      k: { type: 'integer', minimum: 1, maximum: MAX_K, default: 1 },
      offset: { type: 'integer', minimum: 0, default: 0 },
    },
    required: ['query'],
    additionalProperties: false,
  },
  call(args: unknown, task: Task): string {
    const a = (args ?? {}) as { query?: unknown; k?: unknown; offset?: unknown };
    if (typeof a.query !== 'string' || a.query.trim() === '') return 'error: search needs {query: string, k?: integer, offset?: integer}';
    const k = typeof a.k === 'number' && Number.isFinite(a.k) ? a.k : 1;
    const offset = typeof a.offset === 'number' && Number.isFinite(a.offset) ? a.offset : 0;
    return observationText(searchFacts(task.id, kbqaPrivate(task).facts, a.query, k, offset));
  },
};

const KbqaRow = TaskRowBase.extend({
  hops: z.number().int().min(1).optional(),
  /** [subject, attribute, value]; subject and attribute are single words, the value may have spaces. */
  facts: z.array(z.tuple([z.string().regex(/^\S+$/, 'a single word'), z.string().regex(/^\S+$/, 'a single word'), z.string().trim().min(1)])).min(1),
});

function loadKbqaFile(file: string, ctx: DomainContext): Record<Split, Task[]> {
  const { file: abs, rows, lines } = loadTaskLines(file, ctx.baseDir, KbqaRow);
  const tasks = rows.map((r, i): Task => {
    const id = r.id ?? `kbqa-file-${lines[i]}`;
    const split = r.split ?? assignSplit(id, KBQA_SIZES);
    const facts = r.facts.map((f) => [f[0], f[1], f[2].replace(/\s+/g, ' ')] as Fact);
    const priv: KbqaPrivate = { answer: r.answer, facts, hops: r.hops ?? 1 };
    if (!facts.some((f) => normaliseAnswer(f[2]) === normaliseAnswer(r.answer)))
      throw new InputError({ file: abs, line: lines[i], field: 'answer' }, `answer '${r.answer}' is not the value of any of the task's facts`);
    return { id, split, public: { id, question: r.question, meta: { hops: priv.hops } }, private: priv as unknown as Json };
  });
  return groupBySplit(KBQA_ID, abs, tasks, lines);
}

export const KBQA_SEARCH_SPACE = `kbqa: multi-hop questions over a small knowledge base that is fresh per task, reachable only through the \`search\` tool.
The model is a tiny word-level transformer pretrained on transcripts produced by exactly the shipped harness code
(resources/harnesses/kbqa-h0/harness.ts) under every knob setting; text shapes outside those are out of distribution.
Actions the model writes: \`search NAME\` and \`answer VALUE\` (one word each).
Knobs of the h0 harness (harness.json):
  instruction   'prompt' (prompts.system, empty = no system message) | 'short' | 'full'. Known texts:
                short = "${KBQA_INSTRUCTIONS.short}"
                full  = "${KBQA_INSTRUCTIONS.full}"
                Without an instruction the model often answers from its prior without searching.
  topk          1..5 facts per search (the needed fact is top-1 about one time in three).
  maxSearches   1..4 (2-hop questions need 2 searches); a repeated query pages to the next facts.
  passageFormat plain "Lodos pet eel ." | numbered "1 : Lodos pet eel ." | sentence "the pet of Lodos is eel ."
  parse         strict (the whole reply is the action) | lenient (first keyword anywhere, or one bare word).
  formatRetries 0..2 feedback turns ("${KBQA_FEEDBACK.format}" / "${KBQA_FEEDBACK.noSearchLeft}").
  requireSearch answer before any search gets "${KBQA_FEEDBACK.searchFirst}".
Sampling (temperature, top_p) is the run config's: the gateway enforces it whatever a harness asks.
Code may also: rewrite queries (a query naming an attribute, e.g. "Lodos pet", ranks that fact first), filter or reorder the
passages shown, add turns. Limits: 6 model calls, 24 completion tokens per call. Rule: the final answer must be words the
model wrote in one of its completions, and no message may contain chat-template markers ("<|").`;

function inputsOf(tasks: Task[]): TaskInput<KbqaPrivate>[] {
  return tasks.map((t) => ({
    id: t.id,
    question: t.public.question,
    ...(t.public.meta ? { meta: t.public.meta } : {}),
    private: t.private as unknown as KbqaPrivate,
  }));
}

/** kbqa as a `defineDomain` definition: the same contract a user's domain module uses. */
export const kbqaDefinition = defineDomain<BuiltinDomainOptions, KbqaPrivate>({
  id: KBQA_ID,
  title: 'kbqa — multi-hop questions over a fresh knowledge base',
  description:
    '1- and 2-hop questions ("What is the pet of the friend of Lodos ?") over a per-task knowledge base reached through an imperfect search tool. Harness-dominated: instruction, top-k, search budget and parsing decide most of the success.',
  summary: '1- and 2-hop questions answered through an imperfect search tool; the harness decides most of the success.',
  regime: 'harness-dominated',
  options: BuiltinDomainOptions,
  tasks({ options, baseDir, secret }) {
    if (options.tasksFile) {
      const fromFile = loadKbqaFile(options.tasksFile, { baseDir });
      return { weight: inputsOf(fromFile.weight), harness: inputsOf(fromFile.harness), val: inputsOf(fromFile.val), test: inputsOf(fromFile.test) };
    }
    const sizes = effectiveSizes(KBQA_SIZES, options);
    const gen = (split: Split) => () =>
      inputsOf(
        Array.from({ length: sizes[split] }, (_, i) =>
          generateKbqaTask(new Rng(splitSeed(KBQA_ID, split, i, secret)), generatedTaskId(KBQA_ID, split, i, secret), split),
        ),
      );
    return { weight: gen('weight'), harness: gen('harness'), val: gen('val'), test: gen('test') };
  },
  tools: [{ ...searchTool, call: (args, task) => searchTool.call(args, task as unknown as Task) }],
  verify: (task, rollout) => exactMatchVerdict(task.private.answer, rollout.finalAnswer),
  checkRules: (_task, rollout) => answerFromModelRule(rollout),
  limits: { maxTurns: 6, maxTokensPerCall: 24 },
  h0: harnessDir('kbqa-h0'),
  searchSpace: KBQA_SEARCH_SPACE,
});

export function createKbqaDomain(opts: BuiltinDomainOptions = {}, ctx: DomainContext = {}): Domain {
  return materialiseSync(kbqaDefinition, opts, { origin: 'built-in domain kbqa', moduleDir: harnessDir('kbqa-h0'), ...ctx });
}
