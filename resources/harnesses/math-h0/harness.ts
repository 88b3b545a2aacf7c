/**
 * Math h0, the paper's contract: no system prompt of its own, the question followed by "The answer
 * format must be: \boxed{…}", one tool `code_interpreter(code)` (a SandboxFusion service behind the
 * gateway), at most MAX_TURNS = 2 model calls, a nudge when the model calls no tool, and the
 * domain's assistant token budget (enforced by the gateway, whatever this harness asks).
 *
 * The tool is offered the way a Qwen chat template offers tools (a `# Tools` block with the JSON
 * schema; calls as <tool_call>{"name", "arguments"}</tool_call>), since the gateway takes no
 * `tools` field. Tool input is cleaned as the field's ReTool recipe does (a ```python block is
 * unwrapped; a last line that is not a print() is printed). The answer is the last \boxed{} of all
 * the model's completions. Everything is steered by the knobs in harness.json and ctx.prompts.
 * Self-contained: imports only the SDK.
 */
import { defineHarness, type HarnessMessage, type ToolInfo } from 'whale-harness';

function toolBlock(tools: ToolInfo[], style: string): string {
  if (style === 'none' || tools.length === 0) return '';
  const sigs = tools.map((t) => JSON.stringify({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } })).join('\n');
  if (style === 'brief') return `You can run Python: write <tool_call>{"name": "code_interpreter", "arguments": {"code": "..."}}</tool_call> and you will see its output.`;
  return [
    '# Tools',
    '',
    'You may call one or more functions to assist with the user query.',
    '',
    'You are provided with function signatures within <tools></tools> XML tags:',
    '<tools>',
    sigs,
    '</tools>',
    '',
    'For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:',
    '<tool_call>',
    '{"name": <function-name>, "arguments": <args-json-object>}',
    '</tool_call>',
  ].join('\n');
}

/** The code of the first code_interpreter call in a completion, or null. */
function parseToolCall(text: string, mode: string): string | null {
  const m = /<tool_call>\s*([\s\S]*?)\s*<\/tool_call>/.exec(text);
  if (m) {
    try {
      const call = JSON.parse(m[1]) as { name?: unknown; arguments?: unknown };
      const args = typeof call.arguments === 'string' ? (JSON.parse(call.arguments) as { code?: unknown }) : (call.arguments as { code?: unknown } | undefined);
      if (call.name === 'code_interpreter' && args && typeof args.code === 'string') return args.code;
    } catch {
      /* not JSON: fall through */
    }
  }
  if (mode === 'lenient') {
    const block = /```(?:python|py)\s*\n([\s\S]*?)```/.exec(text);
    if (block) return block[1];
  }
  return null;
}

/** ReTool's clean-up: unwrap a ```python block; print the last line unless it already prints. */
function prepareCode(code: string, autoPrint: boolean): string {
  const block = /```python(.*?)```/s.exec(code);
  let src = block ? block[1].trim() : code;
  if (!autoPrint) return src;
  const lines = src.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    if (lines[i] === '') continue;
    if (!lines[i].startsWith('print') && !/^\s/.test(lines[i]) && !/^(import|from|def|class|for|while|if|elif|else|with|return|try|except|finally|raise|assert|pass|del|global)\b|(^|[^=!<>])=([^=]|$)/.test(lines[i])) lines[i] = `print(${lines[i]})`;
    break;
  }
  src = lines.join('\n');
  return src;
}

/** The content of the last \boxed{…} in a text (nested braces kept), or null. */
function lastBoxed(text: string): string | null {
  const re = /\\(?:boxed|fbox)\s*\{/g;
  let last: string | null = null;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    let depth = 1;
    let i = m.index + m[0].length;
    for (; i < text.length && depth > 0; i++) {
      if (text[i] === '\\') i++;
      else if (text[i] === '{') depth++;
      else if (text[i] === '}') depth--;
    }
    if (depth === 0) last = text.slice(m.index + m[0].length, i - 1);
  }
  return last;
}

export default defineHarness({
  async run(task, ctx) {
    const k = ctx.knobs;
    const maxTurns = Math.min(Number(k.maxTurns ?? 2), ctx.limits.maxTurns);
    const toolPrompt = String(k.toolPrompt ?? 'hermes');
    const nudge = k.nudge !== false;
    const parse = String(k.parse ?? 'tool_call');
    const autoPrint = k.autoPrint !== false;
    const observationChars = Number(k.observationChars ?? 2000);

    const messages: HarnessMessage[] = [];
    const system = [ctx.prompts.system ?? '', toolBlock(ctx.tools, toolPrompt)].filter((s) => s.trim() !== '').join('\n\n');
    if (system) messages.push({ role: 'system', content: system });
    messages.push({ role: 'user', content: (ctx.prompts.user ?? '{question}').split('{question}').join(task.question) });

    const completions: string[] = [];
    for (let turn = 0; turn < maxTurns; turn++) {
      // Sampling (temperature, top_p) is the run's, not the harness's (REFERENCE §2).
      const reply = await ctx.chat(messages);
      completions.push(reply.text);
      messages.push({ role: 'assistant', content: reply.text });
      if (reply.finishReason === 'length') {
        ctx.log('truncated: the completion hit the token budget', { turn });
        break;
      }
      const code = parseToolCall(reply.text, parse);
      if (code === null) {
        if (!nudge || turn + 1 >= maxTurns) break;
        ctx.log('no tool call: nudged', { turn });
        messages.push({ role: 'user', content: ctx.prompts.nudge ?? '' });
        continue;
      }
      if (turn + 1 >= maxTurns) break; // no turn left to read the result
      const out = await ctx.tool('code_interpreter', { code: prepareCode(code, autoPrint) });
      messages.push({ role: 'tool', content: out.length > observationChars ? `${out.slice(0, observationChars)}…` : out });
    }
    return { answer: lastBoxed(completions.join('\n')) };
  },
});
