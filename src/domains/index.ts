/**
 * The registry of built-in domains. `getDomain('kbqa', { tasksFile: 'my.jsonl' }, { baseDir })`.
 */
import { WhaleError } from '../core/errors.js';
import { type DomainContext, parseOptions } from './common.js';
import { KBQA_ID, createKbqaDomain } from './kbqa.js';
import { RAMBLE_ID, createRambleDomain } from './ramble.js';
import type { Domain } from './types.js';

export type { Domain } from './types.js';
export type { DomainContext } from './common.js';

export interface DomainEntry {
  id: string;
  title: string;
  regime: Domain['regime'];
  summary: string;
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

/** Any domain, sync or async to build: what the engine and the CLI use. */
export async function loadDomain(id: string, options: unknown = {}, ctx: DomainContext = {}): Promise<Domain> {
  const entry = REGISTRY.find((e) => e.id === id);
  if (!entry) throw new UnknownDomainError(id);
  return await entry.create(options, ctx);
}
