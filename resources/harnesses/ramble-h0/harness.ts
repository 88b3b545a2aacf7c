/**
 * ramble harness: one model call with the question; the model must write `answer VALUE` before its
 * token budget runs out. Steered by the knobs in harness.json (ctx.knobs) and ctx.prompts.
 * Self-contained: imports only the SDK.
 */
import { defineHarness, type HarnessMessage } from 'whale-harness';

const INSTRUCTIONS: Record<string, string> = {
  brief: 'answer with one word .',
  direct: 'do not think . write answer and the value now .',
};

function parseAnswer(text: string, mode: string): string | null {
  const t = text.trim();
  const strict = /^answer ([^\s.,:?]+)$/.exec(t);
  if (strict) return strict[1];
  if (mode === 'strict') return null;
  const m = /\banswer(?:\s*:\s*|\s+is\s+|\s+)([^\s.,:?]+)/.exec(t);
  if (m) return m[1];
  const words = t.split(/\s+/).filter((w) => w !== '' && !/^[.,:?]+$/.test(w));
  if (words.length === 1 && words[0] !== 'answer' && words[0] !== 'search') return words[0];
  return null;
}

export default defineHarness({
  async run(task, ctx) {
    const instruction = String(ctx.knobs.instruction ?? 'prompt');
    const parse = String(ctx.knobs.parse ?? 'strict');

    const messages: HarnessMessage[] = [];
    const system = instruction === 'prompt' ? (ctx.prompts.system ?? '') : (INSTRUCTIONS[instruction] ?? '');
    if (system.trim() !== '') messages.push({ role: 'system', content: system });
    messages.push({ role: 'user', content: (ctx.prompts.user ?? '{question}').split('{question}').join(task.question) });

    const reply = await ctx.chat(messages, { max_tokens: ctx.limits.maxTokensPerCall ?? 24 });
    if (reply.finishReason === 'length') ctx.log('reply cut off at the token budget', { text: reply.text });
    const answer = parseAnswer(reply.text, parse);
    if (answer === null) ctx.log('no answer in the reply', { text: reply.text });
    return { answer };
  },
});
