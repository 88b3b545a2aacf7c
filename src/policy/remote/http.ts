/**
 * JSON over HTTP for remote backends: a deadline on every call, retries with exponential backoff
 * for what a retry can fix (connection refused or reset, 408, 425, 429, 5xx), and an outage window:
 * while the server cannot be reached at all, calls keep retrying for up to `outageMs` — a backend
 * that disappears mid-phase pauses the phase instead of failing the rollouts already paid for.
 *
 * Credentials come from the environment (the extension passes SecretStorage values that way). The
 * key is sent as a bearer token and never appears in an error message, a log line or the run store.
 */
import { randomUUID } from 'node:crypto';
import { WhaleError } from '../../core/errors.js';
import { abortReason, sleep } from '../../core/sleep.js';

export interface HttpOptions {
  baseUrl: string;
  /** Name of the environment variable holding the API key (never the key itself). */
  apiKeyEnv?: string;
  /** Deadline of one attempt (default 120 s). */
  timeoutMs?: number;
  /** Retries after the first attempt for retryable HTTP answers (default 4). */
  retries?: number;
  /** How long to keep trying while the server is unreachable (default 10 min). */
  outageMs?: number;
  /** First backoff delay; doubles up to 10 s (default 250 ms). */
  backoffMs?: number;
  /** Told each time a call waits to retry (e.g. "backend unreachable, retrying in 2 s"). */
  onRetry?: (info: { url: string; attempt: number; delayMs: number; reason: string }) => void;
}

export class BackendHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly url: string,
    readonly body?: unknown,
  ) {
    super(message);
    this.name = 'BackendHttpError';
  }
}

/** The server could not be reached for longer than the outage window. */
export class BackendUnreachableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackendUnreachableError';
  }
}

const RETRYABLE = new Set([408, 425, 429, 500, 502, 503, 504]);

export class JsonHttp {
  readonly baseUrl: string;
  private readonly o: Required<Omit<HttpOptions, 'apiKeyEnv' | 'onRetry'>> & Pick<HttpOptions, 'apiKeyEnv' | 'onRetry'>;

  constructor(o: HttpOptions) {
    this.baseUrl = o.baseUrl.replace(/\/+$/, '');
    this.o = { timeoutMs: 120_000, retries: 4, outageMs: 600_000, backoffMs: 250, ...o, baseUrl: this.baseUrl };
    if (o.apiKeyEnv !== undefined && !process.env[o.apiKeyEnv]) {
      throw new WhaleError(`the API key variable ${o.apiKeyEnv} is not set in the environment (set it, or remove apiKeyEnv from the backend config)`);
    }
  }

  get(path: string, opts: CallOptions = {}): Promise<unknown> {
    return this.call('GET', path, undefined, opts);
  }

  post(path: string, body: unknown, opts: CallOptions = {}): Promise<unknown> {
    return this.call('POST', path, body, opts);
  }

