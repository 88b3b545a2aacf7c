/**
 * The `tinker` PolicyBackend: training and sampling over the Tinker protocol (hosted Tinker,
 * SkyRL's self-hosted server, or `whale serve --backend embedded`).
 *
 * Versions: `base:<model>` for the untrained base, then the `tinker://…/sampler_weights/…` path each
 * `train` call saves. Training runs on one server-side training model whose weights are the version
 * it last saved (`trainedAt`); training from any other version needs a server that creates a model
 * from a sampler path (the embedded one does; hosted Tinker and SkyRL load training checkpoints
 * instead, which this client does not do yet) and is refused otherwise, before anything is sent.
 *
 * The loss: each minibatch (whole trajectories, minibatchPlan) is one forward_backward of
 * cross-entropy whose per-token weights are the embedded trainer's (rsftTokenWeights: 1/N_tokens of
 * the minibatch for 'token-mean', 1/(|I(τ)|·M) for 'sequence-mean') on model-generated completion
 * tokens and 0 elsewhere, so the server's Σ w·nll is the same RSFT objective, then one optim_step
 * with the configured Adam settings. Keys derived from (model, parent version, examples, settings, step)
 * make every request idempotent: a retried or replayed step is not applied twice.
 */
import { createHash } from 'node:crypto';
import type { Capabilities, ChatMessage, ChatRequest, ChatResult, PolicyBackend, RsftLoss, TrainExample, TrainHyper, TrainResult } from '../types.js';
import { DEFAULT_ADAM, minibatchPlan, rsftTokenWeights } from '../embedded/trainer.js';
import { BackendHttpError, type HttpOptions } from '../remote/http.js';
import { loadChatTokenizer, type ChatTokenizer } from './chatTokenizer.js';
import { TinkerClient } from './client.js';
import { parseSamplerPath, type Datum } from './protocol.js';

export interface TinkerBackendOptions extends Omit<HttpOptions, 'baseUrl'> {
  baseUrl: string;
  baseModel: string;
  /** 'embedded' or a path to a tokenizer.json. */
  tokenizer: string;
  loraRank: number;
  /** The version to continue from (a resumed run). */
  initialVersion?: string;
  futureTimeoutMs?: number;
  /** Context length for capabilities (default 4096; the embedded model's is smaller and the server says so by refusing). */
  maxContext?: number;
  /** Completion tokens when a call gives no max_tokens (the protocol requires one). */
  defaultMaxTokens?: number;
}

