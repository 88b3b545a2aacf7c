/**
 * The paper's Math domain: DAPO-Math-17k for training, AIME 2024/2025 for evaluation, answers in
 * `\boxed{}` checked by CAS equivalence, one tool `code_interpreter` on a SandboxFusion-compatible
 * service, and an assistant token budget. Weight-dominated in the paper (its base model ran past the
 * budget on 95.8% of answers). Without `files`, the shipped sample in the same formats is used.
 */
import * as path from 'node:path';
import { z } from 'zod';
import { InputError } from '../../core/errors.js';
import { type DomainContext, SplitSizes, answerFromModelRule, harnessDir, resourcesDir } from '../common.js';
import { materialise } from '../definition.js';
import { defineDomain, type RolloutView, type TaskInput } from '../sdk.js';
import type { Diagnostics, Domain, RolloutRecord, Split, Task } from '../types.js';
import { SPLITS } from '../types.js';
import { extractBoxed, mathEquivalent } from '../verifiers/math.js';
import { codeInterpreterTool } from './codeInterpreter.js';
import { type MathFileSpec, type MathPrivate, loadMathSplits } from './data.js';

export const MATH_ID = 'math';
export const MATH_TITLE = 'math — DAPO-Math / AIME with a Python sandbox';
/** The assistant token budget when the options name none (completion tokens over the whole rollout). */
export const MATH_DEFAULT_ASSISTANT_TOKENS = 4096;
/** Model calls a candidate may make at most (h0 makes 2). */
export const MATH_MAX_TURNS = 16;

const FileSpec = z.union([
  z.string().min(1),
  z.object({ file: z.string().min(1), offset: z.number().int().nonnegative().optional(), limit: z.number().int().positive().optional() }).strict(),
]);
const FileList = z.union([FileSpec, z.array(FileSpec).min(1)]);

export const MathOptions = z
  .object({
    /** Which files feed which split (DAPO Parquet, AIME JSONL/Parquet/CSV); relative to the config file. Default: the shipped sample. */
    files: z.object({ weight: FileList, harness: FileList, val: FileList, test: FileList }).partial().strict().optional(),
    /** DAPO's own "Answer:" instruction around each problem: kept (verl's ReTool recipe appends the \boxed format to it) or stripped. */
    dapoInstruction: z.enum(['keep', 'strip']).default('keep'),
    /** Skip repeats of a problem (DAPO-Math-17k ships each ~100 times, DAPO's AIME-2024 32 times); a problem is kept in the first split that has it. */
    dedupe: z.boolean().default(true),
    /** A prefix of each split. */
    sizes: SplitSizes.optional(),
    /** SandboxFusion-compatible service (`whale sandbox serve` listens on http://127.0.0.1:8080 by default). */
    sandboxUrl: z.string().url().default('http://127.0.0.1:8080'),
    /** run_timeout (s) and memory_limit_MB of each code run. */
    runTimeout: z.number().positive().max(600).default(10),
    memoryLimitMb: z.number().int().positive().default(1024),
    /** Characters of code output shown to the model. */
    maxOutputChars: z.number().int().positive().default(4000),
    /** The paper's assistant token budget: completion tokens over a whole rollout, enforced by the gateway. */
    maxAssistantTokens: z.number().int().positive().default(MATH_DEFAULT_ASSISTANT_TOKENS),
    /** Completion tokens of one model call (default: the whole budget). */
    maxTokensPerCall: z.number().int().positive().optional(),
  })
  .strict();
export type MathOptions = z.infer<typeof MathOptions>;

export function parseMathOptions(options: unknown): MathOptions {
  const r = MathOptions.safeParse(options ?? {});
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const field = ['domain', 'options', ...issue.path.map(String)].join('.');
  throw new InputError(
    { file: 'whale.config.json', field },
    `${issue.message} (options of domain 'math': files, dapoInstruction, dedupe, sizes, sandboxUrl, runTimeout, memoryLimitMb, maxOutputChars, maxAssistantTokens, maxTokensPerCall)`,
  );
}