  /**
   * One logical call. A POST carries an `Idempotency-Key` (the caller's, or a fresh one shared by
   * all attempts), so a server that dedups by key applies a retried request once. A `Uint8Array`
   * body is sent as is (with `opts.contentType`); a successful `application/x-protobuf` reply is
   * answered as its bytes (a `Uint8Array`), for the caller to decode (tinker/proto.ts).
   */
  async call(method: string, path: string, body: unknown, opts: CallOptions = {}): Promise<unknown> {
    const url = `${this.baseUrl}${path}`;
    const binary = body instanceof Uint8Array;
    const headers: Record<string, string> = { accept: opts.accept ?? 'application/json' };
    if (body !== undefined) headers['content-type'] = binary ? (opts.contentType ?? 'application/octet-stream') : 'application/json';
    if (binary && opts.contentEncoding) headers['content-encoding'] = opts.contentEncoding;
    if (this.o.apiKeyEnv) headers.authorization = `Bearer ${process.env[this.o.apiKeyEnv] ?? ''}`;
    if (method !== 'GET') headers['idempotency-key'] = opts.idempotencyKey ?? randomUUID();
    const timeoutMs = opts.timeoutMs ?? this.o.timeoutMs;
    const retries = opts.retries ?? this.o.retries;
    const outageStart = { at: 0 };
    let delay = this.o.backoffMs;
    for (let attempt = 1; ; attempt++) {
      if (opts.signal?.aborted) throw abortReason(opts.signal);
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
      let reason: string;
      let unreachable = false;
      try {
        const res = await fetch(url, { method, headers, body: body === undefined ? undefined : binary ? body : JSON.stringify(body), signal });
        if (res.ok && /application\/x-protobuf/i.test(res.headers.get('content-type') ?? '')) return new Uint8Array(await res.arrayBuffer());
        const text = await res.text();
        const json = parseJson(text);
        if (res.ok) return json;
        const message = errorMessage(json, text);
        if (!RETRYABLE.has(res.status) || attempt > retries)
          throw new BackendHttpError(res.status, `${method} ${url}: HTTP ${res.status}: ${message}`, url, json);
        reason = `HTTP ${res.status}: ${message}`;
      } catch (e) {
        if (e instanceof BackendHttpError) throw e;
        if (opts.signal?.aborted) throw abortReason(opts.signal);
        if (timeout.aborted) {
          if (attempt > retries) throw new BackendHttpError(408, `${method} ${url}: no reply within ${timeoutMs} ms (${attempt} attempts)`, url);
          reason = `no reply within ${timeoutMs} ms`;
        } else {
          // fetch failed before an answer: the server is down, restarting or unreachable.
          unreachable = true;
          outageStart.at ||= Date.now();
          const cause = (e as { cause?: { code?: string; message?: string } }).cause;
          reason = `unreachable (${cause?.code ?? cause?.message ?? (e as Error).message})`;
          if (opts.onlyUnsent && cause?.code !== 'ECONNREFUSED')
            throw new BackendHttpError(
              502,
              `${method} ${url}: the connection failed after the request may have been sent (${reason}); not retried, since the server does not deduplicate it`,
              url,
            );
          if (Date.now() - outageStart.at > (opts.outageMs ?? this.o.outageMs)) {
            throw new BackendUnreachableError(
              `${method} ${url}: the backend has been unreachable for ${Math.round((Date.now() - outageStart.at) / 1000)} s (${reason}); nothing already paid for is lost — run again when it is back`,
            );
          }
        }
      }
      if (!unreachable) outageStart.at = 0;
      this.o.onRetry?.({ url, attempt, delayMs: delay, reason });
      await sleep(delay, opts.signal);
      delay = Math.min(delay * 2, 10_000);
    }
  }
}

export interface CallOptions {
  idempotencyKey?: string;
  timeoutMs?: number;
  retries?: number;
  signal?: AbortSignal;
  /** Retry only a request that surely never arrived (connection refused): for a non-idempotent call to a server that does not dedup. */
  onlyUnsent?: boolean;
  /** This call's outage window (default: the client's). */
  outageMs?: number;
  /** The `Accept` header (default `application/json`). */
  accept?: string;
  /** The `Content-Type` of a `Uint8Array` body (default `application/octet-stream`). */
  contentType?: string;
  /** The `Content-Encoding` of a `Uint8Array` body (e.g. `zstd`). */
  contentEncoding?: string;
}

function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The server's own words: OpenAI `{error: {message}}`, FastAPI `{detail}`, or the raw text. */
function errorMessage(json: unknown, text: string): string {
  const j = json as { error?: { message?: string } | string; detail?: unknown; message?: string } | undefined;
  if (j && typeof j.error === 'object' && j.error?.message) return j.error.message;
  if (j && typeof j.error === 'string') return j.error;
  if (j && j.detail !== undefined) return typeof j.detail === 'string' ? j.detail : JSON.stringify(j.detail);
  if (j && typeof j.message === 'string') return j.message;
  return text.slice(0, 300) || '(empty body)';
}
