/**
 * The `openai-compatible` backend: rollouts against any server that speaks OpenAI chat completions
 * (vLLM, SGLang, llama.cpp, Ollama, LM Studio, a hosted API, or `whale serve`).
 *
 * On open it probes the server once: is the model listed, does a one-token completion come back
 * with `prompt_token_ids`/`token_ids` (vLLM's `return_token_ids`) and chosen-token `logprobs`? The
 * answer is the backend's capabilities, recorded by the engine. Servers that ignore those fields
 * still work for rollouts; their calls are recorded without token ids (the fallback, shown as
 * `tokenIds: false`), which is enough for harness search and evaluation but not for RSFT.
 *
 * It has no trainer: `capabilities().update` is 'none' and `train` refuses. The engine checks this
 * before a run starts, so a weight phase is refused before any rollout is paid for — unless the
 * config asks (`recordRsft`) for weight phases that record their accepted batches for later training.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { writeFileAtomic } from '../../core/atomic.js';
import type { Capabilities, ChatRequest, ChatResult, PolicyBackend, TrainExample, TrainHyper, TrainResult } from '../types.js';
import { BackendHttpError, JsonHttp, type HttpOptions } from './http.js';

export interface OpenAICompatibleOptions extends Omit<HttpOptions, 'baseUrl'> {
  /** Base URL ending in /v1 (as OpenAI clients take it). */
  baseUrl: string;
  model: string;
  /** Context length when the server does not tell (vLLM reports `max_model_len` on /v1/models). */
  maxContext?: number;
  /** When set, `train` writes the batch here (JSONL) for later training instead of refusing. */
  recordDir?: string;
}

export interface ProbeReport {
  models: string[];
  tokenIds: boolean;
  logprobs: boolean;
  maxContext: number;
  /** One line for logs and the extension: what the server gave. */
  summary: string;
}

export class CapabilityError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CapabilityError';
  }
}

export class OpenAICompatibleBackend implements PolicyBackend {
  readonly kind = 'openai-compatible';
  readonly http: JsonHttp;
  private constructor(
    private readonly o: OpenAICompatibleOptions,
    http: JsonHttp,
    readonly probe: ProbeReport,
  ) {
    this.http = http;
  }

  static async open(o: OpenAICompatibleOptions): Promise<OpenAICompatibleBackend> {
    const http = new JsonHttp({ ...o, baseUrl: o.baseUrl });
    return new OpenAICompatibleBackend(o, http, await probeServer(http, o));
  }

  async capabilities(): Promise<Capabilities> {
    return {
      update: 'none',
      tokenIds: this.probe.tokenIds,
      logprobs: this.probe.logprobs,
      maxContext: this.probe.maxContext,
      chatTemplate: 'server',
      ...(this.o.recordDir ? { recordsRsft: true } : {}),
    };
  }

  currentVersion(): string {
    return this.o.model;
  }

  async endpoint(version?: string): Promise<{ baseUrl: string; model: string }> {
    return { baseUrl: this.http.baseUrl, model: version ?? this.o.model };
  }

  async chat(req: ChatRequest): Promise<ChatResult> {
    const version = req.version ?? this.o.model;
    const p = req.params ?? {};
    const body: Record<string, unknown> = {
      model: version,
      messages: req.messages,
      n: 1,
      stream: false,
      ...(p.temperature !== undefined ? { temperature: p.temperature } : {}),
      ...(p.top_p !== undefined ? { top_p: p.top_p } : {}),
      ...(p.max_tokens !== undefined ? { max_tokens: p.max_tokens } : {}),
      ...(p.stop?.length ? { stop: p.stop } : {}),
      ...(p.seed !== undefined ? { seed: p.seed } : {}),
      ...(this.probe.logprobs ? { logprobs: true } : {}),
      ...(this.probe.tokenIds ? { return_token_ids: true } : {}),
    };
    const json = await this.http.post('/chat/completions', body, { signal: req.signal });
    const r = parseCompletion(json, version, `${this.http.baseUrl}/chat/completions`);
    // OpenAI and vLLM leave the matched stop string out of the text; transformers serve keeps it.
    const kept = r.finishReason === 'stop' && r.completionTokenIds === undefined ? p.stop?.find((s) => s !== '' && r.text.endsWith(s)) : undefined;
    return kept ? { ...r, text: r.text.slice(0, -kept.length) } : r;
  }

