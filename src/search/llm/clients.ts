/**
 * The proposer's two model clients behind one small conversation interface. Each keeps the
 * conversation in its provider's own wire format (Anthropic content blocks with tool_use /
 * tool_result; OpenAI messages with tool_calls / role 'tool') and reports a provider-neutral turn.
 * The SDKs are imported lazily: `whale` commands that never propose don't load them.
 */
import type { LlmProposerConfig } from '../../core/config.js';

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON schema of the arguments (an object schema). */
  schema: Record<string, unknown>;
}

export interface ToolCall {
  id: string;
  name: string;
  /** The parsed arguments; undefined when they were not a JSON object (see argsError). */
  args?: Record<string, unknown>;
  argsError?: string;
  /** The arguments as the model sent them (for the log). */
  raw: string;
}

export interface Turn {
  text: string;
  toolCalls: ToolCall[];
  /** 'tool_use' (wants results), 'end' (finished), 'max_tokens' (cut off), or the provider's word. */
  stop: string;
  usage: { input: number; output: number };
}

export interface ToolResult {
  id: string;
  output: string;
  isError: boolean;
}

export interface ChatClient {
  readonly provider: 'anthropic' | 'openai';
  /** Sends the conversation so far; the assistant's reply becomes part of it. */
  next(maxTokens: number, signal?: AbortSignal): Promise<Turn>;
  /** Answers every tool call of the last turn; `note` adds a user text after the results. */
  answer(results: ToolResult[], note?: string): void;
  /** A plain user message (e.g. after a turn without tool calls). */
  say(text: string): void;
}

export interface ClientOptions {
  config: LlmProposerConfig;
  apiKey: string;
  system: string;
  firstUser: string;
  tools: ToolSpec[];
}

function parseArgs(raw: string | undefined): Pick<ToolCall, 'args' | 'argsError'> {
  try {
    const v: unknown = JSON.parse(raw === undefined || raw.trim() === '' ? '{}' : raw);
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return { args: v as Record<string, unknown> };
    return { argsError: `the arguments must be a JSON object, got ${Array.isArray(v) ? 'an array' : typeof v}` };
  } catch (e) {
    return { argsError: `the arguments are not valid JSON (${e instanceof Error ? e.message : String(e)})` };
  }
}

export async function createChatClient(o: ClientOptions): Promise<ChatClient> {
  return o.config.provider === 'anthropic' ? createAnthropic(o) : createOpenAI(o);
}

async function createAnthropic(o: ClientOptions): Promise<ChatClient> {
  const { default: Anthropic } = await import('@anthropic-ai/sdk');
  const c = o.config;
  const client = new Anthropic({ apiKey: o.apiKey, ...(c.baseUrl ? { baseURL: c.baseUrl } : {}), maxRetries: 0, timeout: c.requestTimeoutMs });
  type Msg = { role: 'user' | 'assistant'; content: unknown };
  const messages: Msg[] = [{ role: 'user', content: o.firstUser }];
  const tools = o.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.schema }));
  return {
    provider: 'anthropic',
    async next(maxTokens, signal) {
      const body = {
        model: c.model,
        max_tokens: maxTokens,
        system: o.system,
        messages,
        tools,
        ...(c.temperature !== undefined ? { temperature: c.temperature } : {}),
        ...(c.effort ? { output_config: { effort: c.effort } } : {}),
      };
      // The SDK's types pin content shapes we build generically; the wire format is what matters here.
      const res = (await client.messages.create(body as never, { signal })) as unknown as {
        content: { type: string; text?: string; id?: string; name?: string; input?: unknown }[];
        stop_reason: string | null;
        usage: { input_tokens: number; output_tokens: number; cache_creation_input_tokens?: number | null; cache_read_input_tokens?: number | null };
      };
      messages.push({ role: 'assistant', content: res.content });
      const toolCalls: ToolCall[] = res.content
        .filter((b) => b.type === 'tool_use')
        .map((b) => {
          const raw = JSON.stringify(b.input ?? null);
          const ok = typeof b.input === 'object' && b.input !== null && !Array.isArray(b.input);
          return {
            id: String(b.id),
            name: String(b.name),
            raw,
            ...(ok ? { args: b.input as Record<string, unknown> } : { argsError: 'the input must be a JSON object' }),
          };
        });
      const u = res.usage;
      return {
        text: res.content
          .filter((b) => b.type === 'text')
          .map((b) => b.text ?? '')
          .join('\n'),
        toolCalls,
        stop: res.stop_reason === 'end_turn' || res.stop_reason === 'stop_sequence' ? 'end' : (res.stop_reason ?? 'end'),
        usage: { input: u.input_tokens + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0), output: u.output_tokens },
      };
    },
    answer(results, note) {
      const content: unknown[] = results.map((r) => ({ type: 'tool_result', tool_use_id: r.id, content: r.output, ...(r.isError ? { is_error: true } : {}) }));
      if (note) content.push({ type: 'text', text: note });
      messages.push({ role: 'user', content });
    },
    say(text) {
      messages.push({ role: 'user', content: text });
    },
  };
}

async function createOpenAI(o: ClientOptions): Promise<ChatClient> {
  const { default: OpenAI } = await import('openai');
  const c = o.config;
  const client = new OpenAI({ apiKey: o.apiKey, ...(c.baseUrl ? { baseURL: c.baseUrl } : {}), maxRetries: 0, timeout: c.requestTimeoutMs });
  const messages: Record<string, unknown>[] = [
    { role: 'system', content: o.system },
    { role: 'user', content: o.firstUser },
  ];
  const tools = o.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.schema } }));
  return {
    provider: 'openai',
    async next(maxTokens, signal) {
      const body = {
        model: c.model,
        messages,
        tools,
        max_completion_tokens: maxTokens,
        ...(c.temperature !== undefined ? { temperature: c.temperature } : {}),
        ...(c.effort ? { reasoning_effort: c.effort } : {}),
      };
      const res = (await client.chat.completions.create(body as never, { signal })) as unknown as {
        choices: {
          message: { content?: string | null; tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[] };
          finish_reason: string;
        }[];
        usage?: { prompt_tokens: number; completion_tokens: number };
      };
      const choice = res.choices[0];
      if (!choice) throw new Error('the chat completion has no choices');
      const calls = (choice.message.tool_calls ?? []).filter((t) => t.type === 'function');
      messages.push({ role: 'assistant', content: choice.message.content ?? null, ...(calls.length ? { tool_calls: calls } : {}) });
      return {
        text: choice.message.content ?? '',
        toolCalls: calls.map((t) => ({ id: t.id, name: t.function.name, raw: t.function.arguments, ...parseArgs(t.function.arguments) })),
        stop:
          choice.finish_reason === 'tool_calls'
            ? 'tool_use'
            : choice.finish_reason === 'length'
              ? 'max_tokens'
              : choice.finish_reason === 'stop'
                ? 'end'
                : choice.finish_reason,
        usage: { input: res.usage?.prompt_tokens ?? 0, output: res.usage?.completion_tokens ?? 0 },
      };
    },
    answer(results, note) {
      for (const r of results) messages.push({ role: 'tool', tool_call_id: r.id, content: r.isError ? `ERROR: ${r.output}` : r.output });
      if (note) messages.push({ role: 'user', content: note });
    },
    say(text) {
      messages.push({ role: 'user', content: text });
    },
  };
}
