/**
 * The gateway's state for one rollout: what the harness may still do (turn and token budgets),
 * and the record of everything it did (model calls as sent and received, tool calls, logs).
 * The HTTP layer (gateway.ts) only parses requests and forwards them here, so this class holds
 * every rule the gateway enforces and can be tested without sockets.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Sampling } from '../core/config.js';
import { InfraError, type InfraSource } from '../core/errors.js';
import { hashSeed } from '../core/rng.js';
import type { ChatMessage, HarnessEvent, ModelCall, Termination } from '../core/trajectory.js';
import type { Task, ToolSpec } from '../domains/types.js';
import type { PolicyBackend, SamplingParams } from '../policy/types.js';

/** Budgets the gateway enforces for one rollout (already the minimum of sandbox and domain limits). */
export interface GatewayLimits {
  maxTurns: number;
  maxTokens: number;
  maxTokensPerCall?: number;
}

/**
 * The backend refused a request because the prompt exceeds the model's context: the embedded
 * sampler's ContextLengthError, or an OpenAI-compatible server's 400 (vLLM: "This model's maximum
 * context length is …", "… is longer than the maximum model length of …").
 */
export function isContextOverflow(e: unknown): boolean {
  const err = e as { code?: unknown; status?: unknown; message?: unknown; body?: { error?: { code?: unknown } } } | null;
  if (err?.code === 'context_length_exceeded') return true;
  if (err?.status !== 400) return false;
  return (
    err.body?.error?.code === 'context_length_exceeded' ||
    /context length|maximum context|maximum model length|context_length_exceeded|model's context is/i.test(String(err.message))
  );
}

/** Keeps one trajectory bounded even when a harness loops on tools or logs. */
export const MAX_TOOL_CALLS = 512;
export const MAX_LOG_EVENTS = 1000;

/** A reply the HTTP layer sends as JSON with this status. */
export interface GatewayReply {
  status: number;
  body: unknown;
}

export type LimitTermination = Extract<Termination, 'turn_limit' | 'token_limit'>;

const ContentPart = z.object({ type: z.string(), text: z.string().optional() }).passthrough();
const IncomingMessage = z
  .object({
    role: z.enum(['system', 'user', 'assistant', 'tool']),
    content: z.union([z.string(), z.array(ContentPart), z.null()]),
    name: z.string().optional(),
  })
  .passthrough();

/** The OpenAI chat-completions request subset we serve. Unknown fields are ignored, as OpenAI clients add many. */
export const ChatCompletionRequest = z
  .object({
    model: z.string().optional(),
    messages: z.array(IncomingMessage).min(1),
    temperature: z.number().min(0).max(5).nullable().optional(),
    top_p: z.number().gt(0).max(1).nullable().optional(),
    max_tokens: z.number().int().positive().nullable().optional(),
    max_completion_tokens: z.number().int().positive().nullable().optional(),
    stop: z
      .union([z.string(), z.array(z.string()).max(8)])
      .nullable()
      .optional(),
    stream: z.boolean().nullable().optional(),
    n: z.number().int().nullable().optional(),
    tools: z.array(z.unknown()).nullable().optional(),
  })
  .passthrough();
type ChatCompletionRequest = z.infer<typeof ChatCompletionRequest>;

export function errorReply(status: number, message: string, type = 'invalid_request_error', code?: string): GatewayReply {
  return { status, body: { error: { message, type, code: code ?? null } } };
}

function flattenContent(content: z.infer<typeof IncomingMessage>['content']): string {
  if (content === null) return '';
  if (typeof content === 'string') return content;
  return content.map((p) => (p.type === 'text' ? (p.text ?? '') : '')).join('');
}

export interface RolloutSessionOptions {
  task: Task;
  tools: ToolSpec[];
  backend: PolicyBackend;
  limits: GatewayLimits;
  sampling: Sampling;
  seed: number;
  /** Called once when a limit is hit, so the runtime can wind the harness down. */
  onLimit?: (t: LimitTermination, detail: string) => void;
}

export class RolloutSession {
  readonly id = randomBytes(12).toString('hex');
  readonly token = randomBytes(24).toString('hex');
  readonly startedAt = Date.now();
  /** Pinned at the start so a publish during the rollout does not mix versions in one trajectory. */
  readonly policyVersion: string;
  readonly modelCalls: ModelCall[] = [];
  readonly events: HarnessEvent[] = [];
  modelMs = 0;
  toolMs = 0;
  limitHit: { termination: LimitTermination; detail: string } | undefined;
  backendError: string | undefined;
  /**
   * The first infrastructure failure of this rollout (a backend call that failed, a tool service that
   * is down). Whatever the harness did next, the rollout is then not scored: its result says more
   * about the infrastructure than about the harness.
   */
  infraFailure: { source: InfraSource; message: string } | undefined;
  private turnsStarted = 0;
  private completionTokens = 0;
  private toolCalls = 0;
  private logEvents = 0;
  private readonly abort = new AbortController();

