/**
 * A local HTTP server speaking the real wire formats of the Anthropic Messages API
 * (`POST /v1/messages`: content blocks, tool_use / tool_result, usage, stop_reason, error bodies
 * `{"type":"error","error":{...}}`) and OpenAI chat completions (`POST /v1/chat/completions`:
 * tool_calls with JSON-string arguments, usage, finish_reason, `{"error":{...}}`), so the real SDKs
 * can be pointed at it by base URL. Each test scripts the "model": a function from the conversation
 * so far (decoded from whichever wire format arrived) to the next reply, or a raw HTTP reply.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedToolCall {
  name: string;
  /** An object (sent as JSON), or a raw string sent as-is (OpenAI) to test malformed arguments. */
  args: Record<string, unknown> | string;
}

/** What the scripted model says next. */
export interface ModelReply {
  text?: string;
  toolCalls?: ScriptedToolCall[];
  usage?: { input: number; output: number };
  /** Default: 'tool_use' when there are tool calls, else 'end_turn' (mapped to the provider's word). */
  stop?: 'end_turn' | 'tool_use' | 'max_tokens';
}

/** A raw HTTP reply (errors, hangs). */
export interface RawReply {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** Wait this long before answering (a timeout test). */
  delayMs?: number;
}

/** The conversation as the server decoded it, provider-neutral. */
export interface SeenRequest {
  provider: 'anthropic' | 'openai';
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
  system: string;
  /** Results of the previous turn's tool calls, in order. */
  toolResults: { id: string; name: string; content: string; isError: boolean }[];
  /** The last user text (a nudge, or the first message). */
  userText: string;
  /** How many requests came before this one (retries included). */
  index: number;
  maxTokens: number;
}

export type Script = (req: SeenRequest) => ModelReply | RawReply | Promise<ModelReply | RawReply>;

const isRaw = (r: ModelReply | RawReply): r is RawReply => typeof (r as RawReply).status === 'number';

export function anthropicError(status: number, type: string, message: string, headers: Record<string, string> = {}): RawReply {
  return { status, headers, body: { type: 'error', error: { type, message } } };
}

export function openaiError(status: number, type: string, message: string, headers: Record<string, string> = {}): RawReply {
  return { status, headers, body: { error: { message, type, param: null, code: null } } };
}

export class FakeLlmServer {
  readonly requests: SeenRequest[] = [];
  private server: Server | undefined;
  private port = 0;
  private ids = 0;
  private readonly names = new Map<string, string>();

