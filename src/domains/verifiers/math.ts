/**
 * `\boxed{}` answers and their equivalence, as the field scores math (DAPO-Math, AIME; the Python
 * side uses math-verify): the last `\boxed{…}` (or `\fbox{…}`) of a completion, normalised (`\dfrac`,
 * units, `\text{…}`, percentages, thousands separators, leading zeros), then compared as strings,
 * as exact numbers, symbolically with a CAS (@cortex-js/compute-engine 0.27, the last release that
 * runs on Node 20) and finally numerically, by evaluating both at the same random points.
 */
import { ComputeEngine } from '@cortex-js/compute-engine';

/**
 * The part of the CAS's boxed expression used here. Typed by hand: the package's .d.ts re-export
 * their modules without file extensions, which NodeNext resolution cannot follow (they come out `any`).
 */
interface BoxedExpression {
  readonly isValid: boolean;
  readonly operator: string;
  readonly ops: readonly BoxedExpression[] | null;
  readonly unknowns: readonly string[];
  readonly re: number;
  readonly im: number;
  N(): BoxedExpression;
  evaluate(): BoxedExpression;
  subs(values: Record<string, number>): BoxedExpression;
  isSame(other: BoxedExpression): boolean;
  isEqual(other: BoxedExpression): boolean | undefined;
}
interface Engine {
  parse(latex: string): BoxedExpression;
  box(json: unknown): BoxedExpression;
}

export interface MathVerdict {
  pass: boolean;
  /** The prediction's answer as compared (the last box's content, normalised), or null when there is none. */
  extracted: string | null;
  reason: string;
}

/** The content of the last `\boxed{…}` / `\fbox{…}` (braces balanced, nested ones kept), or null. `\boxed 5` counts too. */
export function extractBoxed(text: string): string | null {
  const re = /\\(?:boxed|fbox)\s*(\{|\s+([^\s$]+))/g;
  let last: string | null = null;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m[2] !== undefined) {
      last = m[2];
      continue;
    }
    const start = m.index + m[0].length;
    let depth = 1;
    let i = start;
    for (; i < text.length && depth > 0; i++) {
      const c = text[i];
      if (c === '\\')
        i++; // an escaped brace (\{ \}) does not open or close the box
      else if (c === '{') depth++;
      else if (c === '}') depth--;
    }
    if (depth === 0) last = text.slice(start, i - 1);
  }
  return last;
}

const UNIT_WORDS =
  'cm|mm|km|m|meters?|metres?|centimeters?|inches|inch|in|feet|foot|ft|yards?|miles?|units?|sq|square|cubic|degrees?|deg|radians?|rad|seconds?|secs?|s|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?|dollars?|cents?|grams?|g|kg|pounds?|lbs?|liters?|litres?|l|ml|mph|people|students|ways|points|times';
const TRAILING_UNITS = new RegExp(
  `^(.*?[\\d}).])(?:\\s*\\\\(?:text|mbox|mathrm|textbf|mathit)\\s*\\{[^{}]*\\}|\\s+(?:${UNIT_WORDS})(?:\\^\\{?[23]\\}?)?)\\s*$`,
);

/**
 * A normal form of one answer: the box unwrapped, math delimiters and spacing commands dropped,
 * `\dfrac`/`\tfrac` as `\frac`, degrees, dollars and trailing units removed, a lone `x =` dropped,
 * `1{,}000` and `1,000` as `1000`, and integers without leading zeros.
 */
export function normaliseAnswer(raw: string): { text: string; percent: boolean } {
  let s = raw.trim();
  const boxed = extractBoxed(s);
  if (boxed !== null) s = boxed;
  s = s
    .replace(/^\$+|\$+$/g, '')
    .replace(/^\\\(|\\\)$/g, '')
    .replace(/^\\\[|\\\]$/g, '')
    .trim()
    .replace(/\\[dt]frac/g, '\\frac')
    .replace(/\\left\b|\\right\b/g, '')
    .replace(/\\displaystyle/g, '')
    .replace(/\\[!,;:]|\\ |~/g, ' ')
    .replace(/\^\s*\{?\s*\\circ\s*\}?|°/g, '')
    .replace(/\\\$|\$/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[.。]$/, '')
    .trim();
  // A whole answer in \text{…}: the text itself ("\text{(B)}" is "(B)").
  const wholeText = /^\\(?:text|mbox|mathrm|textbf)\s*\{([^{}]*)\}$/.exec(s);
  if (wholeText) s = wholeText[1].trim();
  for (let k = 0; k < 3; k++) {
    const u = TRAILING_UNITS.exec(s);
    if (!u) break;
    s = u[1].trim();
  }
  // "x = 5", "k=5": the value (only when the left side is one variable, so equations stay equations).
  const assign = /^[a-zA-Z](?:_\{?\w+\}?)?\s*=\s*([^=]+)$/.exec(s);
  if (assign) s = assign[1].trim();
  let percent = false;
  const pct = /^(.*?)\s*\\?%$/.exec(s);
  if (pct) {
    s = pct[1].trim();
    percent = true;
  }
  // Thousands separators only in the full pattern (1,000 or 12{,}345.5), so tuples like 1,2 survive.
  if (/^-?\d{1,3}((\{,\}|,|\\,| )\d{3})+(\.\d+)?$/.test(s)) s = s.replace(/\{,\}|,|\\,| /g, '');
  // Leading zeros of integers (AIME writes 033) and a trailing ".0".
  if (/^-?\d+(\.0+)?$/.test(s)) s = s.replace(/\.0+$/, '').replace(/^(-?)0+(?=\d)/, '$1');
  // Plain ASCII the model may write instead of LaTeX.
  s = s.replace(/\bsqrt\s*\(([^()]*)\)/g, '\\sqrt{$1}').replace(/(^|[^\\a-zA-Z])pi\b/g, '$1\\pi');
  return { text: s, percent };
}