  constructor(private readonly o: RolloutSessionOptions) {
    this.policyVersion = o.backend.currentVersion();
  }

  get toolInfos(): { name: string; description: string; parameters: Record<string, unknown> }[] {
    return this.o.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }));
  }

  private now(): number {
    return Date.now() - this.startedAt;
  }

  private hit(termination: LimitTermination, detail: string): GatewayReply {
    if (!this.limitHit) {
      this.limitHit = { termination, detail };
      this.events.push({ t: this.now(), type: 'limit', name: termination, message: detail });
      this.o.onLimit?.(termination, detail);
    }
    return errorReply(429, `${this.limitHit.detail} — no further model calls in this rollout`, 'limit_exceeded', this.limitHit.termination);
  }

  /** Stops in-flight backend calls when the rollout ends. */
  close(): void {
    this.abort.abort();
  }

  async chat(raw: unknown): Promise<GatewayReply> {
    const parsed = ChatCompletionRequest.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return errorReply(400, `bad chat request: ${issue.path.join('.') || '(body)'}: ${issue.message}`);
    }
    const req = parsed.data;
    if (req.stream) return errorReply(400, 'streaming is not supported by the WHALE gateway: send stream:false');
    if (req.n !== undefined && req.n !== null && req.n !== 1) return errorReply(400, 'n must be 1');
    if (req.tools && req.tools.length > 0) return errorReply(400, 'function calling is not supported: call domain tools at …/tools/{name}');
    if (this.limitHit) return this.hit(this.limitHit.termination, this.limitHit.detail);
    if (this.turnsStarted >= this.o.limits.maxTurns)
      return this.hit('turn_limit', `model call ${this.turnsStarted + 1} refused: the limit is ${this.o.limits.maxTurns} calls per rollout`);
    const remaining = this.o.limits.maxTokens - this.completionTokens;
    if (remaining <= 0) return this.hit('token_limit', `model call refused: the rollout used all ${this.o.limits.maxTokens} completion tokens`);

    const index = this.turnsStarted++; // counted before awaiting, so parallel calls cannot overrun the limit
    const params = this.params(req, index, remaining);
    const messages: ChatMessage[] = req.messages.map((m) => ({ role: m.role, content: flattenContent(m.content), ...(m.name ? { name: m.name } : {}) }));
    const t0 = performance.now();
    const sentAt = this.now();
    try {
      const r = await this.o.backend.chat({ messages, params, version: this.policyVersion, signal: this.abort.signal });
      const latencyMs = performance.now() - t0;
      this.modelMs += latencyMs;
      this.completionTokens += r.usage.completionTokens;
      this.modelCalls.push({
        index,
        policyVersion: r.version,
        messages,
        params: { ...params },
        completion: r.text,
        finishReason: r.finishReason,
        ...(r.promptTokenIds ? { promptTokenIds: r.promptTokenIds } : {}),
        ...(r.completionTokenIds ? { completionTokenIds: r.completionTokenIds } : {}),
        ...(r.logprobs ? { logprobs: r.logprobs } : {}),
        usage: r.usage,
        latencyMs,
        t: sentAt,
      });
      return {
        status: 200,
        body: {
          id: `chatcmpl-${this.id}-${index}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: r.version,
          choices: [{ index: 0, message: { role: 'assistant', content: r.text }, finish_reason: r.finishReason }],
          usage: {
            prompt_tokens: r.usage.promptTokens,
            completion_tokens: r.usage.completionTokens,
            total_tokens: r.usage.promptTokens + r.usage.completionTokens,
          },
        },
      };
    } catch (e) {
      const latencyMs = performance.now() - t0;
      this.modelMs += latencyMs;
      const message = e instanceof Error ? e.message : String(e);
      if (this.abort.signal.aborted) return errorReply(503, 'rollout ended', 'rollout_closed');
      const overflow = isContextOverflow(e);
      this.modelCalls.push({
        index,
        policyVersion: this.policyVersion,
        messages,
        params: { ...params },
        completion: '',
        finishReason: 'error',
        usage: { promptTokens: 0, completionTokens: 0 },
        latencyMs,
        t: sentAt,
      });
      this.events.push({ t: this.now(), type: 'error', name: overflow ? 'context_length' : 'backend', message });
      // The harness's request, not the backend, is at fault (vLLM answers 400 too): the harness
      // hears it and may shorten its prompt; the rollout is scored, not an infrastructure failure.
      if (overflow) return errorReply(400, `the prompt does not fit the model's context: ${message}`, 'invalid_request_error', 'context_length_exceeded');
      this.backendError ??= message;
      this.infraFailure ??= { source: 'backend', message };
      return errorReply(502, `policy backend failed: ${message}`, 'backend_error');
    }
  }

  /**
   * Effective sampling parameters. Sampling is the run config's, for training and evaluation alike
   * (REFERENCE.md §2: no harness can change it): a harness that asks for another temperature or
   * top_p gets the config's, and the call records what it asked (`requested_temperature`,
   * `requested_top_p`). max_tokens is the harness's to choose, clamped by the domain's per-call
   * limit and the rollout's remaining token budget.
   */
  private params(
    req: ChatCompletionRequest,
    index: number,
    remaining: number,
  ): SamplingParams & { requested_max_tokens?: number; requested_temperature?: number; requested_top_p?: number } {
    const asked = req.max_completion_tokens ?? req.max_tokens ?? undefined;
    const perCall = this.o.limits.maxTokensPerCall ?? Number.POSITIVE_INFINITY;
    const maxTokens = Math.max(1, Math.min(asked ?? this.o.sampling.max_tokens, perCall, remaining));
    const stop = req.stop === null || req.stop === undefined ? undefined : typeof req.stop === 'string' ? [req.stop] : req.stop;
    const { temperature, top_p } = this.o.sampling;
    return {
      temperature,
      top_p,
      max_tokens: maxTokens,
      ...(stop && stop.length ? { stop } : {}),
      // One stream per (rollout seed, call index): reproducible, and independent across calls.
      seed: hashSeed(`${this.o.seed}:${index}`),
      ...(asked !== undefined && asked !== maxTokens ? { requested_max_tokens: asked } : {}),
      ...(req.temperature !== undefined && req.temperature !== null && req.temperature !== temperature ? { requested_temperature: req.temperature } : {}),
      ...(req.top_p !== undefined && req.top_p !== null && req.top_p !== top_p ? { requested_top_p: req.top_p } : {}),
    };
  }

  async tool(name: string, args: unknown): Promise<GatewayReply> {
    const spec = this.o.tools.find((t) => t.name === name);
    if (!spec) {
      this.events.push({ t: this.now(), type: 'error', name, message: `unknown tool '${name}'` });
      return errorReply(404, `unknown tool '${name}'; tools: ${this.o.tools.map((t) => t.name).join(', ') || '(none)'}`);
    }
    if (this.toolCalls >= MAX_TOOL_CALLS) return errorReply(429, `tool call refused: at most ${MAX_TOOL_CALLS} tool calls per rollout`, 'limit_exceeded');
    this.toolCalls++;
    const t0 = performance.now();
    const t = this.now();
    try {
      const observation = await spec.call(args, this.o.task);
      this.toolMs += performance.now() - t0;
      if (typeof observation !== 'string') throw new Error(`tool '${name}' returned ${typeof observation}, not a string`);
      this.events.push({ t, type: 'tool', name, args, observation });
      return { status: 200, body: { observation } };
    } catch (e) {
      this.toolMs += performance.now() - t0;
      const message = e instanceof Error ? e.message : String(e);
      this.events.push({ t, type: 'tool', name, args, message: `error: ${message}` });
      if (e instanceof InfraError) {
        this.infraFailure ??= { source: e.source, message: `tool '${name}': ${message}` };
        return errorReply(503, `tool '${name}' is unavailable: ${message}`, 'tool_unavailable');
      }
      return errorReply(400, `tool '${name}' failed: ${message}`, 'tool_error');
    }
  }

  /** A harness event from the protocol (ctx.log, console output). */
  log(message: string, data?: unknown, type: 'log' | 'error' = 'log'): void {
    if (this.logEvents === MAX_LOG_EVENTS)
      this.events.push({ t: this.now(), type: 'limit', name: 'log', message: `more than ${MAX_LOG_EVENTS} log events; the rest are dropped` });
    if (this.logEvents++ >= MAX_LOG_EVENTS) return;
    this.events.push({ t: this.now(), type, message, ...(data !== undefined ? { data } : {}) });
  }

  /** An event of the runtime's own (sandbox kills, protocol errors). Never dropped. */
  note(type: 'error' | 'limit', name: string, message: string): void {
    this.events.push({ t: this.now(), type, name, message });
  }
}
