import { InputError } from '../core/errors.js';
import { Rng } from '../core/rng.js';
import {
  BuiltinDomainOptions,
  type DomainContext,
  TaskRowBase,
  answerFromModelRule,
  assignSplit,
  effectiveSizes,
  exactMatchVerdict,
  groupBySplit,
  harnessDir,
  loadTaskLines,
  splitSeed,
  generatedTaskId,
} from './common.js';
import { type RolloutText } from './common.js';
import { type Fact, RAMBLE_INSTRUCTIONS, rambleQuestion, wordsOf } from './text.js';
import { materialiseSync } from './definition.js';
import { defineDomain, type TaskInput } from './sdk.js';
import type { Domain, Json, Split, Task } from './types.js';
import { NAMES, VALUES, VALUE_ATTRIBUTES } from './vocab.js';

export const RAMBLE_ID = 'ramble';
export const RAMBLE_SIZES: Record<Split, number> = { weight: 4096, harness: 256, val: 256, test: 512 };
/** Completion tokens per model call the gateway allows: the rambling expert's answers always come later. */
export const RAMBLE_TOKENS_PER_CALL = 24;

export interface RamblePrivate {
  answer: string;
}

/**
 * Two facts stated in the question, one asked about: "Lodos pet eel . Kiro pet cat . What is the pet of Kiro ?".
 * The distractor is either another entity's same attribute or the same entity's other attribute.
 */
export function generateRambleTask(rng: Rng, id: string, split: Split): Task {
  const [n1, n2] = rng.sample(NAMES, 2);
  const [a1, a2] = rng.sample(VALUE_ATTRIBUTES, 2);
  const asked: Fact = [n1, a1, rng.pick(VALUES[a1])];
  const distractor: Fact = rng.chance(0.5) ? [n2, a1, rng.pick(VALUES[a1].filter((v) => v !== asked[2]))] : [n1, a2, rng.pick(VALUES[a2])];
  const facts = rng.shuffle([asked, distractor]);
  const priv: RamblePrivate = { answer: asked[2] };
  return { id, split, public: { id, question: rambleQuestion(facts, asked), meta: {} }, private: priv as unknown as Json };
}

/**
 * ramble's rules: the shared one (the answer is the model's own words; no template markers), plus: no
 * forged turns — the domain has no tools, so a message to the model may not have role `tool`, and an
 * `assistant` message must repeat one of the model's earlier completions in this rollout.
 */
export function rambleRules(rollout: RolloutText): string | null {
  const earlier: string[] = [];
  for (const call of rollout.modelCalls) {
    for (const m of call.messages) {
      if (m.role === 'tool') return 'ramble has no tools: a tool message sent to the model is a forged turn';
      if (m.role === 'assistant' && !earlier.includes(m.content.trim()))
        return 'an assistant message sent to the model is not one of its own completions (forged turn)';
    }
    earlier.push(call.completion.trim());
  }
  return answerFromModelRule(rollout);
}

function loadRambleFile(file: string, ctx: DomainContext): Record<Split, Task[]> {
  const { file: abs, rows, lines } = loadTaskLines(file, ctx.baseDir, TaskRowBase);
  const tasks = rows.map((r, i): Task => {
    const id = r.id ?? `ramble-file-${lines[i]}`;
    const want = wordsOf(r.answer).join(' ');
    if (!` ${wordsOf(r.question).join(' ')} `.includes(` ${want} `))
      throw new InputError({ file: abs, line: lines[i], field: 'answer' }, `answer '${r.answer}' must be readable from the question (it does not occur in it)`);
    const priv: RamblePrivate = { answer: r.answer };
    return { id, split: r.split ?? assignSplit(id, RAMBLE_SIZES), public: { id, question: r.question, meta: {} }, private: priv as unknown as Json };
  });
  return groupBySplit(RAMBLE_ID, abs, tasks, lines);
}

export const RAMBLE_SEARCH_SPACE = `ramble: the answer is stated in the question ("Lodos pet eel . Kiro pet cat . What is the pet of Kiro ?" -> cat).
The model is a tiny word-level transformer pretrained on transcripts where the expert, in 60% of answers and whatever the
prompt says, first rambles (30-45 filler words) and only then writes \`answer VALUE\`. The domain allows ONE model call of
${RAMBLE_TOKENS_PER_CALL} completion tokens, so a rambling answer is always cut off.
Knobs of the h0 harness (harness.json):
  instruction  'prompt' (prompts.system, empty = no system message) | 'brief' | 'direct'. Known texts:
               brief  = "${RAMBLE_INSTRUCTIONS.brief}"
               direct = "${RAMBLE_INSTRUCTIONS.direct}"
  parse        strict (the whole reply is \`answer VALUE\`) | lenient (the first \`answer\` keyword anywhere, or one bare word).
Sampling (temperature, top_p) is the run config's: the gateway enforces it whatever a harness asks.
Rules: the final answer must be words the model wrote in a completion (a harness may not read the answer off the question);
no tool messages, no assistant messages the model did not write, no chat-template markers ("<|") in any message.
Limits: 1 model call, ${RAMBLE_TOKENS_PER_CALL} completion tokens. This domain is built to be weight-dominated: expect little from harness changes.`;

function inputsOf(tasks: Task[]): TaskInput<RamblePrivate>[] {
  return tasks.map((t) => ({ id: t.id, question: t.public.question, meta: t.public.meta ?? {}, private: t.private as unknown as RamblePrivate }));
}

/** ramble as a `defineDomain` definition: the same contract a user's domain module uses. */
export const rambleDefinition = defineDomain<BuiltinDomainOptions, RamblePrivate>({
  id: RAMBLE_ID,
  title: 'ramble — answer before the token budget runs out',
  description:
    'Copy a value stated in the question, in one model call of 24 tokens. The base model rambles before answering most of the time whatever it is told, so answers get cut off. Weight-dominated: only training removes the rambling.',
  summary: 'copy a value stated in the question in one 24-token call; the base model rambles, only training fixes it.',
  regime: 'weight-dominated',
  options: BuiltinDomainOptions,
  tasks({ options, baseDir, secret }) {
    if (options.tasksFile) {
      const fromFile = loadRambleFile(options.tasksFile, { baseDir });
      return { weight: inputsOf(fromFile.weight), harness: inputsOf(fromFile.harness), val: inputsOf(fromFile.val), test: inputsOf(fromFile.test) };
    }
    const sizes = effectiveSizes(RAMBLE_SIZES, options);
    const gen = (split: Split) => () =>
      inputsOf(
        Array.from({ length: sizes[split] }, (_, i) =>
          generateRambleTask(new Rng(splitSeed(RAMBLE_ID, split, i, secret)), generatedTaskId(RAMBLE_ID, split, i, secret), split),
        ),
      );
    return { weight: gen('weight'), harness: gen('harness'), val: gen('val'), test: gen('test') };
  },
  tools: [],
  verify: (task, rollout) => exactMatchVerdict(task.private.answer, rollout.finalAnswer),
  checkRules: (_task, rollout) => rambleRules(rollout),
  limits: { maxTurns: 1, maxTokensPerCall: RAMBLE_TOKENS_PER_CALL },
  h0: harnessDir('ramble-h0'),
  searchSpace: RAMBLE_SEARCH_SPACE,
});

export function createRambleDomain(opts: BuiltinDomainOptions = {}, ctx: DomainContext = {}): Domain {
  return materialiseSync(rambleDefinition, opts, { origin: 'built-in domain ramble', moduleDir: harnessDir('ramble-h0'), ...ctx });
}