type Rational = [bigint, bigint];

function decimal(s: string): Rational | null {
  const m = /^([-+]?)(\d*)(?:\.(\d*))?$/.exec(s);
  if (!m || (m[2] === '' && !m[3])) return null;
  const frac = m[3] ?? '';
  const n = BigInt(`${m[2] || '0'}${frac}`) * (m[1] === '-' ? -1n : 1n);
  return [n, 10n ** BigInt(frac.length)];
}

/** The exact value of a plain number or fraction (`-3`, `2.50`, `7/8`, `\frac{7}{8}`, `-\frac{7}{8}`), or null. */
function plainNumber(s: string): Rational | null {
  const d = decimal(s);
  if (d) return d;
  const f = /^([-+]?)(?:\\frac\{([-+]?[\d.]+)\}\{([-+]?[\d.]+)\}|([-+]?[\d.]+)\s*\/\s*([-+]?[\d.]+))$/.exec(s);
  if (!f) return null;
  const n = decimal(f[2] ?? f[4]);
  const q = decimal(f[3] ?? f[5]);
  if (!n || !q || q[0] === 0n) return null;
  return [(f[1] === '-' ? -1n : 1n) * n[0] * q[1], n[1] * q[0]];
}

function sameRational([a, b]: Rational, [c, d]: Rational, scale: Rational = [1n, 1n]): boolean {
  return a * scale[0] * d === c * b * scale[1];
}

// Values computed in floating point: equal within this relative error (and 1e-12 absolute, for values near 0).
const REL_TOL = 1e-9;
function close(a: number, b: number): boolean {
  if (!Number.isFinite(a) || !Number.isFinite(b)) return a === b;
  const diff = Math.abs(a - b);
  return diff <= 1e-12 || diff <= REL_TOL * Math.max(Math.abs(a), Math.abs(b));
}
/** Beyond this, doubles cannot tell neighbouring integers apart: values are compared exactly by the CAS. */
const EXACT_ABOVE = 2 ** 53;

let engine: Engine | undefined;
function ce(): Engine {
  engine ??= new ComputeEngine() as unknown as Engine;
  return engine;
}

function parse(s: string): BoxedExpression | null {
  try {
    const e = ce().parse(s);
    return e.isValid ? e : null;
  } catch {
    return null;
  }
}

function exactlySame(a: BoxedExpression, b: BoxedExpression): boolean {
  try {
    return a.evaluate().isSame(b.evaluate());
  } catch {
    return false;
  }
}

function realValue(e: BoxedExpression): number | null {
  try {
    const n = e.N();
    const v = n.im === 0 ? n.re : NaN;
    return typeof v === 'number' && Number.isFinite(v) ? v : null;
  } catch {
    return null;
  }
}

const PROBES = [0.37, 1.61, -2.3, 3.14159];

/** Same value at the same random points for every free variable (both sides must have the same unknowns). */
function sameAtPoints(a: BoxedExpression, b: BoxedExpression): boolean {
  const vars = [...new Set([...a.unknowns, ...b.unknowns])];
  if (vars.length === 0 || vars.length > 4) return false;
  if (a.unknowns.length !== b.unknowns.length || a.unknowns.some((v) => !b.unknowns.includes(v))) return false;
  let compared = 0;
  for (let k = 0; k < PROBES.length; k++) {
    const subs = Object.fromEntries(vars.map((v, j) => [v, PROBES[(k + j) % PROBES.length] + j * 0.11]));
    const x = realValue(a.subs(subs));
    const y = realValue(b.subs(subs));
    if (x === null && y === null) continue;
    if (x === null || y === null || !close(x, y)) return false;
    compared++;
  }
  return compared >= 2;
}

/** Tuples, sets and lists: element by element (in order for tuples, any order for sets). */
function heads(e: BoxedExpression): string {
  return e.operator;
}

