/**
 * The pretraining corpus of the embedded base model: noisy-expert transcripts of both toy domains in
 * EXACTLY the message shapes the shipped harnesses build, under every knob setting.
 *
 * - kbqa: a fresh random knowledge base per transcript (a fixed one gets memorised instead of looked
 *   up), facts in the tool's imperfect ranking, tool messages included (keep the loss on them: masked
 *   tool lines stopped name copying, REFERENCE §5). The expert copies a value when the needed fact is
 *   shown and behaves worse under weaker harness settings (no instruction: often answers from its
 *   prior without searching; more malformed actions), so the harness matters.
 * - ramble: the expert rambles before answering with a fixed probability, independent of the
 *   instruction and of everything else in the context, so no prompt can switch it off.
 *
 * Every word of every transcript is in requiredWords() (test-enforced), so each is one token.
 */
import { Rng, hashSeed } from '../core/rng.js';
import type { ChatMessage } from '../core/trajectory.js';
import { KBQA_ID, searchFacts, generateKbqaTask, type KbqaPrivate } from './kbqa.js';
import { RAMBLE_ID, generateRambleTask } from './ramble.js';
import { KBCHAIN_ID, KBCHAIN_MAX_TURNS, KBCHAIN_VALUES, type KbchainPrivate, generateKbchainTask, parseKbchainQuestion } from './kbchain.js';
import {
  type Action,
  type Fact,
  KBQA_FEEDBACK,
  KBQA_INSTRUCTIONS,
  NO_FACTS,
  type ParseMode,
  type PassageFormat,
  PASSAGE_FORMATS,
  RAMBLE_INSTRUCTIONS,
  factsInText,
  formatFacts,
  parseAction,
  parseQuestion,
} from './text.js';
import type { Task } from './types.js';
import { ALL_VALUES, ATTRIBUTES, FILLER, NAMES, VALUES, VALUE_ATTRIBUTES, type ValueAttribute } from './vocab.js';

export type { ChatMessage };

export type CorpusDomain = 'kbqa' | 'ramble' | 'kbchain';
export type CorpusMix = Readonly<{ kbqa: number; ramble: number; kbchain?: number }>;

/** Share of each domain in the pretraining stream of the shipped base model (resources/model/base). */
export const CORPUS_MIX: CorpusMix = { kbqa: 0.7, ramble: 0.3 };
/** The mix resources/model/kbchain continued the base model on (scripts/pretrain.ts --init). */
export const KBCHAIN_CORPUS_MIX: CorpusMix = { kbqa: 0.35, ramble: 0.15, kbchain: 0.5 };

/** The noisy expert's behaviour (the numbers the base model is meant to inherit). */
export const EXPERT = {
  /** kbqa: chance of answering from the prior before any search, by instruction level. */
  directAnswer: { none: 0.5, short: 0.2, full: 0.05 },
  /** kbqa: chance an action is written in a malformed way, by instruction level (a third of it right after format feedback). */
  malformed: { none: 0.15, short: 0.08, full: 0.03 },
  /** kbqa: when the needed fact was searched for but not shown, chance of searching the same name again (else guess). */
  searchAgain: 0.5,
  /** kbqa: chance of copying a wrong value although the right fact is shown. */
  copyError: 0.03,
  /** ramble: chance of rambling before the answer — the same under every prompt. */
  ramble: 0.6,
  /** ramble: length of the rambling (tokens before `so answer VALUE`), always beyond the 24-token budget. */
  rambleMin: 30,
  rambleMax: 45,
  /** ramble: wrong fact copied; malformed answer. */
  rambleCopyError: 0.05,
  rambleMalformed: 0.05,
} as const;

/**
 * The kbchain expert (the numbers resources/model/kbchain is meant to inherit). None depends on the
 * system message or any harness setting: the rambling and the chaining habit are for the weights to change.
 */
