/**
 * Candidate validation before evaluation (the harness phase calls it for every proposed candidate):
 *
 * 1. FST mode only: nothing but the declared prompt strings may differ from h0 — every file byte for
 *    byte (and its executable bit), harness.json field by field except the values of `prompts`
 *    (adding or removing a prompt is a change too). Each difference is a reason naming file and field.
 * 2. The manifest is valid and the candidate bundles (`runtime.prepare`): each InputError (file, line,
 *    field) becomes a reason.
 * 3. A one-task smoke run through the real runtime (one rollout on one task of the harness split).
 *    The domain's rules are checked inside the rollout. Invalid if it ends in a crash, a protocol
 *    error, a rule violation, or a sandbox limit (timeout, CPU, memory, output). An 'error'
 *    termination (the policy backend or our runtime failed, not the harness) is a warning, not a
 *    reason. A wrong or missing answer is fine: quality is what evaluation measures.
 * The smoke run is skipped when steps 1–2 already found reasons (no rollout paid for a lost cause).
 */
import { lstatSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as jsonc from 'jsonc-parser';
import { InputError } from '../core/errors.js';
import type { Termination, Trajectory } from '../core/trajectory.js';
import type { Domain, Task } from '../domains/types.js';
import type { PreparedHarness } from '../harness/candidate.js';
import type { RolloutOptions } from '../harness/runtime.js';
import type { SearchMode } from './proposer.js';

/** What validation needs of the harness runtime (HarnessRuntime satisfies it). */
export interface ValidationRuntime {
  prepare(candidateDir: string): Promise<PreparedHarness>;
  rollout(prepared: PreparedHarness, task: Task, opts: RolloutOptions): Promise<Trajectory>;
}

export interface ValidateOptions {
  runtime: ValidationRuntime;
  domain: Domain;
  mode: SearchMode;
  /** The run's initial harness; required in FST mode (the reference every candidate is compared with). */
  h0Dir?: string;
  /** The smoke run's task (default: the first task of the domain's harness split). */
  smokeTask?: Task;
  /** The smoke rollout's seed (default 0). */
  seed?: number;
  runId?: string;
  phase?: string;
}

export type ValidationResult =
  | { ok: true; prepared: PreparedHarness; smoke: Trajectory; smokeRollouts: number; warnings: string[] }
  | { ok: false; reasons: string[]; smoke?: Trajectory; smokeRollouts: number; warnings: string[] };

/** Terminations that make a candidate invalid (the harness's fault, whatever the model did). */
export const INVALID_TERMINATIONS: ReadonlySet<Termination> = new Set<Termination>([
  'crash',
  'protocol_error',
  'rule_violation',
  'timeout',
  'cpu_limit',
  'memory_limit',
  'output_limit',
]);

const MANIFEST = 'harness.json';
const IGNORED = new Set(['.git', 'node_modules', '.whale-build', '.DS_Store']);

export async function validateCandidate(candidateDir: string, opts: ValidateOptions): Promise<ValidationResult> {
  const reasons: string[] = [];
  const warnings: string[] = [];
  if (opts.mode === 'fst') {
    if (!opts.h0Dir) throw new Error('validateCandidate: FST mode needs h0Dir');
    reasons.push(...fstDifferences(opts.h0Dir, candidateDir));
  }
  let prepared: PreparedHarness | undefined;
  try {
    prepared = await opts.runtime.prepare(candidateDir);
  } catch (e) {
    if (e instanceof InputError) reasons.push(...e.all.map((x) => x.message));
    else reasons.push(`cannot prepare the candidate: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (reasons.length > 0 || !prepared) return { ok: false, reasons, smokeRollouts: 0, warnings };

  const task = opts.smokeTask ?? opts.domain.tasks('harness')[0];
  if (!task) return { ok: false, reasons: ['no task to run the smoke test on (the harness split is empty)'], smokeRollouts: 0, warnings };
  const smoke = await opts.runtime.rollout(prepared, task, {
    sampleIndex: 0,
    seed: opts.seed ?? 0,
    split: task.split,
    ...(opts.runId !== undefined ? { runId: opts.runId } : {}),
    phase: opts.phase ?? 'smoke',
  });
  const detail = smoke.terminationDetail ? `: ${smoke.terminationDetail}` : '';
  if (INVALID_TERMINATIONS.has(smoke.termination)) {
    return { ok: false, reasons: [`smoke run on task ${task.id}: ${smoke.termination}${detail}`], smoke, smokeRollouts: 1, warnings };
  }
  if (smoke.termination === 'infra_error')
    warnings.push(`smoke run on task ${task.id} hit an infrastructure failure (not the harness's; not a verdict): ${smoke.terminationDetail ?? 'no detail'}`);
  if (smoke.termination === 'error')
    warnings.push(`smoke run on task ${task.id} ended in an error that is not the harness's (${smoke.terminationDetail ?? 'no detail'})`);
  return { ok: true, prepared, smoke, smokeRollouts: 1, warnings };
}

// ---------------------------------------------------------------------------------------------
// FST: only the declared prompt strings may change

interface FileEntry {
  full: string;
  exec: boolean;
  link: boolean;
}

function listFiles(root: string): Map<string, FileEntry> {
  const out = new Map<string, FileEntry>();
  const walk = (d: string, rel: string) => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const name of names.sort()) {
      if (IGNORED.has(name)) continue;
      const full = join(d, name);
      const path = rel ? `${rel}/${name}` : name;
      const st = lstatSync(full);
      if (st.isDirectory()) walk(full, path);
      else if (st.isSymbolicLink()) out.set(path, { full, exec: false, link: true });
      else if (st.isFile()) out.set(path, { full, exec: (statSync(full).mode & 0o111) !== 0, link: false });
    }
  };
  walk(root, '');
  return out;
}

function firstDifferentLine(a: Buffer, b: Buffer): number {
  const la = a.toString('utf8').split('\n');
  const lb = b.toString('utf8').split('\n');
  for (let i = 0; i < Math.max(la.length, lb.length); i++) if (la[i] !== lb[i]) return i + 1;
  return 1;
}

const NOTE = 'FST mode may change only the prompt strings in harness.json';

/**
 * Every way `candidateDir` differs from `h0Dir` other than the values of harness.json `prompts`.
 * Empty when the candidate is a legal FST candidate.
 */
export function fstDifferences(h0Dir: string, candidateDir: string): string[] {
  const reasons: string[] = [];
  const a = listFiles(h0Dir);
  const b = listFiles(candidateDir);
  for (const path of [...new Set([...a.keys(), ...b.keys()])].sort()) {
    const fa = a.get(path);
    const fb = b.get(path);
    if (!fb) {
      reasons.push(`${path}: removed (${NOTE})`);
      continue;
    }
    if (!fa) {
      reasons.push(`${path}: added (${NOTE})`);
      continue;
    }
    if (fb.link || fa.link) {
      if (fb.link !== fa.link) reasons.push(`${path}: ${fb.link ? 'is now a symbolic link' : 'is no longer a symbolic link'} (${NOTE})`);
      continue;
    }
    if (path === MANIFEST) {
      reasons.push(...manifestDifferences(fa.full, fb.full));
      continue;
    }
    const ba = readFileSync(fa.full);
    const bb = readFileSync(fb.full);
    if (!ba.equals(bb)) reasons.push(`${path}:${firstDifferentLine(ba, bb)}: changed (${NOTE})`);
    if (fa.exec !== fb.exec) reasons.push(`${path}: executable bit changed (${NOTE})`);
  }
  return reasons;
}

function parseJson(file: string): { value?: unknown; error?: string } {
  const errors: jsonc.ParseError[] = [];
  const value: unknown = jsonc.parse(readFileSync(file, 'utf8'), errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0) return { error: `invalid JSON (${jsonc.printParseErrorCode(errors[0].error)} at offset ${errors[0].offset})` };
  return { value };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function show(v: unknown): string {
  const s = JSON.stringify(v);
  return s === undefined ? 'nothing' : s.length > 60 ? s.slice(0, 57) + '…' : s;
}

function manifestDifferences(h0File: string, candFile: string): string[] {
  const a = parseJson(h0File);
  const b = parseJson(candFile);
  if (b.error) return [`${MANIFEST}: ${b.error}`];
  if (a.error) return [`${MANIFEST} of h0: ${a.error}`];
  if (!isObject(a.value) || !isObject(b.value)) return isObject(b.value) ? [] : [`${MANIFEST}: not a JSON object`];
  const out: string[] = [];
  const ha = a.value;
  const hb = b.value;
  for (const key of [...new Set([...Object.keys(ha), ...Object.keys(hb)])].sort()) {
    if (key === 'prompts') {
      const pa = isObject(ha.prompts) ? ha.prompts : {};
      const pb = isObject(hb.prompts) ? hb.prompts : undefined;
      if (!pb) {
        out.push(`${MANIFEST}: prompts is ${hb.prompts === undefined ? 'missing' : 'not an object'} (${NOTE})`);
        continue;
      }
      for (const name of [...new Set([...Object.keys(pa), ...Object.keys(pb)])].sort()) {
        if (!(name in pb)) out.push(`${MANIFEST}: prompts.${name} removed (${NOTE}; a prompt's text may change, the set of prompts may not)`);
        else if (!(name in pa)) out.push(`${MANIFEST}: prompts.${name} added (${NOTE}; a prompt's text may change, the set of prompts may not)`);
      }
      continue;
    }
    diffValue(ha[key], hb[key], key, out);
  }
  return out;
}

function diffValue(a: unknown, b: unknown, path: string, out: string[]): void {
  if (isObject(a) && isObject(b)) {
    for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) diffValue(a[k], b[k], `${path}.${k}`, out);
    return;
  }
  if (JSON.stringify(a) === JSON.stringify(b)) return;
  const what = a === undefined ? `added (${show(b)})` : b === undefined ? `removed (was ${show(a)})` : `changed from ${show(a)} to ${show(b)}`;
  out.push(`${MANIFEST}: ${path} ${what} (${NOTE})`);
}
