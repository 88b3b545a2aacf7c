/**
 * The verifiers a data-only domain picks by name (`domain.data.verifier.kind`). Each kind compares a
 * prediction (the final answer, after the optional `extract` pattern) with a task's gold answers.
 * `command` is not here: it reads the whole rollout (verifiers/command.ts).
 */
import { InputError } from '../../core/errors.js';
import type { VerifierSpec } from '../../core/config.js';
import type { Verdict } from '../../core/trajectory.js';
import { mathEquivalent } from './math.js';
import { exactMatch, normaliseQa, tokenF1 } from './qa.js';

/** Compares one prediction with the gold answers. */
export type GoldCompare = (prediction: string, golds: readonly string[]) => Verdict;

/** A per-gold check `{pass, extracted, reason}` as a GoldCompare: pass when any gold passes. */
export function anyGold(check: (prediction: string, gold: string) => { pass: boolean; extracted: string | null; reason: string }): GoldCompare {
  return (prediction, golds) => {
    let last = { pass: false, extracted: null as string | null, reason: 'no gold answer' };
    for (const g of golds) {
      last = check(prediction, g);
      if (last.pass) break;
    }
    return { pass: last.pass, score: last.pass ? 1 : 0, extracted: last.extracted, reason: last.reason };
  };
}

type Kind = Exclude<VerifierSpec['kind'], 'command'>;
type SpecOf<K extends Kind> = Extract<VerifierSpec, { kind: K }>;

const show = (golds: readonly string[]) => golds.map((g) => JSON.stringify(g)).join(' or ');

/** A number in an answer: the first one, with thousands separators, a trailing % or a simple fraction. */
export function parseNumber(s: string): number | null {
  const m = /[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?(?:\s*\/\s*\d+(?:\.\d+)?)?|[-+]?\.\d+/.exec(s);
  if (!m) return null;
  const [num, den] = m[0].replace(/,/g, '').split('/');
  const v = den !== undefined ? Number(num) / Number(den) : Number(num);
  return Number.isFinite(v) ? v : null;
}

export const VERIFIERS: { [K in Kind]?: (spec: SpecOf<K>) => GoldCompare } = {
  exact: (spec) =>
    anyGold((p, g) => {
      const a = spec.caseSensitive ? p.trim() : p.trim().toLowerCase();
      const b = spec.caseSensitive ? g.trim() : g.trim().toLowerCase();
      return { pass: a !== '' && a === b, extracted: p.trim(), reason: a === b && a !== '' ? 'correct' : `expected ${JSON.stringify(g.trim())}` };
    }),
  'normalised-em': () => (p, golds) => {
    const pass = exactMatch(p, golds);
    return { pass, score: pass ? 1 : 0, extracted: normaliseQa(p), reason: pass ? 'correct' : `expected ${show(golds)}` };
  },
  'token-f1': (spec) => (p, golds) => {
    const f1 = tokenF1(p, golds);
    const pass = f1 >= spec.threshold && f1 > 0;
    return {
      pass,
      score: f1,
      extracted: normaliseQa(p),
      reason: `token F1 ${f1.toFixed(3)}${pass ? '' : ` (needs ${spec.threshold}; expected ${show(golds)})`}`,
    };
  },
  numeric: (spec) =>
    anyGold((p, g) => {
      const got = parseNumber(p);
      const want = parseNumber(g);
      if (want === null) throw new Error(`the gold answer ${JSON.stringify(g)} is not a number`);
      if (got === null) return { pass: false, extracted: null, reason: 'no number in the answer' };
      const tol = spec.relative ? spec.tolerance * Math.abs(want) : spec.tolerance;
      const pass = Math.abs(got - want) <= tol;
      return { pass, extracted: String(got), reason: pass ? 'correct' : `expected ${want} (±${tol}), got ${got}` };
    }),
  regex: (spec) =>
    anyGold((p, g) => {
      const pass = new RegExp(`^(?:${g})$`, spec.flags).test(p.trim());
      return { pass, extracted: p.trim(), reason: pass ? 'correct' : `does not match /${g}/${spec.flags}` };
    }),
  'boxed-math': () => anyGold(mathEquivalent),
};

/** Why a gold answer can never be compared under this spec (found when the tasks load, not on every rollout), or null. */
export function goldProblem(spec: VerifierSpec, gold: string): string | null {
  if (spec.kind === 'numeric' && parseNumber(gold) === null) return `the gold answer ${JSON.stringify(gold)} is not a number (verifier 'numeric')`;
  if (spec.kind === 'regex') {
    try {
      new RegExp(gold, spec.flags);
    } catch (e) {
      return `the gold answer ${JSON.stringify(gold)} is not a regular expression (verifier 'regex'): ${(e as Error).message}`;
    }
  }
  return null;
}

/** The compare function of a spec; an unknown or unavailable kind is an InputError naming the field. */
export function goldCompare(
  spec: Exclude<VerifierSpec, { kind: 'command' }>,
  where: { file: string; field: string },
): (finalAnswer: string | null, golds: readonly string[]) => Verdict {
  const make = VERIFIERS[spec.kind] as ((s: typeof spec) => GoldCompare) | undefined;
  if (!make)
    throw new InputError(
      { file: where.file, field: `${where.field}.kind` },
      `the verifier kind '${spec.kind}' is not available in this build (available: ${Object.keys(VERIFIERS).join(', ')}, command)`,
    );
  let pattern: RegExp | undefined;
  if (spec.extract !== undefined) {
    try {
      pattern = new RegExp(spec.extract, 's');
    } catch (e) {
      throw new InputError({ file: where.file, field: `${where.field}.extract` }, `not a regular expression: ${(e as Error).message}`);
    }
  }
  const compare = make(spec);
  return (finalAnswer, golds) => {
    if (finalAnswer === null) return { pass: false, score: 0, extracted: null, reason: 'no answer' };
    let p = finalAnswer;
    if (pattern) {
      const m = pattern.exec(finalAnswer);
      if (!m) return { pass: false, score: 0, extracted: null, reason: `the answer does not match extract /${spec.extract}/` };
      p = m[1] ?? m[0];
    }
    return compare(p, golds);
  };
}
