/**
 * The Math domain's shipped sample, in the field's real layouts, generated deterministically:
 * arithmetic and algebra problems with exact answers (integers, fractions, surds, decimals).
 *   resources/data/math/dapo-math-sample.parquet   DAPO-Math-17k's layout (320 rows: weight 256 + harness 64)
 *   resources/data/math/aime-2024-sample.jsonl     Maxwell-Jia/AIME_2024's columns (ID, Problem, Solution, Answer: int), 60 rows
 *   resources/data/math/aime-2025-sample.jsonl     opencompass/AIME2025's columns (question, answer: string), 60 rows
 * AIME-style answers are integers 0–999. Run: `npx tsx scripts/gen-math-sample.ts [outDir]`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SchemaElement } from 'hyparquet';
import { parquetWriteFile } from 'hyparquet-writer';
import { Rng, hashSeed } from '../src/core/rng.js';

export interface Problem {
  problem: string;
  answer: string;
  kind: string;
}

const gcd = (a: number, b: number): number => (b === 0 ? Math.abs(a) : gcd(b, a % b));

function fraction(p: number, q: number): string {
  const g = gcd(p, q);
  const [n, d] = [p / g, q / g];
  return d === 1 ? String(n) : `${n < 0 ? '-' : ''}\\frac{${Math.abs(n)}}{${d}}`;
}

function powMod(a: number, k: number, m: number): number {
  let r = 1;
  let b = a % m;
  for (let e = k; e > 0; e >>= 1) {
    if (e & 1) r = (r * b) % m;
    b = (b * b) % m;
  }
  return r;
}

const signed = (b: number) => (b < 0 ? `- ${-b}` : `+ ${b}`);

/** Problems whose answers are integers 0–999 (AIME's format). */
const INTEGER_KINDS: Record<string, (r: Rng) => Problem> = {
  powmod(r) {
    const a = 2 + r.int(19);
    const k = 20 + r.int(80);
    const m = 7 + r.int(990);
    return { kind: 'powmod', problem: `What is the remainder when $${a}^{${k}}$ is divided by $${m}$?`, answer: String(powMod(a, k, m)) };
  },
  divisors(r) {
    const e = [r.int(6), r.int(4), r.int(3), r.int(2), r.int(2)];
    const n = [2, 3, 5, 7, 11].reduce((acc, p, i) => acc * p ** e[i], 1);
    const count = e.reduce((acc, x) => acc * (x + 1), 1);
    return { kind: 'divisors', problem: `How many positive divisors does $${n}$ have?`, answer: String(count) };
  },
  rootgap(r) {
    const r1 = 1 + r.int(40);
    const r2 = r1 + 1 + r.int(60);
    return { kind: 'rootgap', problem: `Find the positive difference between the roots of $x^2 - ${r1 + r2}x + ${r1 * r2} = 0$.`, answer: String(r2 - r1) };
  },
  series(r) {
    const a = 1 + r.int(50);
    const b = a + 10 + r.int(300);
    const s = ((a + b) * (b - a + 1)) / 2;
    return {
      kind: 'series',
      problem: `Find the remainder when the sum of the integers from $${a}$ to $${b}$ inclusive is divided by $1000$.`,
      answer: String(s % 1000),
    };
  },
  lcm(r) {
    const g = 1 + r.int(9);
    const a = g * (2 + r.int(9));
    const b = g * (2 + r.int(9));
    const l = (a * b) / gcd(a, b);
    return { kind: 'lcm', problem: `What is the least common multiple of $${a}$ and $${b}$?`, answer: String(l) };
  },
  system(r) {
    const x = 2 + r.int(30);
    const y = 1 + r.int(x - 1);
    return { kind: 'system', problem: `If $x + y = ${x + y}$ and $x - y = ${x - y}$, what is $xy$?`, answer: String(x * y) };
  },
};

/** Problems with other exact answers: fractions, negative numbers, surds, decimals. */
const GENERAL_KINDS: Record<string, (r: Rng) => Problem> = {
  linear(r) {
    const x = r.int(41) - 20;
    const a = 2 + r.int(11);
    const b = r.int(101) - 50;
    return { kind: 'linear', problem: `Solve for $x$: $${a}x ${signed(b)} = ${a * x + b}$.`, answer: String(x) };
  },
  fracsum(r) {
    const [b, d] = [2 + r.int(11), 2 + r.int(11)];
    const [a, c] = [1 + r.int(b - 1), 1 + r.int(d - 1)];
    return {
      kind: 'fracsum',
      problem: `What is $\\frac{${a}}{${b}} + \\frac{${c}}{${d}}$? Express your answer as a common fraction.`,
      answer: fraction(a * d + c * b, b * d),
    };
  },
  surd(r) {
    const k = 2 + r.int(9);
    const m = r.pick([2, 3, 5, 6, 7, 10, 11, 13]);
    return { kind: 'surd', problem: `Simplify $\\sqrt{${k * k * m}}$.`, answer: `${k}\\sqrt{${m}}` };
  },
  percent(r) {
    const p = r.pick([5, 12, 15, 25, 35, 40, 62.5, 75]);
    const n = 8 * (1 + r.int(50));
    const v = (p * n) / 100;
    return { kind: 'percent', problem: `What is $${p}\\%$ of $${n}$?`, answer: String(v) };
  },
  ...INTEGER_KINDS,
};

