/**
 * A real PolicyBackend that answers instantly from a script: for tests and benchmarks of the
 * harness runtime, where the model's quality is beside the point but the contract (versions, token
 * ids, logprobs, max_tokens truncation, abort signals, concurrency) must be honoured exactly.
 *
 * Tokens are whitespace-separated words; a word's id is a stable hash, its logprob a fixed -0.5.
 */
import type { Capabilities, ChatMessage, ChatRequest, ChatResult, PolicyBackend, TrainResult } from '../../policy/types.js';
import { sleep } from '../../core/sleep.js';

export type ScriptReply = string | { text: string; delayMs?: number } | { error: string };
export type Script = (messages: ChatMessage[], req: ChatRequest, callIndex: number) => ScriptReply;

function wordId(w: string): number {
  let h = 2166136261;
  for (let i = 0; i < w.length; i++) h = Math.imul(h ^ w.charCodeAt(i), 16777619) >>> 0;
  return h % 50_000;
}

function words(text: string): string[] {
  return text.split(/\s+/).filter(Boolean);
}

export class ScriptedBackend implements PolicyBackend {
  readonly kind = 'scripted';
  /** Every request as received (for assertions about clamping and defaults). */
  readonly requests: ChatRequest[] = [];
  inFlight = 0;
  maxInFlight = 0;
  private calls = 0;
  private version: string;

  constructor(
    private readonly script: Script,
    opts: { version?: string } = {},
  ) {
    this.version = opts.version ?? 'scripted-v0';
  }

  async capabilities(): Promise<Capabilities> {
    return { update: 'none', tokenIds: true, logprobs: true, maxContext: 1 << 20, chatTemplate: 'client' };
  }

  currentVersion(): string {
    return this.version;
  }

  async endpoint(): Promise<{ baseUrl: string; model: string }> {
    throw new Error('the scripted backend has no HTTP endpoint; use chat()');
  }

  encodeChat(messages: ChatMessage[]): number[] {
    return messages.flatMap((m) => words(`<${m.role}> ${m.content}`).map(wordId));
  }

  async chat(req: ChatRequest): Promise<ChatResult> {
    this.requests.push(req);
    const index = this.calls++;
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      const reply = this.script(req.messages, req, index);
      if (typeof reply === 'object' && 'error' in reply) throw new Error(reply.error);
      const { text, delayMs } = typeof reply === 'string' ? { text: reply, delayMs: 0 } : reply;
      if (delayMs) await sleep(delayMs, req.signal);
      else await Promise.resolve(); // answer on a later tick, like any real backend
      const all = words(text);
      const max = req.params.max_tokens ?? Number.POSITIVE_INFINITY;
      const kept = all.slice(0, max);
      const promptTokenIds = this.encodeChat(req.messages);
      return {
        text: kept.length < all.length ? kept.join(' ') : text,
        finishReason: kept.length < all.length ? 'length' : 'stop',
        version: req.version ?? this.version,
        promptTokenIds,
        completionTokenIds: kept.map(wordId),
        logprobs: kept.map(() => -0.5),
        usage: { promptTokens: promptTokenIds.length, completionTokens: kept.length },
      };
    } finally {
      this.inFlight--;
    }
  }

  async train(): Promise<TrainResult> {
    throw new Error('the scripted backend cannot train');
  }

  async publish(version: string): Promise<void> {
    this.version = version;
  }

  async close(): Promise<void> {}
}
