/**
 * Retries of transient API errors for the proposer's clients. The SDKs' own retry loops are turned
 * off (maxRetries 0) so that every attempt, its error and its sleep end up in the session log, and so
 * that the longest sleep is ours to cap (tests cap it; the paper's 2400 s sessions need long waits).
 */
import { sleep } from '../../core/sleep.js';

/** What an SDK error (Anthropic or OpenAI; both extend the same shape) tells us. */
interface ErrorLike {
  status?: number;
  headers?: { get(name: string): string | null } | Record<string, string>;
  name?: string;
  message?: string;
}

export interface RetryPolicy {
  maxRetries: number;
  baseMs: number;
  maxMs: number;
}

export interface RetryNote {
  attempt: number;
  status?: number;
  error: string;
  sleepMs: number;
}

/** 408, 409 (lock timeouts), 429, 5xx (incl. Anthropic's 529 overloaded) and connection errors/timeouts. */
export function isTransient(e: unknown): boolean {
  const err = e as ErrorLike;
  if (err?.name === 'APIUserAbortError' || err?.name === 'AbortError') return false;
  if (typeof err?.status === 'number') return err.status === 408 || err.status === 409 || err.status === 429 || err.status >= 500;
  // No status: the request never got an answer (refused, reset, timed out).
  return (
    err?.name === 'APIConnectionError' ||
    err?.name === 'APIConnectionTimeoutError' ||
    /timed? ?out|ECONNRESET|ECONNREFUSED|socket hang up/i.test(err?.message ?? '')
  );
}

function header(e: unknown, name: string): string | undefined {
  const h = (e as ErrorLike)?.headers;
  if (!h) return undefined;
  if (typeof (h as { get?: unknown }).get === 'function') return (h as { get(n: string): string | null }).get(name) ?? undefined;
  const rec = h as Record<string, string>;
  return rec[name] ?? rec[name.toLowerCase()];
}

/** The server's requested wait in ms (`retry-after-ms`, or `retry-after` as seconds or an HTTP date), if any. */
export function retryAfterMs(e: unknown, now = Date.now()): number | undefined {
  const ms = Number(header(e, 'retry-after-ms'));
  if (Number.isFinite(ms) && ms >= 0 && header(e, 'retry-after-ms') !== undefined) return ms;
  const ra = header(e, 'retry-after');
  if (ra === undefined) return undefined;
  const secs = Number(ra);
  if (Number.isFinite(secs) && secs >= 0) return secs * 1000;
  const at = Date.parse(ra);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

/** Exponential backoff (base · 2^attempt, with up to 25% jitter), or Retry-After when the server sent one; capped at maxMs. */
export function backoffMs(attempt: number, policy: RetryPolicy, e: unknown, jitter: number = Math.random()): number {
  const asked = retryAfterMs(e);
  const wait = asked ?? policy.baseMs * 2 ** attempt * (1 + 0.25 * jitter);
  return Math.min(policy.maxMs, Math.round(wait));
}

export function describeError(e: unknown): string {
  const err = e as ErrorLike;
  return `${typeof err?.status === 'number' ? `HTTP ${err.status}: ` : ''}${err?.message ?? String(e)}`;
}

/** Runs `fn`, retrying transient errors; `onRetry` hears of every failed attempt before its sleep. */
export async function withRetry<T>(fn: () => Promise<T>, policy: RetryPolicy, onRetry: (n: RetryNote) => void, signal?: AbortSignal): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      if (attempt >= policy.maxRetries || !isTransient(e) || signal?.aborted) throw e;
      const sleepMs = backoffMs(attempt, policy, e);
      onRetry({
        attempt: attempt + 1,
        ...(typeof (e as ErrorLike)?.status === 'number' ? { status: (e as ErrorLike).status } : {}),
        error: describeError(e),
        sleepMs,
      });
      await sleep(sleepMs, signal);
    }
  }
}
