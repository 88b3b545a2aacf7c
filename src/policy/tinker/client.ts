/**
 * A TypeScript client of the Tinker protocol (protocol.ts): sessions, training models,
 * forward_backward / optim_step / save_weights_for_sampler, sampling, and futures resolved by
 * polling `retrieve_future` until a deadline. Every call goes through JsonHttp (timeouts, retries
 * with backoff, an outage window), and every POST carries an idempotency key — stable across the
 * retries of one logical call, and chosen by the caller for training steps so that a repeated step
 * (even after a client restart) is recognised by a server that dedups.
 */
import { randomUUID } from 'node:crypto';
import * as zlib from 'node:zlib';
import { BackendHttpError, JsonHttp, type HttpOptions } from '../remote/http.js';
import { decodeForwardBackwardOutput, decodeSampleResponse, encodeForwardBackwardRequest } from './proto.js';
import { API, type AdamParams, type Datum, type ForwardBackwardOutput, type FutureResponse, type SampleOutput, type SamplingParams } from './protocol.js';

/**
 * How forward_backward and its results travel. `json`: the dialect of tinker SDK <= 0.24 (SkyRL
 * 0.3.0). `protobuf`: what SDK >= 0.25 sends (SkyRL >= 0.4 and hosted Tinker refuse a JSON
 * forward_backward with 415). `auto` (default): protobuf when the server's `client/config` answers
 * the 0.25+ flags (`proto_compress_fwdbwd`), else JSON, switching to protobuf on a 415; results are
 * asked for as protobuf (`Accept`, as the SDK asks) and read as whichever the server answers.
 */
export type TinkerWire = 'auto' | 'json' | 'protobuf';

export interface TinkerClientOptions extends HttpOptions {
  /** How long to wait for one future before giving up (default 30 min: a training step on a big model is slow). */
  futureTimeoutMs?: number;
  /** The forward_backward encoding (default `auto`). */
  wire?: TinkerWire;
}

const PROTOBUF = 'application/x-protobuf';
/** Node >= 22.15 has zstd; on older Node a body the server would like compressed goes uncompressed (Content-Encoding says which). */
const zstdCompress = (zlib as { zstdCompressSync?: (b: Uint8Array) => Buffer }).zstdCompressSync;

export interface TrainCallOptions {
  /** The idempotency key (stable across retries and restarts, for a server that dedups by it). */
  key?: string;
  signal?: AbortSignal;
  /**
   * Send the request once, never again: for a server that ignores idempotency keys (SkyRL), a
   * second POST of a forward_backward or optim_step whose reply was lost would be applied twice.
   * (A refused connection is still retried: that request never arrived.)
   */
  noRetry?: boolean;
}

export class TinkerClient {
  readonly http: JsonHttp;
  private readonly futureTimeoutMs: number;
  private readonly wire: TinkerWire;
  /** The forward_backward encoding this server takes, once known (`auto`: asked on first use). */
  private fwdBwd?: Promise<{ wire: 'json' | 'protobuf'; compress: boolean }>;

  constructor(o: TinkerClientOptions) {
    this.http = new JsonHttp(o);
    this.futureTimeoutMs = o.futureTimeoutMs ?? 30 * 60_000;
    this.wire = o.wire ?? 'auto';
    if (this.wire !== 'auto') this.fwdBwd = Promise.resolve({ wire: this.wire, compress: false });
  }

  /** The encoding forward_backward uses against this server (`auto`: asked of `client/config` once). */
  async forwardBackwardWire(): Promise<'json' | 'protobuf'> {
    return (await this.fwdBwdConfig()).wire;
  }

  private fwdBwdConfig(): Promise<{ wire: 'json' | 'protobuf'; compress: boolean }> {
    this.fwdBwd ??= this.http.post(`${API}/client/config`, { sdk_version: 'whale-ts' }, { retries: 2 }).then(
      (c) => {
        const flags = (c ?? {}) as { proto_compress_fwdbwd?: unknown };
        return typeof flags.proto_compress_fwdbwd === 'boolean'
          ? { wire: 'protobuf' as const, compress: flags.proto_compress_fwdbwd }
          : { wire: 'json' as const, compress: false };
      },
      (e: unknown) => {
        if (e instanceof BackendHttpError && e.status === 404) return { wire: 'json' as const, compress: false };
        this.fwdBwd = undefined; // ask again next time: the server may be down
        throw e;
      },
    );
    return this.fwdBwd;
  }

