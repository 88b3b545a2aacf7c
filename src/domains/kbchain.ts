/**
 * kbchain: the toy domain where the weights and the harness bind at once (the paper's regime).
 *
 * 1- and 2-hop questions ("find the pet of the friend of Lodos ?") over a fresh per-task knowledge
 * base behind kbqa's imperfect `search` tool, with only KBCHAIN_VALUES_PER_ATTRIBUTE values per
 * attribute, so a guess is right one time in three. Three bottlenecks, each owned by one side:
 *
 * - rambling (weights only): the pretrained model rambles past the fixed per-call token limit before
 *   half of its actions, in every call, whatever it is told; no harness can raise the limit.
 * - retrieval (harness only): h0 shows the top-1 fact and allows one search; the model's action is
 *   one word, so only the harness decides how many facts and searches a rollout gets.
 * - chaining (weights after harness): after the first hop the model seldom searches the entity it
 *   found (it guesses instead). Under h0 a second search is refused, so RSFT there learns to guess;
 *   only once a harness allows a second search can RSFT reward chaining. A harness may not chain for
 *   the model: every search must name an entity the model wrote (rule).
 */
import { InputError } from '../core/errors.js';
import { Rng } from '../core/rng.js';
import {
  BuiltinDomainOptions,
  type DomainContext,
  answerFromModelRule,
  effectiveSizes,
  exactMatchVerdict,
  harnessDir,
  splitSeed,
  generatedTaskId,
} from './common.js';
import { drawKb, searchTool } from './kbqa.js';
import { type Fact, normaliseAnswer, parseAction } from './text.js';
import { materialiseSync } from './definition.js';
import { defineDomain, type RolloutView, type TaskInput } from './sdk.js';
import type { Diagnostics, Domain, Json, Split, Task } from './types.js';
import { VALUES, VALUE_ATTRIBUTES, type ValueAttribute } from './vocab.js';

export const KBCHAIN_ID = 'kbchain';
const KBCHAIN_SIZES: Record<Split, number> = { weight: 4096, harness: 256, val: 256, test: 512 };
/** Values an attribute can take in kbchain: few, so a guess is right one time in three. */
const KBCHAIN_VALUES_PER_ATTRIBUTE = 3;
const KBCHAIN_ENTITIES = 6;
const KBCHAIN_FACTS_PER_ENTITY = 3;
/** Completion tokens per model call (fixed by the domain: a rambling action is always cut off). */
const KBCHAIN_TOKENS_PER_CALL = 24;
/** Model calls per rollout: a 2-hop answer needs 3 (search, search, answer), so retries are scarce. */
export const KBCHAIN_MAX_TURNS = 4;

export const KBCHAIN_VALUES: Readonly<Record<ValueAttribute, readonly string[]>> = Object.fromEntries(
  VALUE_ATTRIBUTES.map((a) => [a, VALUES[a].slice(0, KBCHAIN_VALUES_PER_ATTRIBUTE)]),
) as unknown as Record<ValueAttribute, readonly string[]>;

/** What task.private holds for kbchain. */
export interface KbchainPrivate {
  answer: string;
  facts: Fact[];
  hops: number;
  /** The entity whose fact answers the question (the subject for 1 hop, the related entity for 2). */
  target: string;
  /** The asked value attribute. */
  attribute: string;
}

/** kbchain's question text (its own shape, so the model can tell it from kbqa's "What is …"). */
function kbchainQuestion(attribute: string, subject: string, relation?: string): string {
  return relation ? `find the ${attribute} of the ${relation} of ${subject} ?` : `find the ${attribute} of ${subject} ?`;
}

/** Parses a kbchain question anywhere in a text. */
export function parseKbchainQuestion(text: string): { attribute: string; relation?: string; subject: string } | null {
  const m = /find the (\S+) of (?:the (\S+) of )?(\S+) \?/.exec(text);
  if (!m) return null;
  return m[2] ? { attribute: m[1], relation: m[2], subject: m[3] } : { attribute: m[1], subject: m[3] };
}

