/**
 * kbqa harness. The model writes one action per turn — `search NAME` or `answer VALUE` — and the
 * harness runs the search tool and shows its facts as a tool message. Everything it does is steered by
 * the knobs in harness.json (ctx.knobs) and the prompt strings (ctx.prompts).
 * Self-contained: imports only the SDK.
 */
import { defineHarness, type HarnessMessage } from 'whale-harness';

const INSTRUCTIONS: Record<string, string> = {
  short: 'search the name , then answer .',
  full: 'write search and a name to see its facts . then write answer and the value from the facts . answer with one word .',
};
const FEEDBACK = {
  format: 'error : write search and a name , or answer and a value .',
  noSearchLeft: 'error : no search left . answer now .',
  searchFirst: 'error : search first .',
};
const NO_FACTS = 'no facts';

type Fact = [string, string, string];
type Action = { kind: 'search' | 'answer'; arg: string };

function parseAction(text: string, mode: string): Action | null {
  const t = text.trim();
  const strict = /^(search|answer) ([^\s.,:?]+)$/.exec(t);
  if (strict) return { kind: strict[1] as Action['kind'], arg: strict[2] };
  if (mode === 'strict') return null;
  const m = /\b(search|answer)(?:\s*:\s*|\s+is\s+|\s+)([^\s.,:?]+)/.exec(t);
  if (m) return { kind: m[1] as Action['kind'], arg: m[2] };
  const words = t.split(/\s+/).filter((w) => w !== '' && !/^[.,:?]+$/.test(w));
  if (words.length === 1 && words[0] !== 'search' && words[0] !== 'answer') return { kind: 'answer', arg: words[0] };
  return null;
}

function parseObservation(obs: string): Fact[] {
  const out: Fact[] = [];
  for (const line of obs.split('\n')) {
    const w = line.trim().split(/\s+/);
    if (w.length >= 3) out.push([w[0], w[1], w.slice(2).join(' ')]);
  }
  return out;
}

function formatFacts(facts: Fact[], format: string): string {
  if (facts.length === 0) return `${NO_FACTS} .`;
  return facts
    .map(([s, a, v], i) => {
      if (format === 'sentence') return `the ${a} of ${s} is ${v} .`;
      if (format === 'numbered') return `${i + 1} : ${s} ${a} ${v} .`;
      return `${s} ${a} ${v} .`;
    })
    .join(' ');
}

export default defineHarness({
  async run(task, ctx) {
    const k = ctx.knobs;
    const instruction = String(k.instruction ?? 'prompt');
    const topk = Number(k.topk ?? 1);
    const maxSearches = Number(k.maxSearches ?? 1);
    const passageFormat = String(k.passageFormat ?? 'plain');
    const parse = String(k.parse ?? 'strict');
    const formatRetries = Number(k.formatRetries ?? 0);
    const requireSearch = k.requireSearch === true;
    const maxTurns = ctx.limits.maxTurns;

    const messages: HarnessMessage[] = [];
    const system = instruction === 'prompt' ? (ctx.prompts.system ?? '') : (INSTRUCTIONS[instruction] ?? '');
    if (system.trim() !== '') messages.push({ role: 'system', content: system });
    messages.push({ role: 'user', content: (ctx.prompts.user ?? '{question}').split('{question}').join(task.question) });

    let calls = 0;
    let searches = 0;
    let retriesLeft = formatRetries;
    let nudged = false;
    const timesQueried = new Map<string, number>();

    while (calls < maxTurns) {
      const reply = await ctx.chat(messages, { max_tokens: ctx.limits.maxTokensPerCall ?? 24 });
      calls++;
      messages.push({ role: 'assistant', content: reply.text });
      const act = parseAction(reply.text, parse);
      if (!act) {
        ctx.log('unparsable action', { text: reply.text });
        if (retriesLeft > 0) {
          retriesLeft--;
          messages.push({ role: 'user', content: FEEDBACK.format });
          continue;
        }
        return { answer: null };
      }
      if (act.kind === 'answer') {
        if (requireSearch && searches === 0 && !nudged) {
          nudged = true;
          messages.push({ role: 'user', content: FEEDBACK.searchFirst });
          continue;
        }
        return { answer: act.arg };
      }
      if (searches >= maxSearches) {
        ctx.log('search budget spent', { maxSearches });
        if (retriesLeft > 0) {
          retriesLeft--;
          messages.push({ role: 'user', content: FEEDBACK.noSearchLeft });
          continue;
        }
        return { answer: null };
      }
      searches++;
      const query = act.arg;
      const n = timesQueried.get(query) ?? 0;
      timesQueried.set(query, n + 1);
      const obs = await ctx.tool('search', { query, k: topk, offset: n * topk });
      messages.push({ role: 'tool', content: formatFacts(parseObservation(obs), passageFormat) });
    }
    ctx.log('turn limit reached', { maxTurns });
    return { answer: null };
  },
});