/** `seen` is shared by all files, so no problem is in two splits. */
function problems(seed: string, n: number, kinds: Record<string, (r: Rng) => Problem>, seen: Set<string>): Problem[] {
  const names = Object.keys(kinds);
  const out: Problem[] = [];
  for (let i = 0; out.length < n; i++) {
    const r = new Rng(hashSeed(`whale:math-sample:${seed}:${i}`));
    const p = kinds[names[out.length % names.length]](r);
    if (seen.has(p.problem)) continue;
    seen.add(p.problem);
    out.push(p);
  }
  return out;
}

/** DAPO-Math-17k's instruction around every problem (stripped again by the loader). */
export function dapoPrompt(problem: string): string {
  return `Solve the following math problem step by step. The last line of your response should be of the form Answer: $Answer (without quotes) where $Answer is the answer to the problem.\n\n${problem}\n\nRemember to put your answer on its own line after "Answer:".`;
}

function uuidish(seed: string, i: number): string {
  const h = (s: string) => hashSeed(s).toString(16).padStart(8, '0');
  const a = h(`${seed}:${i}:a`) + h(`${seed}:${i}:b`) + h(`${seed}:${i}:c`) + h(`${seed}:${i}:d`);
  return `${a.slice(0, 8)}-${a.slice(8, 12)}-${a.slice(12, 16)}-${a.slice(16, 20)}-${a.slice(20, 32)}`;
}

const utf8 = (name: string): SchemaElement => ({ name, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' });

/**
 * DAPO-Math-17k's Parquet schema, nested as the hub's file has it (pyarrow reads `prompt` as
 * list<struct<content, role>>, `reward_model` and `extra_info` as structs) — not JSON strings, which
 * is what hyparquet-writer makes of objects without an explicit schema.
 */
export const DAPO_SCHEMA: SchemaElement[] = [
  { name: 'root', num_children: 5 },
  utf8('data_source'),
  { name: 'prompt', repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
  { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
  { name: 'element', repetition_type: 'OPTIONAL', num_children: 2 },
  utf8('content'),
  utf8('role'),
  utf8('ability'),
  { name: 'reward_model', repetition_type: 'OPTIONAL', num_children: 2 },
  utf8('ground_truth'),
  utf8('style'),
  { name: 'extra_info', repetition_type: 'OPTIONAL', num_children: 1 },
  utf8('index'),
];

/** Rows in DAPO's layout: one user message, the ground truth, an index. */
export function writeDapoParquet(file: string, rows: { prompt: string; answer: string; index: string; dataSource?: string }[]): void {
  parquetWriteFile({
    filename: file,
    schema: DAPO_SCHEMA,
    columnData: [
      { name: 'data_source', data: rows.map((r) => r.dataSource ?? 'math_dapo') },
      { name: 'prompt', data: rows.map((r) => [{ content: r.prompt, role: 'user' }]) },
      { name: 'ability', data: rows.map(() => 'MATH') },
      { name: 'reward_model', data: rows.map((r) => ({ ground_truth: r.answer, style: 'rule-lighteval/MATH_v2' })) },
      { name: 'extra_info', data: rows.map((r) => ({ index: r.index })) },
    ],
  });
}

export function writeMathSample(outDir: string): { files: string[]; counts: Record<string, number> } {
  mkdirSync(outDir, { recursive: true });
  const seen = new Set<string>();
  const dapo = problems('dapo', 320, GENERAL_KINDS, seen);
  const dapoFile = path.join(outDir, 'dapo-math-sample.parquet');
  writeDapoParquet(
    dapoFile,
    dapo.map((p, i) => ({ prompt: dapoPrompt(p.problem), answer: p.answer, index: uuidish('dapo', i) })),
  );
  const a24 = problems('aime2024', 60, INTEGER_KINDS, seen);
  const a24File = path.join(outDir, 'aime-2024-sample.jsonl');
  writeFileSync(
    a24File,
    a24.map((p, i) => JSON.stringify({ ID: `2024-S-${i + 1}`, Problem: p.problem, Solution: '', Answer: Number(p.answer) })).join('\n') + '\n',
  );
  const a25 = problems('aime2025', 60, INTEGER_KINDS, seen);
  const a25File = path.join(outDir, 'aime-2025-sample.jsonl');
  // opencompass/AIME2025 has no id column; answers are strings there.
  writeFileSync(a25File, a25.map((p) => JSON.stringify({ question: p.problem, answer: p.answer })).join('\n') + '\n');
  return { files: [dapoFile, a24File, a25File], counts: { dapo: dapo.length, aime2024: a24.length, aime2025: a25.length } };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'resources', 'data', 'math');
  const r = writeMathSample(out);
  console.log(`wrote ${r.files.join(', ')} (${JSON.stringify(r.counts)})`);
}