export class TinkerBackend implements PolicyBackend {
  readonly kind = 'tinker';
  private current: string;
  private trainedAt: string;
  private modelId: string;
  private trainQueue: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly client: TinkerClient,
    readonly tokenizer: ChatTokenizer,
    private readonly o: TinkerBackendOptions,
    private sessionId: string,
    private readonly update: 'full' | 'lora',
    private readonly resumable: boolean,
    start: { current: string; trainedAt: string; modelId: string },
  ) {
    this.current = start.current;
    this.trainedAt = start.trainedAt;
    this.modelId = start.modelId;
  }

  static async open(o: TinkerBackendOptions): Promise<TinkerBackend> {
    const client = new TinkerClient({ ...o, baseUrl: o.baseUrl.replace(/\/+$/, '') });
    const tokenizer = await loadChatTokenizer(o.tokenizer);
    const caps = await client.capabilities().catch(() => undefined);
    const resumable = caps?.whale?.resume_from_sampler_path === true;
    const base = baseVersion(o.baseModel);
    const current = o.initialVersion ?? base;
    const sessionId = await client.createSession();
    const trainFrom = current !== base && resumable ? current : o.baseModel;
    const modelId = await client.createModel(sessionId, trainFrom, o.loraRank);
    const info = await client.getInfo(modelId);
    const update = info.model_data.lora_config && info.model_data.lora_config.rank > 0 ? 'lora' : 'full';
    return new TinkerBackend(client, tokenizer, o, sessionId, update, resumable, { current, trainedAt: trainFrom === o.baseModel ? base : current, modelId });
  }

  async capabilities(): Promise<Capabilities> {
    return { update: this.update, tokenIds: true, logprobs: true, maxContext: this.o.maxContext ?? 4096, chatTemplate: 'client' };
  }

  currentVersion(): string {
    return this.current;
  }

  async endpoint(): Promise<{ baseUrl: string; model: string }> {
    throw new Error('the tinker backend samples over the Tinker protocol, not an OpenAI endpoint; harnesses reach it through the gateway');
  }

  encodeChat(messages: ChatMessage[]): number[] {
    return this.tokenizer.encodeChat(messages, { addGenerationPrompt: true });
  }

  async chat(req: ChatRequest): Promise<ChatResult> {
    const version = req.version ?? this.current;
    const p = req.params ?? {};
    const promptTokenIds = this.encodeChat(req.messages);
    const out = await this.client.sample(sourceOf(version), promptTokenIds, {
      max_tokens: p.max_tokens ?? this.o.defaultMaxTokens ?? 256,
      temperature: p.temperature ?? 1,
      top_p: p.top_p ?? 1,
      top_k: -1,
      ...(p.stop?.length ? { stop: p.stop } : {}),
      ...(p.seed !== undefined ? { seed: p.seed } : {}),
    }, { signal: req.signal });
    const s = out.sequences?.[0];
    if (!s) throw new Error(`${this.o.baseUrl}: asample answered no sequences`);
    return {
      text: cutAtStop(this.tokenizer.decode(s.tokens), p.stop),
      finishReason: s.stop_reason === 'length' ? 'length' : 'stop',
      version,
      promptTokenIds,
      completionTokenIds: s.tokens,
      logprobs: s.logprobs,
      usage: { promptTokens: promptTokenIds.length, completionTokens: s.tokens.length },
    };
  }

  train(examples: TrainExample[], hyper: TrainHyper, opts: { signal?: AbortSignal; onStep?: (step: number, loss: number) => void } = {}): Promise<TrainResult> {
    const run = this.trainQueue.then(() => this.trainNow(examples, hyper, opts));
    this.trainQueue = run.catch(() => undefined);
    return run;
  }

  private async trainNow(examples: TrainExample[], hyper: TrainHyper, opts: { signal?: AbortSignal; onStep?: (step: number, loss: number) => void }): Promise<TrainResult> {
    try {
      return await this.trainOnce(examples, hyper, opts);
    } catch (e) {
      // A restarted server has forgotten our session and training model; when it can rebuild the
      // model from the last saved version, do so and run the whole call again (its partial steps
      // died with the old model, so nothing is applied twice).
      if (!(this.resumable && e instanceof BackendHttpError && e.status === 404 && /model|session/i.test(e.message))) throw e;
      this.sessionId = await this.client.createSession();
      const from = this.trainedAt.startsWith('base:') ? this.o.baseModel : this.trainedAt;
      this.modelId = await this.client.createModel(this.sessionId, from, this.o.loraRank);
      return this.trainOnce(examples, hyper, opts);
    }
  }

  private async trainOnce(examples: TrainExample[], hyper: TrainHyper, opts: { signal?: AbortSignal; onStep?: (step: number, loss: number) => void }): Promise<TrainResult> {
    const t0 = performance.now();
    const parent = this.current;
    if (parent !== this.trainedAt) await this.retarget(parent);
    const adam = {
      learning_rate: hyper.learningRate,
      beta1: hyper.adam?.beta1 ?? DEFAULT_ADAM.beta1,
      beta2: hyper.adam?.beta2 ?? DEFAULT_ADAM.beta2,
      eps: hyper.adam?.eps ?? DEFAULT_ADAM.eps,
      weight_decay: hyper.adam?.weightDecay ?? DEFAULT_ADAM.weightDecay,
    };
    const runKey = sha256(JSON.stringify({ model: this.modelId, parent, examples, hyper: { ...hyper, adam } })).slice(0, 32);
    const losses: number[] = [];
    let trainedTokens = 0;
    let step = 0;
    for (const [i, idx] of minibatchPlan(examples.length, hyper, examples.map((e) => e.group)).entries()) {
      if (opts.signal?.aborted) throw opts.signal.reason instanceof Error ? opts.signal.reason : new Error('training was aborted');
      const batch = idx.map((j) => examples[j]);
      const data = rsftData(batch, hyper.loss);
      if (data.length === 0) continue;
      const fb = await this.client.forwardBackward(this.modelId, data, `${runKey}-fb-${i}`, opts.signal);
      await this.client.optimStep(this.modelId, adam, `${runKey}-opt-${i}`, opts.signal);
      const loss = lossOf(fb, data);
      losses.push(loss);
      trainedTokens += batch.reduce((n, e) => n + e.lossMask.filter((m) => m).length, 0);
      step++;
      opts.onStep?.(step, loss);
    }
    const version = await this.client.saveWeightsForSampler(this.modelId, `whale-${runKey.slice(0, 16)}`, `${runKey}-save`, opts.signal);
    this.trainedAt = version;
    return { version, parentVersion: parent, optimizerSteps: step, losses, trainedTokens, wallMs: performance.now() - t0 };
  }

  /** Points the training model at `version`: a new server-side model created from that sampler path. */
  private async retarget(version: string): Promise<void> {
    if (!this.resumable || !parseSamplerPath(version)) {
      throw new Error(
        `the tinker training model at ${this.o.baseUrl} holds ${this.trainedAt}, not ${version}; this server cannot start training from a sampler path, so training continues only from the version it last saved`,
      );
    }
    this.modelId = await this.client.createModel(this.sessionId, version, this.o.loraRank);
    this.trainedAt = version;
  }

  async publish(version: string): Promise<void> {
    if (version !== baseVersion(this.o.baseModel) && !parseSamplerPath(version)) throw new Error(`'${version}' is not a version of the tinker backend (base:<model> or a tinker:// sampler path)`);
    this.current = version;
  }

  async close(): Promise<void> {}
}

