/**
 * An OpenAI-compatible HTTP server for the embedded backend (node:http, loopback by default), so a
 * harness talks to the embedded model exactly as it would to vLLM.
 *
 *   GET  /v1/models, GET /v1/models/{id}
 *   POST /v1/completions {prompt: string | token ids, …} (chosen-token logprobs with logprobs: 0;
 *        return_token_ids as for chat)
 *   POST /v1/chat/completions  {messages, model: version id | "current", temperature, top_p,
 *        max_tokens | max_completion_tokens, stop, seed, n: 1}
 *        vLLM-style extras: return_token_ids → `prompt_token_ids` on the response and `token_ids`
 *        on the choice; logprobs → choice.logprobs.content[{token, logprob, bytes, top_logprobs: []}]
 *        (chosen-token logprobs under the temperature-1 model). Non-streaming only.
 *   POST /v1/load_lora_adapter {lora_name, lora_path}, POST /v1/unload_lora_adapter {lora_name}
 *        vLLM's runtime LoRA routes (as with VLLM_ALLOW_RUNTIME_LORA_UPDATING=True): 200 with a
 *        plain-text "Success: …" line; 400 "has already been loaded", 404 "cannot be found". The
 *        embedded model is full-parameter, so lora_path is a saved model folder (a full snapshot)
 *        and the name then samples it as `model`.
 * With a Tinker service, the Tinker routes under /api/v1/ too (tinkerService.ts).
 * Errors are OpenAI-shaped: {error: {message, type, code, param}} with a 4xx/5xx status. A client
 * that disconnects aborts its generation.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import type { ChatRequest, ChatResult } from '../types.js';
import { BodyTooLargeError, readRequestBody, readRequestBytes } from '../../core/requestBody.js';
import { ContextLengthError } from './sampler.js';
import type { WordTokenizer } from './tokenizer.js';
import type { GenerateRequest, GenerateResult } from './sampler.js';
import { TinkerHttpError, type EmbeddedTinkerService } from './tinkerService.js';
import { ProtoError, decodeForwardBackwardRequest, encodeForwardBackwardOutput, encodeSampleResponse } from '../tinker/proto.js';
import type { ForwardBackwardOutput, SampleOutput } from '../tinker/protocol.js';

/** What the server needs from a backend (EmbeddedBackend provides it). */
export interface ServableBackend {
  chat(req: ChatRequest): Promise<ChatResult>;
  currentVersion(): string;
  versions(): string[];
  hasVersion(version: string): boolean;
  tokenizerFor(version?: string): WordTokenizer;
  /** Context length of a version: a longer prompt is refused with 400 context_length_exceeded (in-process chat keeps its tail instead). */
  maxContext?(version?: string): number;
  /** vLLM's runtime LoRA routes (absent: the routes answer 404 as a vLLM without them would). */
  loadAdapter?(name: string, path: string): string;
  unloadAdapter?(name: string): void;
  adapterNames?(): { name: string; version: string }[];
  /** Samples from prompt token ids (POST /v1/completions). */
  generateIds?(version: string, req: GenerateRequest): Promise<GenerateResult>;
}