  async capabilities(): Promise<{ supported_models: { model_name: string }[]; whale?: { update?: string; resume_from_sampler_path?: boolean } }> {
    return (await this.http.get(`${API}/get_server_capabilities`)) as never;
  }

  async createSession(key?: string): Promise<string> {
    const r = (await this.http.post(`${API}/create_session`, { tags: ['whale'], sdk_version: 'whale-ts' }, { idempotencyKey: key })) as { session_id: string };
    return r.session_id;
  }

  async createModel(sessionId: string, baseModel: string, loraRank: number, key?: string, loraSeed?: number): Promise<string> {
    const lora = { rank: loraRank, ...(loraSeed !== undefined ? { seed: loraSeed } : {}) };
    const r = (await this.http.post(`${API}/create_model`, { session_id: sessionId, base_model: baseModel, lora_config: lora }, { idempotencyKey: key })) as {
      model_id: string;
      request_id?: string;
    };
    if (r.request_id !== undefined) await this.retrieve(r.request_id);
    return r.model_id;
  }

  /** Frees a training model and its LoRA slot (SkyRL answers a future; older servers answer at once). */
  async unloadModel(modelId: string): Promise<void> {
    const r = (await this.http.post(`${API}/unload_model`, { model_id: modelId }, { retries: 1, outageMs: 0 })) as { request_id?: string };
    if (r?.request_id !== undefined) await this.retrieve(r.request_id);
  }

  /** Keeps a session (and the models it holds) from being expired by a server that expires idle sessions (SkyRL: 300 s). */
  async heartbeat(sessionId: string): Promise<void> {
    await this.http.post(`${API}/session_heartbeat`, { session_id: sessionId }, { retries: 0, outageMs: 0, timeoutMs: 10_000 });
  }

  /** Saves weights and optimizer state; answers the `tinker://<model>/weights/<name>` path that `loadWeights` takes. */
  async saveWeights(modelId: string, name: string, opts: TrainCallOptions = {}): Promise<string> {
    const r = (await this.submit(`${API}/save_weights`, { model_id: modelId, path: name }, opts)) as { path?: string | null };
    if (!r.path) throw new Error(`save_weights for ${modelId} answered no path`);
    return r.path;
  }

  async loadWeights(modelId: string, weightsPath: string, opts: TrainCallOptions = {}): Promise<void> {
    await this.submit(`${API}/load_weights`, { model_id: modelId, path: weightsPath }, opts);
  }

  async getInfo(modelId: string): Promise<{ model_id: string; status: string; model_data: { base_model: string; lora_config: { rank: number } | null } }> {
    return (await this.http.post(`${API}/get_info`, { model_id: modelId })) as never;
  }

  async forwardBackward(modelId: string, data: Datum[], opts: TrainCallOptions): Promise<ForwardBackwardOutput> {
    const body = { model_id: modelId, forward_backward_input: { data, loss_fn: 'cross_entropy' } };
    const config = await this.fwdBwdConfig();
    if (config.wire === 'json') {
      try {
        return (await this.submit(`${API}/forward_backward`, body, opts, decodeForwardBackwardOutput)) as ForwardBackwardOutput;
      } catch (e) {
        // 415: the server wants protobuf (SkyRL >= 0.4) and did not take the request, so resending it applies it once.
        if (!(this.wire === 'auto' && e instanceof BackendHttpError && e.status === 415)) throw e;
        this.fwdBwd = Promise.resolve({ wire: 'protobuf', compress: false });
      }
    }
    let bytes: Uint8Array = encodeForwardBackwardRequest(body);
    const compressed = config.compress && zstdCompress !== undefined;
    if (compressed) bytes = new Uint8Array(zstdCompress(bytes));
    const headers = { contentType: PROTOBUF, ...(compressed ? { contentEncoding: 'zstd' } : {}) };
    return (await this.submit(`${API}/forward_backward`, bytes, { ...opts, ...headers }, decodeForwardBackwardOutput)) as ForwardBackwardOutput;
  }

  async optimStep(modelId: string, adam: AdamParams, opts: TrainCallOptions): Promise<{ metrics?: Record<string, number> | null }> {
    return (await this.submit(`${API}/optim_step`, { model_id: modelId, adam_params: adam }, opts)) as { metrics?: Record<string, number> | null };
  }