/** The shipped sample (scripts/gen-math-sample.ts): DAPO layout for training and search, AIME layouts for val and test. */
export function mathSampleFiles(): Record<Split, MathFileSpec[]> {
  const dir = path.join(resourcesDir(), 'data', 'math');
  const dapo = path.join(dir, 'dapo-math-sample.parquet');
  return {
    weight: [{ file: dapo, limit: 256 }],
    harness: [{ file: dapo, offset: 256 }],
    val: [{ file: path.join(dir, 'aime-2024-sample.jsonl') }],
    test: [{ file: path.join(dir, 'aime-2025-sample.jsonl') }],
  };
}

function specs(v: z.infer<typeof FileList> | undefined): MathFileSpec[] {
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).map((s) => (typeof s === 'string' ? { file: s } : s));
}

function mathPrivate(task: Task): MathPrivate {
  return task.private as unknown as MathPrivate;
}

/** Every completion of the rollout, in order: the text a `\boxed{}` is looked for in (as the field scores the whole response). */
function allCompletions(r: RolloutRecord): string {
  return r.modelCalls.map((c) => c.completion).join('\n');
}

/** Per-rollout diagnostics: truncation (the token budget cut the model off), format (a box), tool use, the extracted answer. */
export function mathDiagnostics(task: Task, r: RolloutRecord & { termination: string }): Diagnostics {
  const last = r.modelCalls[r.modelCalls.length - 1];
  const truncated = r.termination === 'token_limit' || r.modelCalls.some((c) => c.finishReason === 'length');
  const toolCalls = r.events.filter((e) => e.type === 'tool' && e.name === 'code_interpreter').length;
  const toolErrors = r.events.filter(
    (e) => e.type === 'tool' && e.name === 'code_interpreter' && typeof e.message === 'string' && e.message.startsWith('error'),
  ).length;
  const boxedInCompletion = last ? extractBoxed(last.completion) !== null : false;
  const extracted = r.finalAnswer !== null ? mathEquivalent(r.finalAnswer, mathPrivate(task).answer).extracted : (extractBoxed(allCompletions(r)) ?? null);
  return {
    truncated,
    boxed: boxedInCompletion || extractBoxed(allCompletions(r)) !== null,
    boxedInLastCompletion: boxedInCompletion,
    toolCalls,
    usedTool: toolCalls > 0,
    toolErrors,
    turns: r.modelCalls.length,
    assistantTokens: r.modelCalls.reduce((a, c) => a + c.usage.completionTokens, 0),
    extracted,
    // data_source: the report's per-source table (AIME 2024 and 2025 apart) keys on it.
    data_source: mathPrivate(task).source,
  };
}

export function mathSearchSpace(o: Pick<MathOptions, 'maxAssistantTokens' | 'runTimeout'>): string {
  return `math: competition problems (DAPO-Math-17k for training and search, AIME 2024/2025 for validation and test); the answer is
checked by CAS equivalence of the LAST \\boxed{...} in the final answer (\\frac, \\dfrac, units, percentages, leading zeros all fine).
One tool: code_interpreter({"code": "<python>"}) runs Python 3 in a sandbox (no network, ${o.runTimeout} s) and returns stdout, or
stderr and the exit code. The gateway takes no function-calling fields: the harness offers the tool in text and parses calls itself.
The h0 harness (the paper's): no system prompt of its own, the tool offered as a Qwen chat template offers it (# Tools block,
<tool_call>{"name", "arguments"}</tool_call>), user = question + "\\nThe answer format must be: \\boxed{'The final answer goes here.'}",
MAX_TURNS = 2, a nudge when the model calls no tool, the answer = the last \\boxed{} over the model's completions.
What may change: every prompt (prompts.system / user / nudge and their promptVariants), how the tool is offered and parsed,
how code is cleaned before running (knob autoPrint) and how output is shown (observationChars), the number of turns (knob
maxTurns; the gateway allows at most ${MATH_MAX_TURNS} model calls), nudging, how the final answer is chosen.
Knobs of h0 (harness.json): maxTurns 1-8, toolPrompt hermes|brief|none, nudge, parse tool_call|lenient (also \`\`\`python blocks),
autoPrint, observationChars 500|2000|8000.
What may NOT change: the assistant token budget (${o.maxAssistantTokens} completion tokens over the whole rollout, enforced by the
gateway: a completion that reaches it is cut off and further calls are refused), the verifier, sampling (temperature and top_p
are the run's). A prompt longer than the model's context is refused (HTTP 400 to the harness). The final answer must be text the model wrote (its words appear in a completion): a harness may not compute the answer
itself (e.g. return the code's output), and no message may contain chat-template markers ("<|").
In the paper this domain is weight-dominated: the base model runs past its token budget on most answers, which no prompt fixes.`;
}