export interface EmbeddedServer {
  /** http://host:port (no trailing slash; the OpenAI base URL is `${url}/v1`). */
  url: string;
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 8 * 1024 * 1024;

const Content = z.union([
  z.string(),
  z.array(z.object({ type: z.string(), text: z.string().optional() })).transform((parts) => parts.map((p) => p.text ?? '').join('')),
  z.null().transform(() => ''),
]);

/** The sampling fields /v1/chat/completions and /v1/completions share (logprobs differ: a flag there, a count here). */
const SAMPLING_FIELDS = {
  temperature: z.number().min(0).optional(),
  top_p: z.number().gt(0).max(1).optional(),
  max_tokens: z.number().int().positive().optional(),
  stop: z
    .union([z.string(), z.array(z.string())])
    .nullable()
    .optional(),
  seed: z.number().int().optional(),
  n: z.number().int().optional(),
  stream: z.boolean().optional(),
  return_token_ids: z.boolean().optional(),
};

const ChatBody = z.object({
  model: z.string().default('current'),
  messages: z
    .array(
      z.object({
        role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']).transform((r) => (r === 'developer' ? 'system' : r)),
        content: Content,
        name: z.string().optional(),
      }),
    )
    .min(1),
  ...SAMPLING_FIELDS,
  max_completion_tokens: z.number().int().positive().optional(),
  logprobs: z.boolean().optional(),
  top_logprobs: z.number().int().optional(),
  // Parsed only to be refused: a field zod would drop would be silently ignored.
  tools: z.array(z.unknown()).nullable().optional(),
  tool_choice: z.unknown().optional(),
});

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: string = 'invalid_request_error',
    readonly code: string | number | null = null,
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

export function startEmbeddedServer(opts: { backend: ServableBackend; port?: number; host?: string; tinker?: EmbeddedTinkerService }): Promise<EmbeddedServer> {
  const host = opts.host ?? '127.0.0.1';
  const server = createServer((req, res) => {
    const tinker = opts.tinker;
    const served = tinker && (req.url ?? '').startsWith('/api/v1/') ? handleTinker(tinker, req, res) : handle(opts.backend, req, res);
    served.catch((e: unknown) => sendError(res, toHttpError(e)));
  });
  server.keepAliveTimeout = 30_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      const a = server.address() as AddressInfo;
      const h = a.family === 'IPv6' ? `[${a.address}]` : a.address;
      resolve({
        url: `http://${h}:${a.port}`,
        close: () =>
          new Promise<void>((r) => {
            server.closeAllConnections();
            server.close(() => r());
          }),
      });
    });
  });
}

async function handle(backend: ServableBackend, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '/').split('?')[0].replace(/\/+$/, '');
  if (path === '/v1/models' || path === '/models') {
    if (req.method !== 'GET') throw new HttpError(405, `use GET for ${path}`);
    const current = backend.currentVersion();
    const ids = [...new Set([current, ...backend.versions()])];
    const adapters = backend.adapterNames?.() ?? [];
    return sendJson(res, 200, {
      object: 'list',
      data: [
        ...ids.map((id) => ({ id, object: 'model', created: 0, owned_by: 'whale-embedded', current: id === current })),
        ...adapters.map((a) => ({ id: a.name, object: 'model', created: 0, owned_by: 'whale-embedded', root: a.version, parent: current })),
      ],
    });
  }
  if (path.startsWith('/v1/models/')) {
    if (req.method !== 'GET') throw new HttpError(405, `use GET for ${path}`);
    const id = decodeURIComponent(path.slice('/v1/models/'.length));
    const adapter = backend.adapterNames?.().find((a) => a.name === id);
    if (adapter)
      return sendJson(res, 200, { id, object: 'model', created: 0, owned_by: 'whale-embedded', root: adapter.version, parent: backend.currentVersion() });
    if (!backend.versions().includes(id) && id !== backend.currentVersion())
      throw new HttpError(404, `The model \`${id}\` does not exist.`, 'NotFoundError', 'model_not_found', 'model');
    return sendJson(res, 200, { id, object: 'model', created: 0, owned_by: 'whale-embedded', current: id === backend.currentVersion() });
  }
  if ((path === '/v1/completions' || path === '/completions') && backend.generateIds) {
    if (req.method !== 'POST') throw new HttpError(405, `use POST for ${path}`);
    return completions(backend as ServableBackend & Required<Pick<ServableBackend, 'generateIds'>>, req, res);
  }
  if ((path === '/v1/load_lora_adapter' || path === '/v1/unload_lora_adapter') && backend.loadAdapter && backend.unloadAdapter) {
    if (req.method !== 'POST') throw new HttpError(405, `use POST for ${path}`);
    const body = parseBody(await readBody(req)) as { lora_name?: unknown; lora_path?: unknown };
    if (typeof body?.lora_name !== 'string' || body.lora_name === '')
      throw new HttpError(400, 'lora_name (a non-empty string) is required', 'invalid_request_error', null, 'lora_name');
    if (path === '/v1/unload_lora_adapter') {
      backend.unloadAdapter(body.lora_name);
      return sendText(res, 200, `Success: LoRA adapter '${body.lora_name}' removed successfully.`);
    }
    if (typeof body.lora_path !== 'string' || body.lora_path === '')
      throw new HttpError(400, 'lora_path (a folder the server can read) is required', 'invalid_request_error', null, 'lora_path');
    backend.loadAdapter(body.lora_name, body.lora_path);
    return sendText(res, 200, `Success: LoRA adapter '${body.lora_name}' added successfully.`);
  }
  if (path === '/v1/chat/completions' || path === '/chat/completions') {
    if (req.method !== 'POST') throw new HttpError(405, `use POST for ${path}`);
    return chatCompletions(backend, req, res);
  }
  if (path === '/health' || path === '/v1/health') return sendJson(res, 200, { ok: true });
  throw new HttpError(
    404,
    `no route ${req.method} ${path} (this server offers GET /v1/models and POST /v1/chat/completions)`,
    'invalid_request_error',
    'not_found',
  );
}