  constructor(private readonly script: Script) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** Base URL for the Anthropic SDK (it appends /v1/messages). */
  get anthropicBaseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Base URL for the OpenAI SDK (it appends /chat/completions). */
  get openaiBaseUrl(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const path = (req.url ?? '').split('?')[0];
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    } catch {
      return send(res, { status: 400, body: { error: { message: 'invalid JSON body' } } });
    }
    const provider = path === '/v1/messages' ? 'anthropic' : path === '/v1/chat/completions' ? 'openai' : undefined;
    if (!provider) return send(res, { status: 404, body: { error: { message: `no route ${req.method} ${path}` } } });
    const seen = provider === 'anthropic' ? this.decodeAnthropic(body) : this.decodeOpenAI(body);
    const request: SeenRequest = { provider, path, headers: req.headers, body, index: this.requests.length, ...seen };
    this.requests.push(request);
    let reply: ModelReply | RawReply;
    try {
      reply = await this.script(request);
    } catch (e) {
      return send(res, { status: 500, body: { error: { message: `script failed: ${e instanceof Error ? e.stack : String(e)}` } } });
    }
    if (isRaw(reply)) {
      if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
      if (res.destroyed || req.socket.destroyed) return;
      return send(res, reply);
    }
    return send(res, {
      status: 200,
      headers: provider === 'anthropic' ? { 'request-id': `req_${this.ids}` } : { 'x-request-id': `req_${this.ids}` },
      body: provider === 'anthropic' ? this.encodeAnthropic(reply, body) : this.encodeOpenAI(reply, body),
    });
  }

  private decodeAnthropic(body: Record<string, unknown>) {
    const messages = (body.messages ?? []) as { role: string; content: unknown }[];
    const last = messages[messages.length - 1];
    const blocks = typeof last?.content === 'string' ? [{ type: 'text', text: last.content }] : ((last?.content ?? []) as Record<string, unknown>[]);
    const toolResults = blocks
      .filter((b) => b.type === 'tool_result')
      .map((b) => ({
        id: String(b.tool_use_id),
        name: this.names.get(String(b.tool_use_id)) ?? '?',
        content: typeof b.content === 'string' ? b.content : JSON.stringify(b.content),
        isError: b.is_error === true,
      }));
    const userText = blocks
      .filter((b) => b.type === 'text')
      .map((b) => String(b.text))
      .join('\n');
    return { system: String(body.system ?? ''), toolResults, userText, maxTokens: Number(body.max_tokens) };
  }

  private decodeOpenAI(body: Record<string, unknown>) {
    const messages = (body.messages ?? []) as { role: string; content: unknown; tool_call_id?: string }[];
    const toolResults: SeenRequest['toolResults'] = [];
    let i = messages.length - 1;
    let userText = '';
    if (messages[i]?.role === 'user') userText = String(messages[i--].content);
    const trailing: typeof messages = [];
    while (i >= 0 && messages[i].role === 'tool') trailing.unshift(messages[i--]);
    for (const m of trailing) {
      const content = String(m.content);
      toolResults.push({
        id: String(m.tool_call_id),
        name: this.names.get(String(m.tool_call_id)) ?? '?',
        content: content.replace(/^ERROR: /, ''),
        isError: content.startsWith('ERROR: '),
      });
    }
    const system = String(messages.find((m) => m.role === 'system')?.content ?? '');
    return { system, toolResults, userText, maxTokens: Number(body.max_completion_tokens ?? body.max_tokens) };
  }

  private encodeAnthropic(r: ModelReply, body: Record<string, unknown>) {
    const content: Record<string, unknown>[] = [];
    if (r.text) content.push({ type: 'text', text: r.text });
    for (const c of r.toolCalls ?? []) {
      const id = `toolu_${String(++this.ids).padStart(4, '0')}`;
      this.names.set(id, c.name);
      content.push({ type: 'tool_use', id, name: c.name, input: typeof c.args === 'string' ? c.args : c.args });
    }
    const { output, stop } = this.truncate(r, Number(body.max_tokens));
    return {
      id: `msg_${++this.ids}`,
      type: 'message',
      role: 'assistant',
      model: body.model,
      content,
      stop_reason: stop,
      stop_sequence: null,
      usage: { input_tokens: r.usage?.input ?? 100, output_tokens: output, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    };
  }

  /** A real API never returns more than max_tokens: a longer scripted output is cut, stop 'max_tokens'. */
  private truncate(r: ModelReply, maxTokens: number): { output: number; stop: NonNullable<ModelReply['stop']> } {
    const want = r.usage?.output ?? 50;
    if (Number.isFinite(maxTokens) && want > maxTokens) return { output: maxTokens, stop: 'max_tokens' };
    return { output: want, stop: r.stop ?? (r.toolCalls?.length ? 'tool_use' : 'end_turn') };
  }

  private encodeOpenAI(r: ModelReply, body: Record<string, unknown>) {
    const calls = (r.toolCalls ?? []).map((c) => {
      const id = `call_${String(++this.ids).padStart(4, '0')}`;
      this.names.set(id, c.name);
      return { id, type: 'function', function: { name: c.name, arguments: typeof c.args === 'string' ? c.args : JSON.stringify(c.args) } };
    });
    const { output, stop } = this.truncate(r, Number(body.max_completion_tokens ?? body.max_tokens));
    const usage = { prompt_tokens: r.usage?.input ?? 100, completion_tokens: output };
    return {
      id: `chatcmpl-${++this.ids}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: r.text ?? null, refusal: null, ...(calls.length ? { tool_calls: calls } : {}) },
          logprobs: null,
          finish_reason: stop === 'tool_use' ? 'tool_calls' : stop === 'max_tokens' ? 'length' : 'stop',
        },
      ],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    };
  }
}

function send(res: ServerResponse, r: RawReply): void {
  const text = r.body === undefined ? '' : JSON.stringify(r.body);
  res.writeHead(r.status, { 'content-type': 'application/json', ...(r.headers ?? {}) });
  res.end(text);
}

/** The text of a `read_file` tool result without its line numbers (what a model would copy out). */
export function fileTextOf(readFileOutput: string): string {
  return readFileOutput
    .split('\n')
    .filter((l) => /^\s*\d+ {2}/.test(l))
    .map((l) => l.replace(/^\s*\d+ {2}/, ''))
    .join('\n');
}