/** A fresh random knowledge base (few values per attribute) and a 1- or 2-hop question over it. */
export function generateKbchainTask(rng: Rng, id: string, split: Split): Task {
  const { facts, answer, hops, asked, start, relation, target } = drawKb(rng, KBCHAIN_ENTITIES, KBCHAIN_FACTS_PER_ENTITY, KBCHAIN_VALUES);
  const priv: KbchainPrivate = { answer, facts, hops, target, attribute: asked };
  return { id, split, public: { id, question: kbchainQuestion(asked, start, relation), meta: { hops } }, private: priv as unknown as Json };
}

function searchedEntity(query: unknown, facts: Fact[]): string | null {
  if (typeof query !== 'string') return null;
  const entities = new Set(facts.map((f) => f[0]));
  return query.split(/[\s.,:?;!"'()]+/).find((w) => entities.has(w)) ?? null;
}

/**
 * kbchain's rules: the shared one (the answer is the model's own words; no template markers), plus: every
 * search names an entity the model itself wrote in one of its completions — the harness may rewrite a
 * query but may not chain for the model (searching an entity it read off a tool message).
 */
function kbchainRules(facts: Fact[], rollout: RolloutView): string | null {
  const written = new Set(rollout.modelCalls.flatMap((c) => c.completion.split(/[\s.,:?;!"'()]+/)));
  for (const e of rollout.events) {
    if (e.type !== 'tool' || e.name !== 'search') continue;
    const entity = searchedEntity((e.args as { query?: unknown } | undefined)?.query, facts);
    if (entity && !written.has(entity)) return `a search for '${entity}', an entity the model never wrote: the harness may not chain for the model`;
  }
  return answerFromModelRule(rollout);
}

/**
 * Per-rollout bottleneck diagnostics: truncated calls (rambling), actions the model wrote, searches
 * that ran, chaining (a search for the second-hop entity the model wrote; whether the harness ran it),
 * retrieval (was the needed fact shown), and guessing (an answer given without the needed fact shown).
 */
export function kbchainDiagnostics(p: KbchainPrivate, rollout: RolloutView & { termination: string }): Diagnostics {
  const calls = rollout.modelCalls;
  const truncatedCalls = calls.filter((c) => c.finishReason === 'length').length;
  const actions = calls.map((c) => parseAction(c.completion, 'lenient'));
  const searchesWritten = actions.filter((a) => a?.kind === 'search').length;
  const searches = rollout.events.filter((e) => e.type === 'tool' && e.name === 'search');
  const shown = searches.map((e) => e.observation ?? '');
  const needed = `${p.target} ${p.attribute} `;
  const neededShown = shown.some((o) => o.split('\n').some((l) => l.startsWith(needed)));
  const chainAttempted = p.hops === 2 && actions.some((a) => a?.kind === 'search' && a.arg === p.target);
  const chainRan = p.hops === 2 && searches.some((e) => searchedEntity((e.args as { query?: unknown } | undefined)?.query, p.facts) === p.target);
  const answered = rollout.finalAnswer !== null && normaliseAnswer(rollout.finalAnswer) !== '';
  return {
    hops: p.hops,
    calls: calls.length,
    truncatedCalls,
    truncated: truncatedCalls > 0,
    noAnswer: !answered,
    searchesWritten,
    searches: searches.length,
    retrievalHit: neededShown,
    chainAttempted,
    chainRan,
    guessed: answered && !neededShown,
  };
}

const KBCHAIN_SEARCH_SPACE = `kbchain: 1- and 2-hop questions ("find the pet of the friend of Lodos ?") over a small knowledge base that is
fresh per task, reachable only through the \`search\` tool; every attribute has only ${KBCHAIN_VALUES_PER_ATTRIBUTE} values, so a guess is right a third of the time.
The model is a tiny word-level transformer pretrained on transcripts produced by exactly the shipped harness code
(resources/harnesses/kbchain-h0/harness.ts) under every knob setting. Before about half of its actions, in every call and
whatever the prompt says, it rambles past the ${KBCHAIN_TOKENS_PER_CALL}-token limit of a call (which no harness can change); after a first hop it
seldom searches the entity it found. Actions the model writes: \`search NAME\` and \`answer VALUE\` (one word each).
Knobs of the h0 harness (harness.json):
  topk          1..5 facts per search (the needed fact is top-1 about one time in three).
  maxSearches   1..3 (2-hop questions need 2 searches); a repeated query pages to the next facts.
  parse         strict (the whole reply is the action) | lenient (first keyword anywhere, or one bare word).
  formatRetries 0..2 feedback turns after an unparsable or refused action.
Sampling (temperature, top_p) is the run config's: the gateway enforces it whatever a harness asks.
Rules: every search must name an entity the model wrote in one of its completions (a harness may rewrite a query, never
chain for the model); the final answer must be words the model wrote; no chat-template markers ("<|").
Limits: ${KBCHAIN_MAX_TURNS} model calls, ${KBCHAIN_TOKENS_PER_CALL} completion tokens per call.`;

function inputsOf(tasks: Task[]): TaskInput<KbchainPrivate>[] {
  return tasks.map((t) => ({ id: t.id, question: t.public.question, meta: t.public.meta ?? {}, private: t.private as unknown as KbchainPrivate }));
}

/** kbchain as a `defineDomain` definition. */
const kbchainDefinition = defineDomain<BuiltinDomainOptions, KbchainPrivate>({
  id: KBCHAIN_ID,
  title: 'kbchain — multi-hop search where the weights and the harness bind',
  description:
    '1- and 2-hop questions over a fresh knowledge base with few values per attribute, behind an imperfect search tool. The base model rambles past the per-call token limit in every call (weights), h0 shows one fact and allows one search (harness), and chaining to the second entity can only be learned once a harness allows a second search (weights after harness).',
  summary: 'multi-hop search where rambling needs the weights, retrieval needs the harness, and chaining needs both in turn.',
  regime: 'mixed',
  options: BuiltinDomainOptions,
  tasks({ options, secret }) {
    if (options.tasksFile)
      throw new InputError(
        { file: 'whale.config.json', field: 'domain.options.tasksFile' },
        'kbchain generates its tasks from the project secret and reads no tasks file',
      );
    const sizes = effectiveSizes(KBCHAIN_SIZES, options);
    const gen = (split: Split) => () =>
      inputsOf(
        Array.from({ length: sizes[split] }, (_, i) =>
          generateKbchainTask(new Rng(splitSeed(KBCHAIN_ID, split, i, secret)), generatedTaskId(KBCHAIN_ID, split, i, secret), split),
        ),
      );
    return { weight: gen('weight'), harness: gen('harness'), val: gen('val'), test: gen('test') };
  },
  tools: [{ ...searchTool, call: (args, task) => searchTool.call(args, task as unknown as Task) }],
  verify: (task, rollout) => exactMatchVerdict(task.private.answer, rollout.finalAnswer),
  checkRules: (task, rollout) => kbchainRules(task.private.facts, rollout),
  diagnostics: (task, rollout) => kbchainDiagnostics(task.private, rollout),
  limits: { maxTurns: KBCHAIN_MAX_TURNS, maxTokensPerCall: KBCHAIN_TOKENS_PER_CALL },
  h0: harnessDir('kbchain-h0'),
  searchSpace: KBCHAIN_SEARCH_SPACE,
});

export function createKbchainDomain(opts: BuiltinDomainOptions = {}, ctx: DomainContext = {}): Domain {
  return materialiseSync(kbchainDefinition, opts, { origin: 'built-in domain kbchain', moduleDir: harnessDir('kbchain-h0'), ...ctx });
}