function casEqual(a: BoxedExpression, b: BoxedExpression): 'symbolic' | 'numeric' | null {
  const collections = ['Tuple', 'List', 'Delimiter', 'Set', 'Sequence'];
  if (collections.includes(heads(a)) || collections.includes(heads(b))) {
    if (heads(a) !== heads(b) || a.ops!.length !== b.ops!.length) return null;
    if (heads(a) === 'Set') {
      const left = [...b.ops!];
      for (const x of a.ops!) {
        const i = left.findIndex((y) => casEqual(x, y) !== null);
        if (i < 0) return null;
        left.splice(i, 1);
      }
      return 'symbolic';
    }
    return a.ops!.every((x, i) => casEqual(x, b.ops![i]) !== null) ? 'symbolic' : null;
  }
  if (a.isSame(b)) return 'symbolic';
  const x = realValue(a);
  const y = realValue(b);
  if (x !== null && y !== null) {
    if (Math.max(Math.abs(x), Math.abs(y)) >= EXACT_ABOVE) return exactlySame(a, b) ? 'symbolic' : null;
    return close(x, y) ? 'numeric' : null;
  }
  try {
    if (a.isEqual(b) === true) return 'symbolic';
  } catch {
    /* the CAS could not decide: try values */
  }
  return sameAtPoints(a, b) ? 'numeric' : null;
}

/** Text compared loosely: `\\text{}` unwrapped, spaces and braces dropped, a choice's parentheses removed; words (2+ letters) case-blind, symbols not (a ≠ A). */
/**
 * Whether the CAS may look at an answer. It runs synchronously inside the engine, so an answer it
 * would grind on for seconds (measured: `99999!` 10 s, `\\sum_{n=1}^{10^9} n` 5 s, a 4,000-character sum
 * 1.5 s) stalls every rollout in flight: such answers are compared as text only.
 */
function casSafe(s: string): boolean {
  if (s.length > 300) return false;
  if (/\\(sum|prod|int|lim|iint|oint)(?![a-zA-Z])/.test(s)) return false;
  for (const m of s.matchAll(/(\d+)\s*!/g)) if (Number(m[1]) > 170) return false;
  return !/[)}]\s*!/.test(s); // the factorial of an expression: its size is unknown
}

function loose(s: string): string {
  const t = s
    .replace(/\\text\s*\{([^{}]*)\}/g, '$1')
    .replace(/[\s{}]/g, '')
    .replace(/^\((\w)\)$/, '$1');
  return /^[a-zA-Z][a-zA-Z\s'-]+$/.test(s.replace(/\\text\s*\{([^{}]*)\}/g, '$1').trim()) ? t.toLowerCase() : t;
}

/**
 * Whether `prediction` (a completion or an extracted answer: its last `\boxed{}` is used when it has
 * one) states the same mathematical answer as `gold`. The reason says how it matched or why not.
 */
export function mathEquivalent(prediction: string, gold: string): MathVerdict {
  const boxed = extractBoxed(prediction);
  const source = boxed ?? prediction;
  if (source.trim() === '') return { pass: false, extracted: null, reason: boxed === null ? 'no answer' : 'empty \\boxed{}' };
  const p = normaliseAnswer(source);
  const g = normaliseAnswer(gold);
  const extracted = p.text;
  if (extracted === '') return { pass: false, extracted, reason: 'empty answer' };
  if (g.text === '') return { pass: false, extracted, reason: 'the gold answer is empty' };
  const ok = (how: string): MathVerdict => ({ pass: true, extracted, reason: `correct (${how})` });
  const wrong: MathVerdict = { pass: false, extracted, reason: `expected ${gold.trim()}, got ${extracted}` };

  if (p.text === g.text || loose(p.text) === loose(g.text)) return ok(p.percent !== g.percent ? 'percent' : 'same text');
  // A percentage may be read as its number or as a fraction of 1: 50\% = 50 = 0.5.
  const scales = p.percent === g.percent ? [1] : p.percent ? [1, 0.01] : [1, 100];
  const pn = plainNumber(p.text);
  const gn = plainNumber(g.text);
  if (pn !== null && gn !== null)
    return scales.some((k) => sameRational(pn, gn, k === 1 ? [1n, 1n] : k < 1 ? [1n, 100n] : [100n, 1n])) ? ok('same number') : wrong;

  if (!casSafe(p.text) || !casSafe(g.text)) return wrong;
  const pe = parse(p.text);
  const ge = parse(g.text);
  if (!pe || !ge) return wrong;
  for (const k of scales) {
    const how = casEqual(k === 1 ? pe : ce().box(['Multiply', k, pe]), ge);
    if (how) return ok(how === 'symbolic' ? 'equivalent by CAS' : 'equal values');
  }
  return wrong;
}