const inputsOf = (tasks: Task[]): TaskInput<MathPrivate>[] =>
  tasks.map((t) => ({ id: t.id, question: t.public.question, ...(t.public.meta ? { meta: t.public.meta } : {}), private: mathPrivate(t) }));
const record = (r: RolloutView): RolloutRecord => r as unknown as RolloutRecord;
const sandboxOf = (o: MathOptions) =>
  codeInterpreterTool({ url: o.sandboxUrl, runTimeout: o.runTimeout, memoryLimitMb: o.memoryLimitMb, maxOutputChars: o.maxOutputChars });
/** Name, description and parameters do not depend on the options; the call does (the sandbox's URL and limits). */
const toolShape = sandboxOf(MathOptions.parse({}));

/** math as a `defineDomain` definition: the same contract a user's domain module uses. */
export const mathDefinition = defineDomain<MathOptions, MathPrivate>({
  id: MATH_ID,
  title: MATH_TITLE,
  description:
    'Competition math (DAPO-Math-17k, AIME 2024/2025 layouts): the answer in \\boxed{}, checked by CAS equivalence; one tool, code_interpreter, on a SandboxFusion-compatible service (whale sandbox serve); an assistant token budget enforced by the gateway. Weight-dominated in the paper.',
  summary:
    "the paper's Math: DAPO-Math-17k / AIME files, \\boxed{} answers checked by CAS, a code_interpreter tool on a SandboxFusion-compatible service, an assistant token budget.",
  regime: 'weight-dominated',
  options: parseMathOptions,
  async tasks({ options: o, baseDir }) {
    const files: Partial<Record<Split, MathFileSpec[]>> = o.files ? Object.fromEntries(SPLITS.map((s) => [s, specs(o.files?.[s])])) : mathSampleFiles();
    const loaded = await loadMathSplits(files, o.files ? baseDir : undefined, { dapoInstruction: o.dapoInstruction, dedupe: o.dedupe });
    const split = (s: Split) => inputsOf(o.sizes?.[s] !== undefined ? loaded[s].slice(0, o.sizes[s]) : loaded[s]);
    return { weight: split('weight'), harness: split('harness'), val: split('val'), test: split('test') };
  },
  tools: [
    {
      name: toolShape.name,
      description: toolShape.description,
      parameters: toolShape.parameters,
      call: (args, task, { options }) => sandboxOf(options).call(args, task as unknown as Task),
    },
  ],
  verify: (task, rollout) => {
    const v = mathEquivalent(rollout.finalAnswer ?? '', task.private.answer);
    return {
      pass: v.pass,
      score: v.pass ? 1 : 0,
      extracted: v.extracted,
      reason: rollout.finalAnswer === null ? 'no answer (no \\boxed{} in the final answer)' : v.reason,
    };
  },
  checkRules: (_task, rollout) => answerFromModelRule(record(rollout)),
  gold: (task) => `\\boxed{${task.private.answer}}`,
  diagnostics: (task, rollout) => mathDiagnostics(task as unknown as Task, rollout as unknown as RolloutRecord & { termination: string }),
  limits: ({ options: o }) => ({
    maxTurns: MATH_MAX_TURNS,
    maxAssistantTokens: o.maxAssistantTokens,
    ...(o.maxTokensPerCall !== undefined ? { maxTokensPerCall: o.maxTokensPerCall } : {}),
  }),
  h0: harnessDir('math-h0'),
  searchSpace: ({ options }) => mathSearchSpace(options),
});

export function createMathDomain(options: unknown = {}, ctx: DomainContext = {}): Promise<Domain> {
  return materialise(mathDefinition, options, { origin: `built-in domain ${MATH_ID}`, moduleDir: harnessDir('math-h0'), ...ctx });
}