export const KBCHAIN_EXPERT = {
  /** Chance of rambling (30-45 words, past the 24-token call limit) before an action — in every call, independently. */
  ramble: 0.5,
  /** Chance of answering from the prior before any search. */
  directAnswer: 0.15,
  /** 2-hop: once the first hop's fact is shown, chance of searching the entity it names (else guess). */
  chain: 0.2,
  /** When the needed fact was searched for but not shown, chance of searching the same name again (else guess). */
  searchAgain: 0.5,
  malformed: 0.05,
  copyError: 0.03,
} as const;

const PUNCTUATION = ['.', ',', ':', '?'];
const DIGITS = ['1', '2', '3', '4', '5'];
const SYNTAX = ['search', 'answer', 'find', 'What', 'is', 'the', 'of', 'no', 'facts', 'so'];

function wordsIn(texts: readonly string[]): string[] {
  return texts.flatMap((t) => t.split(/\s+/)).filter((w) => w !== '');
}

/**
 * Every word the toy domains, their harnesses and the corpus use: syntax, punctuation, digits,
 * attributes, instruction and feedback words, filler, values, names. The embedded tokenizer makes each
 * a single token. The order is stable (append only: the shipped model's vocabulary depends on it).
 */
export function requiredWords(): string[] {
  const all = [
    ...SYNTAX,
    ...PUNCTUATION,
    ...DIGITS,
    ...ATTRIBUTES,
    ...wordsIn(Object.values(KBQA_INSTRUCTIONS)),
    ...wordsIn(Object.values(KBQA_FEEDBACK)),
    ...wordsIn(Object.values(RAMBLE_INSTRUCTIONS)),
    ...wordsIn([NO_FACTS]),
    ...FILLER,
    ...ALL_VALUES,
    ...NAMES,
  ];
  return [...new Set(all)];
}

// ---------------------------------------------------------------------------------------------
// The noisy expert

export type InstructionLevel = 'none' | 'short' | 'full';

function kbqaLevel(messages: ChatMessage[]): InstructionLevel {
  const sys = messages.find((m) => m.role === 'system')?.content.trim();
  if (sys === KBQA_INSTRUCTIONS.full) return 'full';
  if (sys === KBQA_INSTRUCTIONS.short) return 'short';
  return 'none';
}

function prior(rng: Rng, attribute: string | undefined): string {
  return attribute && attribute in VALUES ? rng.pick(VALUES[attribute as ValueAttribute]) : rng.pick(ALL_VALUES);
}

function renderKbqa(act: Action, rng: Rng, pMalformed: number): string {
  if (!rng.chance(pMalformed)) return `${act.kind} ${act.arg}`;
  if (act.kind === 'search') return rng.chance(0.5) ? `search : ${act.arg}` : `find ${act.arg}`;
  const r = rng.int(3);
  return r === 0 ? `answer : ${act.arg}` : r === 1 ? `the answer is ${act.arg}` : `${act.arg} .`;
}