function parseBody(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch (e) {
    throw new HttpError(400, `request body is not valid JSON: ${(e as Error).message}`);
  }
}

async function chatCompletions(backend: ServableBackend, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const json = parseBody(await readBody(req));
  const parsed = ChatBody.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const param = issue.path.join('.');
    throw new HttpError(400, `invalid request: ${param ? param + ': ' : ''}${issue.message}`, 'invalid_request_error', null, param || null);
  }
  const body = parsed.data;
  if (body.stream)
    throw new HttpError(
      400,
      'stream: true is not supported by the embedded backend; send stream: false (or omit it)',
      'invalid_request_error',
      'unsupported_parameter',
      'stream',
    );
  if (body.top_logprobs !== undefined && body.top_logprobs > 0)
    throw new HttpError(
      400,
      `top_logprobs must be 0 (got ${body.top_logprobs}): the embedded backend returns the chosen token's logprob only (logprobs: true)`,
      'invalid_request_error',
      'unsupported_parameter',
      'top_logprobs',
    );
  if (body.tools?.length)
    throw new HttpError(
      400,
      'tools are not supported by the embedded backend (no tool-call parsing): describe tools in the prompt and parse the reply, as WHALE harnesses do',
      'invalid_request_error',
      'unsupported_parameter',
      'tools',
    );
  if (body.n !== undefined && body.n !== 1)
    throw new HttpError(400, `n must be 1 (got ${body.n}); send separate requests for more samples`, 'invalid_request_error', 'unsupported_parameter', 'n');
  if (!backend.hasVersion(body.model)) {
    throw new HttpError(
      404,
      `the model ${JSON.stringify(body.model)} does not exist: use "current" or a policy version id from GET /v1/models`,
      'invalid_request_error',
      'model_not_found',
      'model',
    );
  }
  const abort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  const stop = body.stop == null ? undefined : typeof body.stop === 'string' ? [body.stop] : body.stop;
  if (backend.maxContext) {
    const C = backend.maxContext(body.model);
    const n = backend.tokenizerFor(body.model).encodeChat(
      body.messages.map((m) => ({ role: m.role, content: m.content })),
      { addGenerationPrompt: true },
    ).length;
    if (n >= C) throw new HttpError(400, new ContextLengthError(n, C).message, 'invalid_request_error', 'context_length_exceeded', 'messages');
  }
  const result = await backend.chat({
    messages: body.messages.map((m) => ({ role: m.role, content: m.content, ...(m.name ? { name: m.name } : {}) })),
    version: body.model,
    params: {
      temperature: body.temperature,
      top_p: body.top_p,
      max_tokens: body.max_completion_tokens ?? body.max_tokens,
      stop,
      seed: body.seed,
    },
    signal: abort.signal,
  });
  const tok = backend.tokenizerFor(result.version);
  const choice: Record<string, unknown> = {
    index: 0,
    message: { role: 'assistant', content: result.text },
    finish_reason: result.finishReason,
    logprobs: null,
  };
  if (body.logprobs) {
    choice.logprobs = {
      content: (result.completionTokenIds ?? []).map((id, i) => {
        const token = tok.tokens[id];
        return { token, logprob: result.logprobs?.[i] ?? null, bytes: [...tok.tokenBytes(id)], top_logprobs: [] };
      }),
    };
  }
  if (body.return_token_ids) choice.token_ids = result.completionTokenIds;
  const response: Record<string, unknown> = {
    id: `chatcmpl-${randomBytes(12).toString('hex')}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: backend.adapterNames?.().some((a) => a.name === body.model) ? body.model : result.version,
    choices: [choice],
    usage: {
      prompt_tokens: result.usage.promptTokens,
      completion_tokens: result.usage.completionTokens,
      total_tokens: result.usage.promptTokens + result.usage.completionTokens,
    },
  };
  if (body.return_token_ids) response.prompt_token_ids = result.promptTokenIds;
  sendJson(res, 200, response);
}

const CompletionBody = z.object({
  model: z.string().default('current'),
  prompt: z.union([z.string(), z.array(z.number().int().nonnegative()).min(1)]),
  ...SAMPLING_FIELDS,
  echo: z.boolean().optional(),
  logprobs: z.number().int().nonnegative().nullable().optional(),
});

/** The legacy completions route: a raw prompt (text through the model's tokenizer, or token ids), no chat template. */
async function completions(
  backend: ServableBackend & Required<Pick<ServableBackend, 'generateIds'>>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const parsed = CompletionBody.safeParse(parseBody(await readBody(req)));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const param = issue.path.join('.');
    throw new HttpError(400, `invalid request: ${param ? param + ': ' : ''}${issue.message}`, 'invalid_request_error', null, param || null);
  }
  const body = parsed.data;
  const refuse = (param: string, why: string) => {
    throw new HttpError(400, why, 'invalid_request_error', 'unsupported_parameter', param);
  };
  if (body.stream) refuse('stream', 'stream: true is not supported by the embedded backend; send stream: false (or omit it)');
  if (body.n !== undefined && body.n !== 1) refuse('n', `n must be 1 (got ${body.n}); send separate requests for more samples`);
  if (body.echo) refuse('echo', 'echo is not supported by the embedded backend');
  if (body.logprobs != null && body.logprobs > 0)
    refuse('logprobs', `logprobs must be 0 (got ${body.logprobs}): the embedded backend returns the chosen token's logprob only`);
  if (!backend.hasVersion(body.model)) throw new HttpError(404, `The model \`${body.model}\` does not exist.`, 'NotFoundError', 'model_not_found', 'model');
  const tok = backend.tokenizerFor(body.model);
  const promptIds = typeof body.prompt === 'string' ? tok.encode(body.prompt) : body.prompt;
  const abort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  const r = await backend.generateIds(body.model, {
    promptIds,
    temperature: body.temperature,
    topP: body.top_p,
    maxTokens: body.max_tokens ?? 16, // OpenAI's default for this route
    stop: body.stop == null ? undefined : typeof body.stop === 'string' ? [body.stop] : body.stop,
    seed: body.seed,
    signal: abort.signal,
  });
  const choice: Record<string, unknown> = { index: 0, text: r.text, finish_reason: r.finishReason, logprobs: null };
  if (body.logprobs != null)
    choice.logprobs = { tokens: r.completionTokenIds.map((id) => tok.tokens[id]), token_logprobs: r.logprobs, top_logprobs: null, text_offset: null };
  if (body.return_token_ids) choice.token_ids = r.completionTokenIds;
  sendJson(res, 200, {
    id: `cmpl-${randomBytes(12).toString('hex')}`,
    object: 'text_completion',
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    choices: [choice],
    usage: { prompt_tokens: r.usage.promptTokens, completion_tokens: r.usage.completionTokens, total_tokens: r.usage.promptTokens + r.usage.completionTokens },
    ...(body.return_token_ids ? { prompt_token_ids: r.promptTokenIds } : {}),
  });
}