  /**
   * No trainer: refuses, or with `recordDir` writes the batch (a header line, then one example per
   * line) to a content-addressed file and leaves the policy as it is.
   */
  async train(examples: TrainExample[], hyper: TrainHyper): Promise<TrainResult> {
    if (!this.o.recordDir) throw new CapabilityError(noTrainerMessage(this.http.baseUrl));
    const t0 = performance.now();
    const header = { format: 'whale-rsft-batch', version: 1, policyVersion: this.o.model, hyper, examples: examples.length };
    const text = [header, ...examples].map((x) => JSON.stringify(x)).join('\n') + '\n';
    const file = join(this.o.recordDir, `${createHash('sha256').update(text).digest('hex').slice(0, 24)}.jsonl`);
    writeFileAtomic(file, text);
    return {
      version: this.o.model,
      parentVersion: this.o.model,
      optimizerSteps: 0,
      losses: [],
      trainedTokens: examples.reduce((n, e) => n + e.lossMask.filter((m) => m).length, 0),
      wallMs: performance.now() - t0,
    };
  }

  async publish(version: string): Promise<void> {
    if (version !== this.o.model)
      throw new CapabilityError(`the openai-compatible backend samples only '${this.o.model}'; it cannot make '${version}' current (it has no trainer)`);
  }

  async close(): Promise<void> {}
}

export function noTrainerMessage(baseUrl: string): string {
  return `the openai-compatible backend at ${baseUrl} samples only: it cannot train, so a weight phase cannot run. Use --method harness-only (or whale eval), a backend that trains ('embedded', 'tinker'), or "recordRsft": true to record the batches for later training`;
}

/** GET /models, then a one-token completion asking for token ids and logprobs. */
export async function probeServer(http: JsonHttp, o: { model: string; maxContext?: number }): Promise<ProbeReport> {
  const list = (await http.get('/models', { retries: 1 })) as { data?: { id?: string; max_model_len?: number }[] } | undefined;
  const models = (list?.data ?? []).map((m) => String(m.id));
  if (models.length && !models.includes(o.model)) {
    throw new CapabilityError(
      `the server at ${http.baseUrl} does not serve model '${o.model}' (it lists: ${models.slice(0, 10).join(', ')}); set backend.model to one of them`,
    );
  }
  const listed = list?.data?.find((m) => m.id === o.model);
  // Servers that validate strictly refuse fields they do not know (transformers serve: 422 for
  // return_token_ids): ask again without the extras, and the answer is the fallback.
  const ask = (extras: Record<string, unknown>) =>
    http.post('/chat/completions', { model: o.model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 1, temperature: 0, ...extras }, { retries: 1 });
  const refusedField = (e: unknown) => e instanceof BackendHttpError && (e.status === 400 || e.status === 422);
  let json: unknown;
  try {
    json = await ask({ logprobs: true, return_token_ids: true });
  } catch (e) {
    if (!refusedField(e)) throw e;
    try {
      json = await ask({ logprobs: true });
    } catch (e2) {
      if (!refusedField(e2)) throw e2;
      json = await ask({});
    }
  }
  const r = parseCompletion(json, o.model, `${http.baseUrl}/chat/completions`);
  const tokenIds = r.promptTokenIds !== undefined && r.completionTokenIds !== undefined;
  const logprobs = r.logprobs !== undefined && r.logprobs.length === r.usage.completionTokens;
  const maxContext = listed?.max_model_len ?? o.maxContext ?? 4096;
  const summary = `${http.baseUrl} model ${o.model}: token ids ${tokenIds ? 'returned' : 'NOT returned (fallback: calls recorded without ids; RSFT impossible)'}, logprobs ${logprobs ? 'returned' : 'not returned'}, context ${maxContext}, training none`;
  return { models, tokenIds, logprobs, maxContext, summary };
}

interface CompletionJson {
  model?: string;
  prompt_token_ids?: number[] | null;
  choices?: {
    message?: { content?: string | null };
    finish_reason?: string | null;
    token_ids?: number[] | null;
    logprobs?: { content?: { logprob: number }[] | null } | null;
  }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number };
}

/** An OpenAI chat completion → ChatResult; token ids and logprobs only when the server gave them. */
export function parseCompletion(json: unknown, version: string, where: string): ChatResult {
  const j = json as CompletionJson | undefined;
  const c = j?.choices?.[0];
  if (!c || !c.message) throw new Error(`${where}: the reply has no choices[0].message (got ${JSON.stringify(json)?.slice(0, 200)})`);
  const completionTokenIds = Array.isArray(c.token_ids) ? c.token_ids : undefined;
  const promptTokenIds = Array.isArray(j!.prompt_token_ids) ? j!.prompt_token_ids : undefined;
  const lp = c.logprobs?.content;
  const logprobs = Array.isArray(lp) ? lp.map((x) => x.logprob) : undefined;
  return {
    text: c.message.content ?? '',
    finishReason: c.finish_reason === 'length' ? 'length' : 'stop',
    version,
    ...(promptTokenIds && completionTokenIds ? { promptTokenIds, completionTokenIds } : {}),
    ...(logprobs ? { logprobs } : {}),
    usage: {
      promptTokens: j!.usage?.prompt_tokens ?? promptTokenIds?.length ?? 0,
      completionTokens: j!.usage?.completion_tokens ?? completionTokenIds?.length ?? 0,
    },
  };
}