function expertKbqa(messages: ChatMessage[], rng: Rng): string {
  const level = kbqaLevel(messages);
  const q =
    messages
      .filter((m) => m.role === 'user')
      .map((m) => parseQuestion(m.content))
      .find((x) => x !== null) ?? null;
  const last = messages[messages.length - 1];
  const afterFeedback = last?.role === 'user' ? last.content : '';
  const pMal = EXPERT.malformed[level] / (afterFeedback === KBQA_FEEDBACK.format ? 3 : 1);
  if (!q) return renderKbqa({ kind: 'answer', arg: prior(rng, undefined) }, rng, pMal);

  const shown: Fact[] = messages.filter((m) => m.role === 'tool').flatMap((m) => factsInText(m.content));
  const searched = new Set<string>();
  messages.forEach((m, i) => {
    if (m.role !== 'assistant' || messages[i + 1]?.role !== 'tool') return;
    const a = parseAction(m.content, 'lenient');
    if (a?.kind === 'search') searched.add(a.arg);
  });

  const relFact = q.relation ? shown.find((f) => f[0] === q.subject && f[1] === q.relation) : undefined;
  const target = q.relation ? relFact?.[2] : q.subject;
  const valueFact = target ? shown.find((f) => f[0] === target && f[1] === q.attribute) : undefined;
  const guess = (): string => renderKbqa({ kind: 'answer', arg: prior(rng, q.attribute) }, rng, pMal);

  if (valueFact) {
    let v = valueFact[2];
    if (rng.chance(EXPERT.copyError)) {
      const others = shown.filter((f) => f[2] !== v && (VALUE_ATTRIBUTES as readonly string[]).includes(f[1]));
      v = others.length > 0 ? rng.pick(others)[2] : prior(rng, q.attribute);
    }
    return renderKbqa({ kind: 'answer', arg: v }, rng, pMal);
  }
  if (afterFeedback === KBQA_FEEDBACK.noSearchLeft) return guess();
  if (searched.size === 0 && afterFeedback !== KBQA_FEEDBACK.searchFirst && rng.chance(EXPERT.directAnswer[level])) return guess();
  const next = q.relation && !relFact ? q.subject : (target ?? q.subject);
  if (!searched.has(next) || rng.chance(EXPERT.searchAgain)) return renderKbqa({ kind: 'search', arg: next }, rng, pMal);
  return guess();
}

function rambleText(rng: Rng): string {
  const n = EXPERT.rambleMin + rng.int(EXPERT.rambleMax - EXPERT.rambleMin + 1);
  const words = ['hmm', ','];
  const filler = FILLER.filter((w) => w !== 'hmm');
  let sinceMark = 0;
  while (words.length < n - 1) {
    if (sinceMark >= 3 && rng.chance(0.2)) {
      words.push(rng.chance(0.5) ? ',' : '.');
      sinceMark = 0;
    } else {
      words.push(rng.pick(filler));
      sinceMark++;
    }
  }
  words.push('.', 'so');
  return words.join(' ');
}

function expertRamble(messages: ChatMessage[], rng: Rng): string {
  const user = messages.find((m) => m.role === 'user')?.content ?? '';
  const q = parseQuestion(user);
  const facts = factsInText(user);
  const right = q ? facts.find((f) => f[0] === q.subject && f[1] === q.attribute) : undefined;
  let v = right?.[2] ?? prior(rng, q?.attribute);
  if (right && rng.chance(EXPERT.rambleCopyError)) {
    const others = facts.filter((f) => f !== right);
    if (others.length > 0) v = rng.pick(others)[2];
  }
  const answer = rng.chance(EXPERT.rambleMalformed) ? (rng.chance(0.5) ? `answer : ${v}` : `the answer is ${v}`) : `answer ${v}`;
  // Independent of the system message, the user text and anything else: no prompt controls it.
  return rng.chance(EXPERT.ramble) ? `${rambleText(rng)} ${answer}` : answer;
}

export type KbchainExpertParams = { [K in keyof typeof KBCHAIN_EXPERT]: number };

/**
 * The kbchain expert's next action. `X` overrides its habits: tests play the policy RSFT should reach
 * (no rambling; chaining once a second search is allowed) under h0 and under the harness fix.
 */
