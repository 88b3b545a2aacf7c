/**
 * searchqa h0, the paper's contract: the system prompt "Answer factual questions using search when
 * needed.", a user template asking for the answer inside <answer>…</answer>, one tool
 * search(query_list, topk, max_doc_tokens) that shows exactly the top-1 passage cut to 200 tokens
 * whatever topk says, and MAX_TURNS = 2 model calls. Every one of those is a knob or a prompt in
 * harness.json, so a proposer can move it. Self-contained: imports only the SDK.
 *
 * The model calls the tool as Qwen's chat template does, `<tool_call>{"name": "search",
 * "arguments": {"query_list": [...], "topk": 3}}</tool_call>`, or Search-R1's `<search>q</search>`.
 */
import { defineHarness, type HarnessMessage } from 'whale-harness';

const FEEDBACK = 'Your reply had no <answer>…</answer> and no search call. Search, or give the final answer inside <answer> and </answer>.';
const LAST_TURN = 'This is your last turn: give the final answer inside <answer> and </answer>.';

interface Passage {
  id: string;
  contents: string;
  score: number | null;
}

interface SearchCall {
  queries: string[];
  topk: number | null;
}

function lastAnswer(text: string): string | null {
  const all = [...text.matchAll(/<answer>([\s\S]*?)<\/answer>/gi)];
  return all.length === 0 ? null : all[all.length - 1][1].trim();
}

function parseSearch(text: string): SearchCall | null {
  const tc = /<tool_call>([\s\S]*?)<\/tool_call>/i.exec(text);
  if (tc) {
    try {
      const call = JSON.parse(tc[1]) as { name?: unknown; arguments?: { query_list?: unknown; query?: unknown; topk?: unknown } };
      const a = call.arguments ?? {};
      const list = Array.isArray(a.query_list) ? a.query_list : typeof a.query === 'string' ? [a.query] : [];
      const queries = list.filter((q): q is string => typeof q === 'string' && q.trim() !== '');
      if (call.name === 'search' && queries.length > 0) return { queries, topk: typeof a.topk === 'number' ? a.topk : null };
    } catch {
      // not JSON: fall through to the other syntax
    }
  }
  const s = /<search>([\s\S]*?)<\/search>/i.exec(text);
  if (s && s[1].trim() !== '') return { queries: [s[1].trim()], topk: null };
  return null;
}

function cut(text: string, n: number): string {
  let count = 0;
  for (const m of text.matchAll(/\S+/g)) {
    if (++count === n) return text.slice(0, (m.index ?? 0) + m[0].length);
  }
  return text;
}

function titleAndText(contents: string): { title: string; text: string } {
  const nl = contents.indexOf('\n');
  const head = nl < 0 ? '' : contents.slice(0, nl);
  return { title: head.replace(/^"|"$/g, ''), text: nl < 0 ? contents : contents.slice(nl + 1) };
}

function formatPassages(passages: Passage[], format: string): string {
  if (passages.length === 0) return 'No results.';
  return passages
    .map((p, i) => {
      if (format === 'raw') return p.contents;
      const { title, text } = titleAndText(p.contents);
      if (format === 'text') return text;
      return `Doc ${i + 1}(Title: ${title}) ${text}`;
    })
    .join('\n');
}

export default defineHarness({
  async run(task, ctx) {
    const k = ctx.knobs;
    const maxTurns = Math.min(Number(k.maxTurns ?? 2), ctx.limits.maxTurns);
    const shown = Number(k.passagesShown ?? 1);
    const honourTopk = k.honourTopk === true;
    const maxDocTokens = Number(k.maxDocTokens ?? 200);
    const passageFormat = String(k.passageFormat ?? 'searchr1');
    const answerParse = String(k.answerParse ?? 'tags');
    let retries = Number(k.formatRetries ?? 0);
    const lastTurnNudge = k.lastTurnNudge === true;

    const messages: HarnessMessage[] = [];
    const system = ctx.prompts.system ?? '';
    if (system.trim() !== '') messages.push({ role: 'system', content: system });
    messages.push({ role: 'user', content: (ctx.prompts.user ?? '{question}').split('{question}').join(task.question) });

    for (let turn = 0; turn < maxTurns; turn++) {
      if (lastTurnNudge && turn === maxTurns - 1 && turn > 0) messages.push({ role: 'user', content: LAST_TURN });
      const reply = await ctx.chat(messages, ctx.limits.maxTokensPerCall ? { max_tokens: ctx.limits.maxTokensPerCall } : {});
      messages.push({ role: 'assistant', content: reply.text });
      const answer = lastAnswer(reply.text);
      if (answer !== null) return { answer };
      const call = parseSearch(reply.text);
      if (call) {
        if (turn === maxTurns - 1) break;
        const topk = honourTopk && call.topk !== null ? Math.max(1, Math.min(10, Math.floor(call.topk))) : shown;
        let shownText: string;
        try {
          const obs = await ctx.tool('search', { query_list: call.queries, topk });
          // Top passages of each query in the list (h0: the top-1), each cut to maxDocTokens.
          const parsed = JSON.parse(obs) as { results: { passages: Passage[] }[] };
          const passages = parsed.results.flatMap((r) => r.passages.slice(0, topk));
          shownText = formatPassages(passages.map((p) => ({ ...p, contents: cut(p.contents, maxDocTokens) })), passageFormat);
        } catch (e) {
          shownText = `Search failed: ${e instanceof Error ? e.message : String(e)}`;
        }
        messages.push({ role: 'tool', content: shownText });
        continue;
      }
      if (answerParse === 'lenient') {
        const line = reply.text.trim().split('\n').filter((l) => l.trim() !== '').pop();
        if (line) return { answer: line.trim() };
      }
      if (retries > 0 && turn < maxTurns - 1) {
        retries--;
        messages.push({ role: 'user', content: FEEDBACK });
        continue;
      }
      ctx.log('no answer and no search call', { text: reply.text.slice(0, 200) });
      return { answer: null };
    }
    ctx.log('turn limit reached without an answer', { maxTurns });
    return { answer: null };
  },
});
