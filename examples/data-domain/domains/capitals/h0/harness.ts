/**
 * Generic question-answering harness, the default h0 of data-only domains and of `whale domain new`.
 * The model answers the question; when the domain has tools it may call one per turn by writing
 * `<tool>NAME {"arg": …}</tool>` and sees the result as a tool message. The final answer is read
 * from the reply by the knob `answerFormat`. Self-contained: imports only the SDK.
 */
import { defineHarness, type HarnessMessage } from 'whale-harness';

const TOOL_CALL = /<tool>\s*([A-Za-z_][A-Za-z0-9_-]*)\s*(\{[\s\S]*?\})?\s*<\/tool>/;

function readAnswer(text: string, format: string): string | null {
  const t = text.trim();
  if (format === 'answer-tag') {
    const m = /<answer>([\s\S]*?)<\/answer>/.exec(t);
    return m ? m[1].trim() : null;
  }
  if (format === 'last-line') {
    const lines = t.split('\n').map((l) => l.trim()).filter(Boolean);
    return lines.length ? lines[lines.length - 1].replace(/^answer\s*[:=]?\s*/i, '') : null;
  }
  return t === '' ? null : t;
}

export default defineHarness({
  async run(task, ctx) {
    const k = ctx.knobs;
    const format = String(k.answerFormat ?? 'whole');
    const maxToolCalls = ctx.tools.length ? Number(k.maxToolCalls ?? 2) : 0;
    const messages: HarnessMessage[] = [];
    let system = ctx.prompts.system ?? '';
    if (maxToolCalls > 0) system += `${system ? '\n' : ''}Tools: ${ctx.tools.map((t) => `${t.name} — ${t.description}`).join('; ')}. Call one as <tool>NAME {json arguments}</tool>.`;
    if (system.trim() !== '') messages.push({ role: 'system', content: system });
    messages.push({ role: 'user', content: (ctx.prompts.user ?? '{question}').split('{question}').join(task.question) });
    for (let calls = 0; ; calls++) {
      const reply = await ctx.chat(messages);
      const call = TOOL_CALL.exec(reply.text);
      if (!call || calls >= maxToolCalls) {
        const answer = readAnswer(reply.text, format);
        if (answer === null) ctx.log('no answer in the reply', { text: reply.text });
        return { answer };
      }
      let args: Record<string, unknown> = {};
      try {
        args = call[2] ? (JSON.parse(call[2]) as Record<string, unknown>) : {};
      } catch {
        ctx.log('tool arguments are not JSON', { text: call[2] });
      }
      let observation: string;
      try {
        observation = await ctx.tool(call[1], args);
      } catch (e) {
        observation = `error: ${e instanceof Error ? e.message : String(e)}`;
      }
      messages.push({ role: 'assistant', content: reply.text }, { role: 'tool', content: observation });
    }
  },
});