/** The Tinker routes (tinkerService.ts): FastAPI-shaped errors, `{detail}`. */
async function handleTinker(tinker: EmbeddedTinkerService, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '/').split('?')[0].replace(/\/+$/, '');
  let body: unknown;
  if (req.method === 'POST') {
    const raw = await readRaw(req);
    // The official SDK >= 0.25 sends forward_backward as protobuf (tinker/proto.ts).
    if (/application\/x-protobuf/i.test(req.headers['content-type'] ?? '')) {
      const encoding = req.headers['content-encoding'];
      if (encoding && encoding !== 'identity')
        return sendJson(res, 415, { detail: `Content-Encoding '${encoding}' is not supported (client/config answers proto_compress_fwdbwd: false)` });
      if (!/\/forward_backward$/.test(path))
        return sendJson(res, 415, { detail: `${path}: protobuf bodies are accepted for forward_backward only; send JSON` });
      try {
        body = decodeForwardBackwardRequest(raw);
      } catch (e) {
        if (e instanceof ProtoError) return sendJson(res, 400, { detail: `request body is not a valid protobuf ${e.message}` });
        throw e;
      }
    } else {
      const text = raw.toString('utf8');
      try {
        body = text.trim() === '' ? {} : JSON.parse(text);
      } catch (e) {
        return sendJson(res, 400, { detail: `request body is not valid JSON: ${(e as Error).message}` });
      }
    }
  }
  // WHALE's client sends Idempotency-Key; the official tinker SDK sends X-Idempotency-Key.
  const key = req.headers['idempotency-key'] ?? req.headers['x-idempotency-key'];
  try {
    const reply = await tinker.handle(req.method ?? 'GET', path, body, typeof key === 'string' ? key : undefined);
    if (!reply) return sendJson(res, 404, { detail: `no Tinker route ${req.method} ${path}` });
    // SDK >= 0.25 asks for these two results as protobuf (0.38.0 refuses them as JSON).
    if (reply.status === 200 && reply.kind && /application\/x-protobuf/i.test(req.headers.accept ?? '')) {
      const data =
        reply.kind === 'sample' ? encodeSampleResponse(reply.body as SampleOutput) : encodeForwardBackwardOutput(reply.body as ForwardBackwardOutput);
      res.writeHead(200, { 'content-type': 'application/x-protobuf', 'content-length': data.length });
      return void res.end(data);
    }
    sendJson(res, reply.status, reply.body);
  } catch (e) {
    if (e instanceof TinkerHttpError) return sendJson(res, e.status, { detail: e.message });
    sendJson(res, 500, { detail: `embedded backend error: ${(e as Error).message}` });
  }
}

