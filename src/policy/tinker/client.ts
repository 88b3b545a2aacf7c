/**
 * A TypeScript client of the Tinker protocol (protocol.ts): sessions, training models,
 * forward_backward / optim_step / save_weights_for_sampler, sampling, and futures resolved by
 * polling `retrieve_future` until a deadline. Every call goes through JsonHttp (timeouts, retries
 * with backoff, an outage window), and every POST carries an idempotency key — stable across the
 * retries of one logical call, and chosen by the caller for training steps so that a repeated step
 * (even after a client restart) is recognised by a server that dedups.
 */
import { randomUUID } from 'node:crypto';
import { BackendHttpError, JsonHttp, type HttpOptions } from '../remote/http.js';
import { API, type AdamParams, type Datum, type ForwardBackwardOutput, type FutureResponse, type SampleOutput, type SamplingParams } from './protocol.js';

export interface TinkerClientOptions extends HttpOptions {
  /** How long to wait for one future before giving up (default 30 min: a training step on a big model is slow). */
  futureTimeoutMs?: number;
}

export class TinkerClient {
  readonly http: JsonHttp;
  private readonly futureTimeoutMs: number;

  constructor(o: TinkerClientOptions) {
    this.http = new JsonHttp(o);
    this.futureTimeoutMs = o.futureTimeoutMs ?? 30 * 60_000;
  }

  async capabilities(): Promise<{ supported_models: { model_name: string }[]; whale?: { update?: string; resume_from_sampler_path?: boolean } }> {
    return (await this.http.get(`${API}/get_server_capabilities`)) as never;
  }

  async createSession(key?: string): Promise<string> {
    const r = (await this.http.post(`${API}/create_session`, { tags: ['whale'], sdk_version: 'whale-ts' }, { idempotencyKey: key })) as { session_id: string };
    return r.session_id;
  }

  async createModel(sessionId: string, baseModel: string, loraRank: number, key?: string): Promise<string> {
    const r = (await this.http.post(`${API}/create_model`, { session_id: sessionId, base_model: baseModel, lora_config: { rank: loraRank } }, { idempotencyKey: key })) as { model_id: string; request_id?: string };
    if (r.request_id !== undefined) await this.retrieve(r.request_id);
    return r.model_id;
  }

  async getInfo(modelId: string): Promise<{ model_id: string; status: string; model_data: { base_model: string; lora_config: { rank: number } | null } }> {
    return (await this.http.post(`${API}/get_info`, { model_id: modelId })) as never;
  }

  async forwardBackward(modelId: string, data: Datum[], key: string, signal?: AbortSignal): Promise<ForwardBackwardOutput> {
    return (await this.submit(`${API}/forward_backward`, { model_id: modelId, forward_backward_input: { data, loss_fn: 'cross_entropy' } }, key, signal)) as ForwardBackwardOutput;
  }

  async optimStep(modelId: string, adam: AdamParams, key: string, signal?: AbortSignal): Promise<{ metrics?: Record<string, number> | null }> {
    return (await this.submit(`${API}/optim_step`, { model_id: modelId, adam_params: adam }, key, signal)) as { metrics?: Record<string, number> | null };
  }

  /** Saves the training weights for sampling; answers the `tinker://…` path to sample them by. */
  async saveWeightsForSampler(modelId: string, name: string, key: string, signal?: AbortSignal): Promise<string> {
    const r = (await this.submit(`${API}/save_weights_for_sampler`, { model_id: modelId, path: name }, key, signal)) as { path?: string | null };
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
    return (await this.submit(`${API}/asample`, body, undefined, opts.signal)) as SampleOutput;
  }

  /**
   * POST a request that answers a future, then wait for its result. A future the server no longer
   * knows (it restarted while we waited) means the request died with it: send it again, under the
   * same key (a training request then meets the restart's own 404 for its model, which the backend
   * handles).
   */
  private async submit(path: string, body: unknown, key: string | undefined, signal?: AbortSignal): Promise<unknown> {
    const idempotencyKey = key ?? randomUUID();
    for (let attempt = 1; ; attempt++) {
      const f = (await this.http.post(path, body, { idempotencyKey, signal })) as FutureResponse;
      if (!f || typeof f.request_id !== 'string') throw new Error(`${this.http.baseUrl}${path}: expected {request_id, future_id}, got ${JSON.stringify(f)?.slice(0, 200)}`);
      try {
        return await this.retrieve(f.request_id, signal);
      } catch (e) {
        if (!(e instanceof BackendHttpError && e.status === 404 && /future/i.test(e.message)) || attempt >= 3) throw e;
      }
    }
  }

  /** Polls retrieve_future: a 408 means "not ready yet" (the server waited as long as it will). */
  async retrieve(requestId: string, signal?: AbortSignal): Promise<unknown> {
    const deadline = Date.now() + this.futureTimeoutMs;
    let serverErrors = 0;
    for (;;) {
      try {
        return await this.http.post(`${API}/retrieve_future`, { request_id: requestId }, { retries: 0, signal, idempotencyKey: `retrieve-${requestId}` });
      } catch (e) {
        if (!(e instanceof BackendHttpError)) throw e;
        // 5xx while polling: the answer may still come (the request itself was accepted).
        if (e.status >= 500 && ++serverErrors <= 4) await new Promise((r) => setTimeout(r, 250 * 2 ** serverErrors));
        else if (e.status !== 408) throw e;
        if (Date.now() > deadline) throw new Error(`future ${requestId} at ${this.http.baseUrl} is not ready after ${Math.round(this.futureTimeoutMs / 1000)} s`);
      }
    }
  }
}
