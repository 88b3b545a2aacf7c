/**
 * The registry of built-in domains. `getDomain('kbqa', { tasksFile: 'my.jsonl' }, { baseDir })`.
 */
import { WhaleError } from '../core/errors.js';
import { type DomainContext, harnessDir, parseOptions } from './common.js';
import { CHESS_ID, createChessDomain } from './chess/index.js';
import { KBCHAIN_ID, createKbchainDomain } from './kbchain.js';
import { KBQA_ID, createKbqaDomain } from './kbqa.js';
import { MATH_ID, MATH_TITLE, createMathDomain } from './math/index.js';
import { RAMBLE_ID, createRambleDomain } from './ramble.js';
import { SEARCHQA_ID, createSearchqaDomain } from './searchqa/index.js';
import { materialise } from './definition.js';
import type { DefinedDomain, DomainDefinition } from './sdk.js';
import type { Domain } from './types.js';

export type { Domain } from './types.js';
export type { DomainContext } from './common.js';

export interface DomainEntry {
  id: string;
  title: string;
  regime: Domain['regime'];
  summary: string;
  /** The h0 folder under resources/harnesses, for domains whose create() is async (so h0 is known without building them). */
  h0?: string;
  /** Builds the domain; may be async (task files, Parquet, a module's setup). */
  create(options: unknown, ctx: DomainContext): Domain | Promise<Domain>;
}

const REGISTRY: readonly DomainEntry[] = [
  {
    id: KBQA_ID,
    title: 'kbqa — multi-hop questions over a fresh knowledge base',
    regime: 'harness-dominated',
    summary: '1- and 2-hop questions answered through an imperfect search tool; the harness decides most of the success.',
    create: (o, c) => createKbqaDomain(parseOptions(KBQA_ID, o), c),
  },
  {
    id: RAMBLE_ID,
    title: 'ramble — answer before the token budget runs out',
    regime: 'weight-dominated',
    summary: 'copy a value stated in the question in one 24-token call; the base model rambles, only training fixes it.',
    create: (o, c) => createRambleDomain(parseOptions(RAMBLE_ID, o), c),
  },
  {
    id: SEARCHQA_ID,
    title: 'searchqa — open-domain QA with a search tool (Search-R1 data, 7 QA sets)',
    regime: 'harness-dominated',
    summary:
      "the paper's SearchQA: Search-R1 Parquet/FlashRAG JSONL questions, a retriever behind Search-R1's /retrieve API, normalised EM; ships a synthetic sample and an embedded BM25 retriever.",
    h0: 'searchqa-h0',
    create: (o, c) => createSearchqaDomain(o, c),
  },
  {
    id: MATH_ID,
    title: MATH_TITLE,
    regime: 'weight-dominated',
    summary:
      "the paper's Math: DAPO-Math-17k / AIME files, \\boxed{} answers checked by CAS, a code_interpreter tool on a SandboxFusion-compatible service, an assistant token budget.",
    h0: 'math-h0',
    create: (o, c) => createMathDomain(o, c),
  },
  {
    id: CHESS_ID,
    title: 'chess — Lichess puzzles, every move from the model',
    regime: 'mixed',
    summary: 'find the solution of Lichess puzzles (their CSV) move by move; the harness may check legality but never compute a move.',
    h0: 'chess-h0',
    create: (o, c) => createChessDomain(o, c),
  },
  {
    id: KBCHAIN_ID,
    title: 'kbchain — multi-hop search where the weights and the harness bind',
    regime: 'mixed',
    summary: 'multi-hop search where rambling needs the weights, retrieval needs the harness, and chaining needs both in turn.',
    create: (o, c) => createKbchainDomain(parseOptions(KBCHAIN_ID, o), c),
  },
];

/**
 * Adds a domain to the registry for this process (a test's own domain, or an embedder's). The
 * built-ins cannot be replaced.
 */
export function registerDomain(entry: DomainEntry): void {
  if (REGISTRY.some((e) => e.id === entry.id)) throw new WhaleError(`domain '${entry.id}' is already registered`);
  (REGISTRY as DomainEntry[]).push(entry);
}

/** The built-in domains (id, title, regime, one-line summary). */
export function listDomains(): { id: string; title: string; regime: Domain['regime']; summary: string }[] {
  return REGISTRY.map(({ id, title, regime, summary }) => ({ id, title, regime, summary }));
}

export class UnknownDomainError extends WhaleError {
  constructor(readonly id: string) {
    super(`unknown domain '${id}' (known domains: ${REGISTRY.map((e) => e.id).join(', ')})`, 'unknown_domain');
  }
}

/**
 * A built-in domain by id. `options` is `domain.options` from whale.config.json (`tasksFile`, `sizes`);
 * a bad option is an InputError naming the field. Each call builds a fresh domain object (tasks are
 * generated lazily and cached inside it).
 */
export function getDomain(id: string, options: unknown = {}, ctx: DomainContext = {}): Domain {
  const entry = REGISTRY.find((e) => e.id === id);
  if (!entry) throw new UnknownDomainError(id);
  const d = entry.create(options, ctx);
  if (d instanceof Promise) throw new WhaleError(`domain '${id}' loads asynchronously: use loadDomain`);
  return d;
}

/** The h0 folder of a built-in domain, without building it (building may load files or start services). */
export function domainH0Dir(id: string): string {
  const entry = REGISTRY.find((e) => e.id === id);
  if (!entry) throw new UnknownDomainError(id);
  return entry.h0 ? harnessDir(entry.h0) : getDomain(id).h0Dir;
}

/** Any domain, sync or async to build: what the engine and the CLI use. */
export async function loadDomain(id: string, options: unknown = {}, ctx: DomainContext = {}): Promise<Domain> {
  const entry = REGISTRY.find((e) => e.id === id);
  if (!entry) throw new UnknownDomainError(id);
  return await entry.create(options, ctx);
}

/**
 * A registry entry from a `defineDomain` definition (what the built-ins' `create` does by hand):
 * `REGISTRY` may list `definitionEntry(myDefinition)` beside literal entries.
 */
export function definitionEntry(def: DefinedDomain<never, unknown> | DomainDefinition<never, unknown>, moduleDir?: string): DomainEntry {
  return {
    id: def.id,
    title: def.title,
    regime: def.regime ?? 'unknown',
    summary: def.summary ?? def.description.split(/(?<=\.)\s/)[0],
    create: (options, ctx) =>
      materialise(def as DomainDefinition<unknown, unknown>, options, { origin: `built-in domain ${def.id}`, moduleDir: moduleDir ?? process.cwd(), ...ctx }),
  };
}