const readBody = (req: IncomingMessage) => readRequestBody(req, MAX_BODY_BYTES);
const readRaw = (req: IncomingMessage) => readRequestBytes(req, MAX_BODY_BYTES);

function toHttpError(e: unknown): HttpError {
  if (e instanceof HttpError) return e;
  if (e instanceof BodyTooLargeError) return new HttpError(413, e.message);
  const err = e as { name?: string; code?: string; message?: string };
  if (err?.code === 'context_length_exceeded')
    return new HttpError(400, err.message ?? 'context length exceeded', 'invalid_request_error', 'context_length_exceeded', 'messages');
  // vLLM's shapes: 404 NotFoundError for a path without an adapter or an unknown name, 400 BadRequestError for a name already loaded; code = the status.
  if (err?.name === 'AdapterError') {
    const status = (e as { status: number }).status;
    return new HttpError(status, err.message ?? 'adapter error', status === 404 ? 'NotFoundError' : 'BadRequestError', status, 'lora_name');
  }
  if (err?.code === 'model_not_found') return new HttpError(404, err.message ?? 'model not found', 'invalid_request_error', 'model_not_found', 'model');
  if (e instanceof RangeError) return new HttpError(400, e.message);
  if (err?.name === 'AbortError') return new HttpError(499, 'request aborted by the client', 'invalid_request_error', 'aborted');
  return new HttpError(500, `embedded backend error: ${err?.message ?? String(e)}`, 'server_error');
}

function sendError(res: ServerResponse, e: HttpError): void {
  if (res.headersSent || res.destroyed) return;
  sendJson(res, e.status, { error: { message: e.message, type: e.type, code: e.code, param: e.param } });
}

function sendText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const data = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) });
  res.end(data);
}