export function expertKbchain(messages: ChatMessage[], rng: Rng, X: KbchainExpertParams = KBCHAIN_EXPERT): string {
  const q =
    messages
      .filter((m) => m.role === 'user')
      .map((m) => parseKbchainQuestion(m.content))
      .find((x) => x !== null) ?? null;
  const last = messages[messages.length - 1];
  const afterFeedback = last?.role === 'user' ? last.content : '';
  const act = (a: Action): string => {
    const text = renderKbqa(a, rng, X.malformed);
    return rng.chance(X.ramble) ? `${rambleText(rng)} ${text}` : text;
  };
  const prior = (attribute: string | undefined): string =>
    attribute && attribute in KBCHAIN_VALUES ? rng.pick(KBCHAIN_VALUES[attribute as ValueAttribute]) : rng.pick(ALL_VALUES);
  const guess = (): string => act({ kind: 'answer', arg: prior(q?.attribute) });
  if (!q) return guess();

  const shown: Fact[] = messages.filter((m) => m.role === 'tool').flatMap((m) => factsInText(m.content));
  const searched = new Set<string>();
  messages.forEach((m, i) => {
    if (m.role !== 'assistant' || messages[i + 1]?.role !== 'tool') return;
    const a = parseAction(m.content, 'lenient');
    if (a?.kind === 'search') searched.add(a.arg);
  });
  const relFact = q.relation ? shown.find((f) => f[0] === q.subject && f[1] === q.relation) : undefined;
  const target = q.relation ? relFact?.[2] : q.subject;
  const valueFact = target ? shown.find((f) => f[0] === target && f[1] === q.attribute) : undefined;

  if (valueFact) {
    let v = valueFact[2];
    if (rng.chance(X.copyError)) v = prior(q.attribute);
    return act({ kind: 'answer', arg: v });
  }
  if (afterFeedback === KBQA_FEEDBACK.noSearchLeft) return guess();
  if (searched.size === 0) return rng.chance(X.directAnswer) ? guess() : act({ kind: 'search', arg: q.subject });
  const next = target ?? q.subject;
  if (!searched.has(next)) return rng.chance(X.chain) ? act({ kind: 'search', arg: next }) : guess();
  return rng.chance(X.searchAgain) ? act({ kind: 'search', arg: next }) : guess();
}

/** The noisy expert's next assistant message for a conversation of the given domain. */
export function expertAct(domain: CorpusDomain, messages: ChatMessage[], rng: Rng): string {
  return domain === 'kbqa' ? expertKbqa(messages, rng) : domain === 'kbchain' ? expertKbchain(messages, rng) : expertRamble(messages, rng);
}

// ---------------------------------------------------------------------------------------------
// Episodes: the shipped harness loops, replayed with the expert as the policy

/** The kbqa-h0 knobs (all of them change what the model sees). */
export interface KbqaShapeKnobs {
  instruction: 'prompt' | 'short' | 'full';
  topk: number;
  maxSearches: number;
  passageFormat: PassageFormat;
  parse: ParseMode;
  formatRetries: number;
  requireSearch: boolean;
}

export interface RambleShapeKnobs {
  instruction: 'prompt' | 'brief' | 'direct';
}

export const KBQA_MAX_TURNS = 6;

/**
 * One kbqa rollout as resources/harnesses/kbqa-h0/harness.ts runs it (h0 prompts: no system text,
 * user = the question), with `act` as the policy and the domain's search tool. Returns the messages up
 * to and including the model's last reply (what the model saw and wrote). `act` defaults to the noisy expert.
 */
