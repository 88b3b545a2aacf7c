import { InputError } from '../core/errors.js';
import { Rng } from '../core/rng.js';
import {
  type BuiltinDomainOptions,
  type DomainContext,
  TaskRowBase,
  answerFromModelRule,
  assignSplit,
  effectiveSizes,
  exactMatchVerdict,
  groupBySplit,
  harnessDir,
  lazySplits,
  loadTaskLines,
  splitSeed,
  generatedTaskId,
} from './common.js';
import { type Fact, RAMBLE_INSTRUCTIONS, rambleQuestion, wordsOf } from './text.js';
import type { Domain, Json, RolloutRecord, Split, Task } from './types.js';
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

function ramblePrivate(task: Task): RamblePrivate {
  return task.private as unknown as RamblePrivate;
}

/**
 * ramble's rules: the shared one (the answer is the model's own words; no template markers), plus: no
 * forged turns — the domain has no tools, so a message to the model may not have role `tool`, and an
 * `assistant` message must repeat one of the model's earlier completions in this rollout.
 */
export function rambleRules(rollout: RolloutRecord): string | null {
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
  temperature  0 | 0.3 | 0.7 | 1 | 1.5 passed to ctx.chat.
Rules: the final answer must be words the model wrote in a completion (a harness may not read the answer off the question);
no tool messages, no assistant messages the model did not write, no chat-template markers ("<|") in any message.
Limits: 1 model call, ${RAMBLE_TOKENS_PER_CALL} completion tokens. This domain is built to be weight-dominated: expect little from harness changes.`;

export function createRambleDomain(opts: BuiltinDomainOptions = {}, ctx: DomainContext = {}): Domain {
  const sizes = effectiveSizes(RAMBLE_SIZES, opts);
  const fromFile = opts.tasksFile ? loadRambleFile(opts.tasksFile, ctx) : null;
  const tasks = lazySplits((split) => {
    if (fromFile) return fromFile[split];
    const out: Task[] = [];
    for (let i = 0; i < sizes[split]; i++) {
      out.push(generateRambleTask(new Rng(splitSeed(RAMBLE_ID, split, i, ctx.secret)), generatedTaskId(RAMBLE_ID, split, i, ctx.secret), split));
    }
    return out;
  });
  return {
    id: RAMBLE_ID,
    title: 'ramble — answer before the token budget runs out',
    description:
      'Copy a value stated in the question, in one model call of 24 tokens. The base model rambles before answering most of the time whatever it is told, so answers get cut off. Weight-dominated: only training removes the rambling.',
    regime: 'weight-dominated',
    splitSizes: fromFile ? { weight: fromFile.weight.length, harness: fromFile.harness.length, val: fromFile.val.length, test: fromFile.test.length } : sizes,
    tasks,
    tools: [],
    verify: (task, rollout) => exactMatchVerdict(ramblePrivate(task).answer, rollout.finalAnswer),
    checkRules: (_task, rollout) => rambleRules(rollout),
    limits: { maxTurns: 1, maxTokensPerCall: RAMBLE_TOKENS_PER_CALL },
    h0Dir: harnessDir('ramble-h0'),
    searchSpace: RAMBLE_SEARCH_SPACE,
  };
}
