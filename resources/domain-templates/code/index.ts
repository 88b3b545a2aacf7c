/**
 * __ID__: a worked example of a code domain. Replace the tasks, the tool and the verifier with your
 * own; `whale domain check` loads it, shows a few tasks and runs the verifier on the gold answers.
 * The engine bundles this file (and what it imports) and runs it in a worker thread: `whale/domain`
 * is provided by WHALE, no install needed. Its code runs only in a trusted workspace.
 */
import { defineDomain, InfraError } from 'whale/domain';

/** `domain.options` in whale.config.json. */
interface Options {
  /** Generated tasks added to the ones in tasks.jsonl. */
  generated: number;
}

/** What the harness never sees. */
interface Private {
  answer: string;
}

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 4294967296);
}

function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

export default defineDomain<Options, Private>({
  id: '__ID__',
  title: '__ID__ — arithmetic questions (a worked example)',
  description: 'Short arithmetic questions; the model may use a calculator tool. A worked example of a code domain.',
  summary: 'arithmetic questions with a calculator tool (worked example of a code domain)',
  regime: 'unknown',

  // Anything with zod's safeParse works too (`options: z.object({...})`); a function may throw.
  options(raw) {
    const o = (raw ?? {}) as { generated?: unknown };
    // A misspelt option would otherwise be ignored in silence.
    for (const k of Object.keys(o)) if (k !== 'generated') throw new Error(`unknown option '${k}' (known: generated)`);
    if (o.generated !== undefined && (typeof o.generated !== 'number' || !Number.isInteger(o.generated) || o.generated < 0)) throw new Error('generated must be a non-negative integer');
    return { generated: (o.generated as number | undefined) ?? 40 };
  },

  // Called once when the domain loads. Rows without a split go to one by a stable hash of their id.
  async tasks(ctx) {
    const { rows } = await ctx.readTable(`${ctx.moduleDir}/tasks.jsonl`);
    const fromFile = rows.map(({ row }) => ({ id: String(row.id), question: String(row.question), private: { answer: String(row.answer) }, ...(row.split ? { split: row.split as 'weight' } : {}) }));
    // Mix the project's secret into generated tasks: no task can be re-derived from its public id.
    const next = rng(hash(`__ID__:${ctx.secret ?? ''}`));
    const generated = Array.from({ length: ctx.options.generated }, (_, i) => {
      const a = Math.floor(next() * 90) + 10;
      const b = Math.floor(next() * 90) + 10;
      return { id: `gen-${i}`, question: `What is ${a} + ${b} ?`, private: { answer: String(a + b) } };
    });
    return [...fromFile, ...generated];
  },

  tools: [
    {
      name: 'calculator',
      description: 'evaluates an expression of integers with + - * and parentheses',
      parameters: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] },
      call(args) {
        const expression = String((args as { expression?: unknown }).expression ?? '');
        if (!/^[\d\s+\-*()]+$/.test(expression)) return 'error: only integers, + - * and parentheses';
        // A tool backed by a service would throw InfraError('tool', …) when the service is down:
        // the rollout is then recorded as an infrastructure failure, not as a wrong answer.
        if (expression.length > 200) throw new InfraError('tool', 'expression too long for the calculator service');
        return String(Function(`"use strict"; return (${expression});`)());
      },
    },
  ],

  // A boolean, a score in [0, 1] or {pass, score?, extracted?, reason?}. A throw is an infrastructure
  // failure (reported, not scored). Or a command in any language: { kind: 'command', command: ['python3', 'verify.py'] }.
  verify(task, rollout) {
    const m = /-?\d+/.exec(rollout.finalAnswer ?? '');
    if (!m) return { pass: false, extracted: null, reason: 'no number in the answer' };
    const pass = m[0] === task.private.answer;
    return { pass, extracted: m[0], reason: pass ? 'correct' : `expected ${task.private.answer}` };
  },

  // The answer a correct rollout gives: `whale domain check` verifies that it passes.
  gold: (task) => task.private.answer,

  // A rule every harness must obey: the answer must be something the model wrote.
  checkRules(_task, rollout) {
    const answer = rollout.finalAnswer?.trim();
    if (!answer) return null;
    return rollout.modelCalls.some((c) => c.completion.includes(answer)) ? null : 'the answer must come from a model completion';
  },

  // Per-rollout numbers the report aggregates.
  diagnostics(_task, rollout) {
    return { usedTool: rollout.events.some((e) => e.type === 'tool'), turns: rollout.modelCalls.length, answered: rollout.finalAnswer !== null };
  },

  limits: { maxTurns: 4, maxTokensPerCall: 32, verifierTimeoutMs: 10_000 },
  h0: './h0',
  searchSpace: `__ID__: arithmetic questions ("What is 12 + 30 ?"); the final answer must contain the number.
A harness may change the prompts, when and how it calls the calculator tool (<tool>calculator {"expression": "12 + 30"}</tool>),
how it reads the answer out of the reply, and its turn budget (at most 4 model calls of 32 tokens).
Rule: the answer must appear in a model completion — a harness may not compute it itself.`,
});
