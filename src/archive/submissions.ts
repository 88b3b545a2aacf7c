/**
 * Hand-made candidates: a person can be the proposer. `whale candidate submit DIR` archives a
 * folder with origin 'human' and marks it with `refs/whale/submitted/<tree>`; the next harness phase
 * of every run sharing the archive validates and scores each submission it has not seen yet, like a
 * proposal, so the archive-wide acceptance may pick it. The mark stays, so later runs see it too
 * (scoring a pair again is a cache hit).
 */
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { HarnessArchive } from './harnessArchive.js';
import { readJsonWithSchema } from '../core/jsonFile.js';
import { HarnessManifest, MAX_MANIFEST_BYTES } from '../core/manifest.js';
import { InputError } from '../core/errors.js';

const SUBMITTED = 'submitted/';

export interface Submission {
  treeHash: string;
  /** False when an identical candidate was already archived (it is marked as submitted all the same). */
  created: boolean;
}

/**
 * Archives `dir` as a human candidate. Checks what can be checked without running code (the folder
 * and its manifest); the harness phase runs the full validation (bundle, smoke rollout) and records
 * the reasons when it fails, as for any proposal.
 */
export async function submitCandidate(
  archive: HarnessArchive,
  dir: string,
  opts: { parents: string[]; message: string; author?: string },
): Promise<Submission> {
  const folder = resolve(dir);
  if (!existsSync(folder) || !statSync(folder).isDirectory()) throw new InputError({ file: folder }, 'not a folder');
  const manifest = join(folder, 'harness.json');
  if (!existsSync(manifest)) throw new InputError({ file: manifest }, 'a candidate folder needs a harness.json');
  readJsonWithSchema(manifest, HarnessManifest, MAX_MANIFEST_BYTES);
  const message = opts.message.trim() || 'hand-made candidate';
  const added = await archive.add(folder, {
    parents: opts.parents,
    message,
    meta: { origin: 'human', hypothesis: message, ...(opts.author ? { author: opts.author } : {}) },
  });
  await archive.setRef(SUBMITTED + added.treeHash, added.treeHash);
  return { treeHash: added.treeHash, created: added.created };
}

/** Tree hashes of every submitted candidate, oldest submission first. */
export async function submittedCandidates(archive: HarnessArchive): Promise<string[]> {
  const refs = await archive.listRefs(SUBMITTED);
  const hashes = refs.map((r) => r.treeHash).filter(Boolean);
  const all = await archive.list();
  const addedAt = new Map(all.map((c) => [c.treeHash, c.addedAt]));
  return hashes.sort((a, b) => (addedAt.get(a) ?? '').localeCompare(addedAt.get(b) ?? '') || a.localeCompare(b));
}