  /** Saves the training weights for sampling; answers the `tinker://…` path to sample them by. */
  async saveWeightsForSampler(modelId: string, name: string | undefined, opts: TrainCallOptions = {}): Promise<string> {
    const r = (await this.submit(`${API}/save_weights_for_sampler`, { model_id: modelId, path: name ?? null }, opts)) as { path?: string | null };
    if (!r.path) throw new Error(`save_weights_for_sampler for ${modelId} answered no path`);
    return r.path;
  }

  async sample(
    source: { modelPath: string } | { baseModel: string },
    promptTokens: number[],
    params: SamplingParams,
    opts: { numSamples?: number; signal?: AbortSignal } = {},
  ): Promise<SampleOutput> {
    const body = {
      prompt: { chunks: [{ type: 'encoded_text', tokens: promptTokens }] },
      num_samples: opts.numSamples ?? 1,
      sampling_params: params,
      ...('modelPath' in source ? { model_path: source.modelPath } : { base_model: source.baseModel }),
    };
    return (await this.submit(`${API}/asample`, body, { signal: opts.signal }, decodeSampleResponse)) as SampleOutput;
  }

  /**
   * POST a request that answers a future, then wait for its result. A future the server no longer
   * knows (it restarted while we waited) means the request died with it: send it again, under the
   * same key (a training request then meets the restart's own 404 for its model, which the backend
   * handles).
   */
  private async submit(
    path: string,
    body: unknown,
    opts: TrainCallOptions & { contentType?: string; contentEncoding?: string },
    decode?: (b: Uint8Array) => unknown,
  ): Promise<unknown> {
    const idempotencyKey = opts.key ?? randomUUID();
    const signal = opts.signal;
    const encoding = { contentType: opts.contentType, contentEncoding: opts.contentEncoding };
    for (let attempt = 1; ; attempt++) {
      const f = (await this.http.post(path, body, {
        idempotencyKey,
        signal,
        ...encoding,
        ...(opts.noRetry ? { retries: 0, onlyUnsent: true } : {}),
      })) as FutureResponse;
      if (!f || typeof f.request_id !== 'string')
        throw new Error(`${this.http.baseUrl}${path}: expected {request_id, future_id}, got ${JSON.stringify(f)?.slice(0, 200)}`);
      try {
        return await this.retrieve(f.request_id, signal, decode);
      } catch (e) {
        if (opts.noRetry || !(e instanceof BackendHttpError && e.status === 404 && /future/i.test(e.message)) || attempt >= 3) throw e;
      }
    }
  }

  /**
   * Polls retrieve_future: a 408 means "not ready yet" (the server waited as long as it will).
   * With `decode` (a sample or forward_backward result) the result is asked for as protobuf, as the
   * SDK asks (unless the wire is `json`), and a protobuf answer is decoded by it.
   */
  async retrieve(requestId: string, signal?: AbortSignal, decode?: (b: Uint8Array) => unknown): Promise<unknown> {
    const deadline = Date.now() + this.futureTimeoutMs;
    const accept = decode && this.wire !== 'json' ? PROTOBUF : undefined;
    let serverErrors = 0;
    for (;;) {
      try {
        const r = await this.http.post(
          `${API}/retrieve_future`,
          { request_id: requestId },
          { retries: 0, signal, idempotencyKey: `retrieve-${requestId}`, accept },
        );
        if (!(r instanceof Uint8Array)) return r;
        if (!decode) throw new Error(`${this.http.baseUrl}: future ${requestId} answered a protobuf body where JSON was expected`);
        try {
          return decode(r);
        } catch (e) {
          throw new Error(`${this.http.baseUrl}: the protobuf result of future ${requestId} cannot be read: ${(e as Error).message}`);
        }
      } catch (e) {
        if (!(e instanceof BackendHttpError)) throw e;
        // 5xx while polling: the answer may still come (the request itself was accepted).
        if (e.status >= 500 && ++serverErrors <= 4) await new Promise((r) => setTimeout(r, 250 * 2 ** serverErrors));
        else if (e.status !== 408) throw e;
        if (Date.now() > deadline)
          throw new Error(`future ${requestId} at ${this.http.baseUrl} is not ready after ${Math.round(this.futureTimeoutMs / 1000)} s`);
      }
    }
  }
}
