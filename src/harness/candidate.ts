/**
 * Preparing a candidate folder for running: validate harness.json, check the folder holds only
 * plain files, compute its identity (git tree hash), resolve knob values, and bundle a Node entry.
 * Any problem is an InputError naming the file (and field or line) — an invalid candidate, not a
 * crash of ours.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { InputError } from '../core/errors.js';
import { readJsonWithSchema } from '../core/jsonFile.js';
import { HarnessManifest, MAX_MANIFEST_BYTES, type KnobSpec } from '../core/manifest.js';
import { gitTreeHash } from '../core/treeHash.js';
import type { KnobValue } from './sdk.js';
import { bundleCandidate, contextScriptFor, type ContextScript } from './bundle.js';

export interface PreparedHarness {
  /** Absolute folder the harness runs in: the clean materialised copy of the candidate (never the folder it came from). */
  dir: string;
  /** The folder the candidate was prepared from (for messages). */
  sourceDir?: string;
  treeHash: string;
  manifest: HarnessManifest;
  /** Knob values the harness sees: `settings`, else each knob's default. */
  knobs: Record<string, KnobValue>;
  prompts: Record<string, string>;
  runtime: 'node' | 'command';
  /** runtime 'node': the self-contained bundle of the entry. */
  bundleFile?: string;
  /** runtime 'node': the entry as a script for a fresh `vm` context per rollout, or why it needs a worker thread (bundle.ts). */
  context?: ContextScript;
  /** runtime 'command': the argv run with cwd = dir. */
  command?: string[];
}

export const MANIFEST_FILE = 'harness.json';

/** Names the tree hash skips; they must not be read by a harness either (see treeHash.ts). */
const SKIPPED = new Set(['.git', 'node_modules', '.whale-build', '.DS_Store']);

/**
 * Refuses symbolic links anywhere in the folder — also under the names the identity skips
 * (node_modules/, .git/, .whale-build/): Node's permission model follows links out of the allowed
 * folder — and hard links among the files that are copied (another name for a file that may live
 * anywhere).
 */
function checkPlainFiles(dir: string, root: string, skipped = false): void {
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    const st = lstatSync(full);
    if (st.isSymbolicLink())
      throw new InputError(
        { file: full },
        `a candidate may not contain symbolic links (${relative(root, full)}); remove it${skipped || SKIPPED.has(name) ? ' — this folder is not part of the candidate either' : ''}`,
      );
    if (st.isDirectory()) checkPlainFiles(full, root, skipped || SKIPPED.has(name));
    else if (!skipped && !SKIPPED.has(name) && st.isFile() && st.nlink > 1)
      throw new InputError({ file: full }, 'a candidate may not contain hard-linked files');
  }
}

/** Copies exactly the files the tree hash counts (no skipped names, no empty folders' content), keeping the exec bit. */
function copyHashed(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const name of readdirSync(from)) {
    if (SKIPPED.has(name)) continue;
    const src = join(from, name);
    const st = lstatSync(src);
    if (st.isDirectory()) copyHashed(src, join(to, name));
    else if (st.isFile()) {
      copyFileSync(src, join(to, name));
      chmodSync(join(to, name), st.mode & 0o111 ? 0o755 : 0o644);
    }
  }
}

/**
 * The candidate as it will run: a clean copy of what its identity hashes, under
 * `<cacheDir>/trees/<treeHash>`. The hash is computed on the copy, so what runs and what is bundled
 * is exactly what is hashed, whatever changes in the source folder meanwhile.
 */
function materialise(dir: string, cacheDir: string): { dir: string; treeHash: string } {
  const trees = join(cacheDir, 'trees');
  const tmp = join(trees, `.tmp-${process.pid}-${randomBytes(6).toString('hex')}`);
  try {
    copyHashed(dir, tmp);
    const treeHash = gitTreeHash(tmp);
    const target = join(trees, treeHash);
    if (existsSync(target) && gitTreeHash(target) === treeHash) return { dir: target, treeHash };
    rmSync(target, { recursive: true, force: true });
    try {
      renameSync(tmp, target);
    } catch (e) {
      if (!existsSync(target) || gitTreeHash(target) !== treeHash) throw e; // another process put the same tree there first
    }
    return { dir: target, treeHash };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
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
  checkPlainFiles(dir, dir);
  readJsonWithSchema(join(dir, MANIFEST_FILE), HarnessManifest, MAX_MANIFEST_BYTES); // errors name the user's file
  const copy = materialise(dir, cacheDir);
  const { treeHash } = copy;
  const manifest = readJsonWithSchema(join(copy.dir, MANIFEST_FILE), HarnessManifest, MAX_MANIFEST_BYTES);
  const base = { dir: copy.dir, sourceDir: dir, treeHash, manifest, knobs: knobValues(manifest), prompts: manifest.prompts, runtime: manifest.runtime };
  if (manifest.runtime === 'node') {
    const req = { dir: copy.dir, sourceDir: dir, entry: manifest.entry as string, treeHash, cacheDir };
    const bundleFile = await bundleCandidate(req);
    return { ...base, bundleFile, context: await contextScriptFor(req) };
  }
  return { ...base, command: manifest.command as string[] };
}
