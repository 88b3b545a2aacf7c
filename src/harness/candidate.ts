/**
 * Preparing a candidate folder for running: validate harness.json, check the folder holds only
 * plain files, compute its identity (git tree hash), resolve knob values, and bundle a Node entry.
 * Any problem is an InputError naming the file (and field or line) — an invalid candidate, not a
 * crash of ours.
 */
import { lstatSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { InputError } from '../core/errors.js';
import { readJsonWithSchema } from '../core/jsonFile.js';
import { HarnessManifest, type KnobSpec } from '../core/manifest.js';
import { gitTreeHash } from '../core/treeHash.js';
import type { KnobValue } from './sdk.js';
import { bundleCandidate } from './bundle.js';

export interface PreparedHarness {
  /** Absolute candidate folder. */
  dir: string;
  treeHash: string;
  manifest: HarnessManifest;
  /** Knob values the harness sees: `settings`, else each knob's default. */
  knobs: Record<string, KnobValue>;
  prompts: Record<string, string>;
  runtime: 'node' | 'command';
  /** runtime 'node': the self-contained bundle of the entry. */
  bundleFile?: string;
  /** runtime 'command': the argv run with cwd = dir. */
  command?: string[];
}

export const MANIFEST_FILE = 'harness.json';

/** Names the tree hash skips; they must not be read by a harness either (see treeHash.ts). */
const SKIPPED = new Set(['.git', 'node_modules', '.whale-build', '.DS_Store']);

/**
 * Refuses symbolic links and hard links: Node's permission model follows symlinks out of the
 * allowed folder, and a hard link is another name for a file that may live anywhere.
 */
function checkPlainFiles(dir: string, root: string): void {
  for (const name of readdirSync(dir)) {
    if (SKIPPED.has(name)) continue;
    const full = join(dir, name);
    const st = lstatSync(full);
    if (st.isSymbolicLink()) throw new InputError({ file: full }, 'a candidate may not contain symbolic links');
    if (st.isDirectory()) checkPlainFiles(full, root);
    else if (st.isFile() && st.nlink > 1) throw new InputError({ file: full }, 'a candidate may not contain hard-linked files');
  }
}

export function knobValues(manifest: HarnessManifest): Record<string, KnobValue> {
  const out: Record<string, KnobValue> = {};
  for (const [name, spec] of Object.entries(manifest.knobs) as [string, KnobSpec][]) out[name] = manifest.settings[name] ?? spec.default;
  return out;
}

export async function prepareCandidate(candidateDir: string, cacheDir: string): Promise<PreparedHarness> {
  const dir = resolve(candidateDir);
  try {
    if (!statSync(dir).isDirectory()) throw new Error('not a folder');
  } catch (e) {
    throw new InputError({ file: dir }, `cannot open the candidate folder (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const manifestFile = join(dir, MANIFEST_FILE);
  const manifest = readJsonWithSchema(manifestFile, HarnessManifest);
  checkPlainFiles(dir, dir);
  const treeHash = gitTreeHash(dir);
  const base = { dir, treeHash, manifest, knobs: knobValues(manifest), prompts: manifest.prompts, runtime: manifest.runtime };
  if (manifest.runtime === 'node') {
    const bundleFile = await bundleCandidate({ dir, entry: manifest.entry as string, treeHash, cacheDir });
    return { ...base, bundleFile };
  }
  return { ...base, command: manifest.command as string[] };
}
