// A person's request that the llm proposer start its next round from a chosen candidate instead of
// the incumbent: `<store>/proposal-seed.json`, store-wide (the next harness phase of whichever run
// comes next reads it: a finished run's successor too). The harness phase hands it to the llm
// proposer, records it on the round's `proposal` journal entry, and only then removes the file, so a
// round that crashes before its proposal is journaled still sees the seed when it resumes.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { writeJsonAtomic } from '../core/atomic.js';
import { InputError } from '../core/errors.js';

export const ProposalSeed = z.object({
  treeHash: z.string().regex(/^[0-9a-f]{40}$/, 'a candidate tree hash (40 hex digits)'),
  /** What the person wants tried from it; empty: the proposer decides. */
  direction: z.string().default(''),
  createdAt: z.string(),
});
export type ProposalSeed = z.infer<typeof ProposalSeed>;

export function proposalSeedFile(storeDir: string): string {
  return join(storeDir, 'proposal-seed.json');
}

export function writeProposalSeed(storeDir: string, seed: { treeHash: string; direction?: string }, now = new Date()): ProposalSeed {
  const parsed = ProposalSeed.safeParse({ ...seed, createdAt: now.toISOString() });
  if (!parsed.success) throw new InputError({ file: proposalSeedFile(storeDir), field: 'treeHash' }, parsed.error.issues[0].message);
  writeJsonAtomic(proposalSeedFile(storeDir), parsed.data);
  return parsed.data;
}

/** The pending seed, or undefined; a file that does not parse is an input error naming it. */
export function readProposalSeed(storeDir: string): ProposalSeed | undefined {
  const file = proposalSeedFile(storeDir);
  if (!existsSync(file)) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new InputError({ file }, `not JSON: ${(e as Error).message} (delete it to drop the request)`);
  }
  const parsed = ProposalSeed.safeParse(raw);
  if (!parsed.success) throw new InputError({ file, field: parsed.error.issues[0].path.join('.') }, parsed.error.issues[0].message);
  return parsed.data;
}

export function clearProposalSeed(storeDir: string): void {
  rmSync(proposalSeedFile(storeDir), { force: true });
}