export function baseVersion(baseModel: string): string {
  return `base:${baseModel}`;
}

function sourceOf(version: string): { modelPath: string } | { baseModel: string } {
  return version.startsWith('base:') ? { baseModel: version.slice(5) } : { modelPath: version };
}

/**
 * RSFT examples of one minibatch → Tinker data: input = prompt + completion without its last token,
 * targets = the next tokens, weight rsftTokenWeights(…, loss) where the target is a model-generated
 * completion token (1/N_tokens of the minibatch for the default 'token-mean'), 0 elsewhere.
 */
export function rsftData(examples: readonly TrainExample[], loss: RsftLoss = 'token-mean'): Datum[] {
  const trained = examples.map((e) => e.lossMask.filter((m) => m).length);
  const w = rsftTokenWeights(trained, examples.map((e) => e.group), loss);
  const out: Datum[] = [];
  examples.forEach((e, i) => {
    if (trained[i] === 0) return;
    if (e.lossMask.length !== e.completionTokenIds.length) throw new Error(`training example ${i}: lossMask has ${e.lossMask.length} entries for ${e.completionTokenIds.length} completion tokens`);
    const full = [...e.promptTokenIds, ...e.completionTokenIds];
    const P = e.promptTokenIds.length;
    const weights = new Array<number>(full.length - 1).fill(0);
    e.lossMask.forEach((m, j) => {
      if (m) weights[P + j - 1] = w[i];
    });
    out.push({
      model_input: { chunks: [{ type: 'encoded_text', tokens: full.slice(0, -1) }] },
      loss_fn_inputs: { target_tokens: { data: full.slice(1), dtype: 'int64' }, weights: { data: weights, dtype: 'float32' } },
    });
  });
  return out;
}

/** The minibatch loss: the server's `loss:sum`, or −Σ w·logprob from the per-token outputs. */
function lossOf(fb: { metrics?: Record<string, number>; loss_fn_outputs?: { logprobs?: { data?: number[] } }[] }, data: Datum[]): number {
  const sum = fb.metrics?.['loss:sum'];
  if (typeof sum === 'number') return sum;
  let loss = 0;
  fb.loss_fn_outputs?.forEach((o, i) => o.logprobs?.data?.forEach((lp, t) => (loss -= lp * (data[i].loss_fn_inputs.weights?.data[t] ?? 0))));
  return loss;
}

function cutAtStop(text: string, stop: string[] | undefined): string {
  let end = text.length;
  for (const s of stop ?? []) {
    const at = text.indexOf(s);
    if (s && at >= 0 && at < end) end = at;
  }
  return text.slice(0, end);
}

function sha256(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}