export function kbqaEpisode(
  task: Task,
  knobs: KbqaShapeKnobs,
  rng: Rng,
  act: (messages: ChatMessage[]) => string = (m) => expertAct('kbqa', m, rng),
): { messages: ChatMessage[]; answer: string | null } {
  const messages: ChatMessage[] = [];
  const system = knobs.instruction === 'prompt' ? '' : KBQA_INSTRUCTIONS[knobs.instruction];
  if (system !== '') messages.push({ role: 'system', content: system });
  messages.push({ role: 'user', content: task.public.question });
  const facts = (task.private as unknown as KbqaPrivate).facts;
  let calls = 0;
  let searches = 0;
  let retriesLeft = knobs.formatRetries;
  let nudged = false;
  const timesQueried = new Map<string, number>();
  while (calls < KBQA_MAX_TURNS) {
    const text = act(messages);
    calls++;
    messages.push({ role: 'assistant', content: text });
    const a = parseAction(text, knobs.parse);
    if (!a) {
      if (retriesLeft > 0) {
        retriesLeft--;
        messages.push({ role: 'user', content: KBQA_FEEDBACK.format });
        continue;
      }
      return { messages, answer: null };
    }
    if (a.kind === 'answer') {
      if (knobs.requireSearch && searches === 0 && !nudged) {
        nudged = true;
        messages.push({ role: 'user', content: KBQA_FEEDBACK.searchFirst });
        continue;
      }
      return { messages, answer: a.arg };
    }
    if (searches >= knobs.maxSearches) {
      if (retriesLeft > 0) {
        retriesLeft--;
        messages.push({ role: 'user', content: KBQA_FEEDBACK.noSearchLeft });
        continue;
      }
      return { messages, answer: null };
    }
    searches++;
    const n = timesQueried.get(a.arg) ?? 0;
    timesQueried.set(a.arg, n + 1);
    messages.push({ role: 'tool', content: formatFacts(searchFacts(task.id, facts, a.arg, knobs.topk, n * knobs.topk), knobs.passageFormat) });
  }
  // Turn limit: the model never saw the last tool message.
  while (messages.length > 0 && messages[messages.length - 1].role !== 'assistant') messages.pop();
  return { messages, answer: null };
}

/** One ramble rollout as resources/harnesses/ramble-h0/harness.ts runs it (h0 prompts). */
export function rambleEpisode(
  task: Task,
  knobs: RambleShapeKnobs,
  rng: Rng,
  act: (messages: ChatMessage[]) => string = (m) => expertAct('ramble', m, rng),
): { messages: ChatMessage[] } {
  const messages: ChatMessage[] = [];
  const system = knobs.instruction === 'prompt' ? '' : RAMBLE_INSTRUCTIONS[knobs.instruction];
  if (system !== '') messages.push({ role: 'system', content: system });
  messages.push({ role: 'user', content: task.public.question });
  messages.push({ role: 'assistant', content: act(messages) });
  return { messages };
}

/** The kbchain-h0 knobs and its system prompt (one of its promptVariants). */
export interface KbchainShapeKnobs {
  system: string;
  topk: number;
  maxSearches: number;
  parse: ParseMode;
  formatRetries: number;
}

/** The kbchain-h0 system-prompt variants (harness.json promptVariants.system). */
const KBCHAIN_SYSTEM_VARIANTS: readonly string[] = ['', KBQA_INSTRUCTIONS.short, KBQA_INSTRUCTIONS.full];

/** One kbchain rollout as resources/harnesses/kbchain-h0/harness.ts runs it, with `act` as the policy (default: the expert). */
export function kbchainEpisode(
  task: Task,
  knobs: KbchainShapeKnobs,
  rng: Rng,
  act: (messages: ChatMessage[]) => string = (m) => expertAct('kbchain', m, rng),
): { messages: ChatMessage[]; answer: string | null } {
  const messages: ChatMessage[] = [];
  if (knobs.system.trim() !== '') messages.push({ role: 'system', content: knobs.system });
  messages.push({ role: 'user', content: task.public.question });
  const facts = (task.private as unknown as KbchainPrivate).facts;
  let calls = 0;
  let searches = 0;
  let retriesLeft = knobs.formatRetries;
  const timesQueried = new Map<string, number>();
  while (calls < KBCHAIN_MAX_TURNS) {
    const text = act(messages);
    calls++;
    messages.push({ role: 'assistant', content: text });
    const a = parseAction(text, knobs.parse);
    if (!a) {
      if (retriesLeft > 0) {
        retriesLeft--;
        messages.push({ role: 'user', content: KBQA_FEEDBACK.format });
        continue;
      }
      return { messages, answer: null };
    }
    if (a.kind === 'answer') return { messages, answer: a.arg };
    if (searches >= knobs.maxSearches) {
      if (retriesLeft > 0) {
        retriesLeft--;
        messages.push({ role: 'user', content: KBQA_FEEDBACK.noSearchLeft });
        continue;
      }
      return { messages, answer: null };
    }
    searches++;
    const n = timesQueried.get(a.arg) ?? 0;
    timesQueried.set(a.arg, n + 1);
    messages.push({ role: 'tool', content: formatFacts(searchFacts(task.id, facts, a.arg, knobs.topk, n * knobs.topk), 'plain') });
  }
  while (messages.length > 0 && messages[messages.length - 1].role !== 'assistant') messages.pop();
  return { messages, answer: null };
}

