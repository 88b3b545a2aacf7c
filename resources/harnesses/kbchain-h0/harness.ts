/**
 * kbchain harness. The model writes one action per turn — `search NAME` or `answer VALUE` — and the
 * harness runs the search tool and shows its facts as a tool message. Steered by the knobs in
 * harness.json (ctx.knobs) and the prompt strings (ctx.prompts). Self-contained: imports only the SDK.
 */
import { defineHarness, type HarnessMessage } from 'whale-harness';

const FEEDBACK = {
  format: 'error : write search and a name , or answer and a value .',
  noSearchLeft: 'error : no search left . answer now .',
};

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

/** The tool's observation (one `subject attribute value` line per fact, or `no facts`) as one line of sentences. */
function showFacts(obs: string): string {
  const lines = obs
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.split(/\s+/).length >= 3);
  return lines.length === 0 ? 'no facts .' : lines.map((l) => `${l} .`).join(' ');
}

export default defineHarness({
  async run(task, ctx) {
    const k = ctx.knobs;
    const topk = Number(k.topk ?? 1);
    const maxSearches = Number(k.maxSearches ?? 1);
    const parse = String(k.parse ?? 'strict');
    const formatRetries = Number(k.formatRetries ?? 0);
    const maxTurns = ctx.limits.maxTurns;

    const messages: HarnessMessage[] = [];
    const system = ctx.prompts.system ?? '';
    if (system.trim() !== '') messages.push({ role: 'system', content: system });
    messages.push({ role: 'user', content: (ctx.prompts.user ?? '{question}').split('{question}').join(task.question) });

    let calls = 0;
    let searches = 0;
    let retriesLeft = formatRetries;
    const timesQueried = new Map<string, number>();

    while (calls < maxTurns) {
      const reply = await ctx.chat(messages, { max_tokens: ctx.limits.maxTokensPerCall ?? 24 });
      calls++;
      messages.push({ role: 'assistant', content: reply.text });
      if (reply.finishReason === 'length') ctx.log('reply cut off at the token limit', { text: reply.text });
      const act = parseAction(reply.text, parse);
      if (!act) {
        if (retriesLeft > 0) {
          retriesLeft--;
          messages.push({ role: 'user', content: FEEDBACK.format });
          continue;
        }
        return { answer: null };
      }
      if (act.kind === 'answer') return { answer: act.arg };
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
      const n = timesQueried.get(act.arg) ?? 0;
      timesQueried.set(act.arg, n + 1);
      const obs = await ctx.tool('search', { query: act.arg, k: topk, offset: n * topk });
      messages.push({ role: 'tool', content: showFacts(obs) });
    }
    ctx.log('turn limit reached', { maxTurns });
    return { answer: null };
  },
});