export function randomKbchainKnobs(rng: Rng): KbchainShapeKnobs {
  return {
    system: rng.pick(KBCHAIN_SYSTEM_VARIANTS),
    topk: 1 + rng.int(5),
    maxSearches: 1 + rng.int(3),
    parse: rng.pick(['strict', 'lenient'] as const),
    formatRetries: rng.int(3),
  };
}

/** Knob settings drawn uniformly, each knob independently (every shape a knob search can reach). */
export function randomKbqaKnobs(rng: Rng): KbqaShapeKnobs {
  return {
    instruction: rng.pick(['prompt', 'short', 'full'] as const),
    topk: 1 + rng.int(5),
    maxSearches: 1 + rng.int(4),
    passageFormat: rng.pick(PASSAGE_FORMATS),
    parse: rng.pick(['strict', 'lenient'] as const),
    formatRetries: rng.int(3),
    requireSearch: rng.chance(0.5),
  };
}

export function randomRambleKnobs(rng: Rng): RambleShapeKnobs {
  return { instruction: rng.pick(['prompt', 'brief', 'direct'] as const) };
}

/** Tokens of a transcript as the embedded chat template counts them, assuming one token per word. */
export function approxTokens(messages: ChatMessage[]): number {
  return 1 + messages.reduce((n, m) => n + 2 + m.content.split(/\s+/).filter((w) => w !== '').length, 0);
}

/** One transcript of the given domain drawn from a per-transcript seed. */
export function corpusTranscript(domain: CorpusDomain, seed: number): ChatMessage[] {
  const rng = new Rng(seed);
  if (domain === 'kbchain') {
    const task = generateKbchainTask(rng.fork('task'), `corpus-${seed >>> 0}`, 'weight');
    return kbchainEpisode(task, randomKbchainKnobs(rng.fork('knobs')), rng.fork('expert')).messages;
  }
  if (domain === 'kbqa') {
    const task = generateKbqaTask(rng.fork('task'), `corpus-${seed >>> 0}`, 'weight');
    return kbqaEpisode(task, randomKbqaKnobs(rng.fork('knobs')), rng.fork('expert')).messages;
  }
  const task = generateRambleTask(rng.fork('task'), `corpus-${seed >>> 0}`, 'weight');
  return rambleEpisode(task, randomRambleKnobs(rng.fork('knobs')), rng.fork('expert')).messages;
}

/**
 * The endless pretraining stream for a seed: transcripts of kbqa and ramble mixed by `mix`
 * (default CORPUS_MIX), each with a fresh knowledge base and fresh knob settings. Deterministic per seed.
 */
export function* pretrainingTranscripts(seed: number, mix: CorpusMix = CORPUS_MIX): Generator<ChatMessage[]> {
  const pick = new Rng(hashSeed(`corpus:mix:${seed}`));
  const total = mix.kbqa + mix.ramble + (mix.kbchain ?? 0);
  if (!(total > 0)) throw new Error('pretrainingTranscripts: the mixture weights must sum to more than 0');
  for (let i = 0; ; i++) {
    // Without kbchain the draws are those of the original two-domain stream (the base model's corpus).
    const r = pick.next() * total;
    const domain: CorpusDomain = r < mix.kbqa ? KBQA_ID : r < mix.kbqa + mix.ramble ? RAMBLE_ID : KBCHAIN_ID;
    yield corpusTranscript(domain, hashSeed(`corpus:${seed}:${i}`));
  }
}
