/**
 * The `tinker` PolicyBackend: training and sampling over the Tinker protocol (hosted Tinker,
 * SkyRL's self-hosted server, or `whale serve --backend embedded`).
 *
 * Versions: `base:<model>` for the untrained base, then the `tinker://…` sampler path each `train`
 * call saves. The server-side training model is created only when needed (to train, or to sample
 * a version this process did not save), held by one heartbeating session, and unloaded on close;
 * the run store (record.ts) keeps it on record while it lives, so a process that died leaves
 * nothing the next one does not unload, and keeps every version's training checkpoint, so any
 * later process — after a restart of the server too — puts a version back with `load_weights`.
 *
 * Servers differ in two ways that matter, both detected: `whale serve` creates a model from a
 * sampler path and deduplicates requests by Idempotency-Key (its capabilities say `whale`);
 * SkyRL does neither, forgets its models when restarted, and loads an older sampler checkpoint
 * into the same adapter slot the model trains in. So against SkyRL a training call is a unit:
 * its requests are sent once each (never retried: a retried optim_step would be applied twice),
 * and if any fails the model is put back at the parent version from its checkpoint and the whole
 * call runs again; before training, the slot is reloaded when sampling may have overwritten it.
 *
 * The loss: each minibatch (whole trajectories, minibatchPlan) is one forward_backward of
 * cross-entropy whose per-token weights are the embedded trainer's (rsftTokenWeights: 1/N_tokens of
 * the minibatch for 'token-mean', 1/(|I(τ)|·M) for 'sequence-mean') on model-generated completion
 * tokens and 0 elsewhere, so the server's Σ w·nll is the same RSFT objective, then one optim_step
 * with the configured Adam settings.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Capabilities, ChatMessage, ChatRequest, ChatResult, PolicyBackend, RsftLoss, TrainExample, TrainHyper, TrainResult } from '../types.js';
import { DEFAULT_ADAM, minibatchPlan, rsftTokenWeights } from '../embedded/trainer.js';
import { BackendHttpError, type HttpOptions } from '../remote/http.js';
import { loadChatTokenizer } from './chatTokenizer.js';
import type { ChatTokenizer } from './chatTokenizerType.js';
import { TinkerClient, type TinkerWire } from './client.js';
import { parseSamplerPath, type Datum } from './protocol.js';
import { processAlive } from '../../core/processAlive.js';
import { TinkerRecord } from './record.js';

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
  /** The run store: versions' checkpoints and the live training model are recorded under it. */
  storeDir?: string;
  /** Who holds the training model (the run id; default: this process). */
  owner?: string;
  /** Seconds between session heartbeats (default 10, as the official SDK). */
  heartbeatS?: number;
  /** Seed of the LoRA initialisation (default: the server picks one). */
  loraSeed?: number;
  /** How forward_backward and its results travel (client.ts; default `auto`). */
  wire?: TinkerWire;
}

interface LiveModel {
  sessionId: string;
  modelId: string;
  /** The version whose weights the model's adapter holds now ('?' when unknown: a failed call). */
  holds: string;
}

const UNKNOWN = '?';
/** The seed the sampler gets: SkyRL's sampler takes int32, and one larger seed fails the whole batched request. */
export const toInt32Seed = (seed: number): number => ((Math.trunc(seed) % 2 ** 31) + 2 ** 31) % 2 ** 31;

export class TinkerBackend implements PolicyBackend {
  readonly kind = 'tinker';
  private current: string;
  private live: LiveModel | undefined;
  /** Versions → a sampler path of the live model that holds them (saved or re-saved by this process). */
  private readonly samplerPaths = new Map<string, string>();
  private queue: Promise<unknown> = Promise.resolve();
  private heartbeat: NodeJS.Timeout | undefined;
  private readonly record: TinkerRecord | undefined;
  private readonly owner: string;

  private constructor(
    readonly client: TinkerClient,
    readonly tokenizer: ChatTokenizer,
    private readonly o: TinkerBackendOptions,
    private readonly whale: { update?: string; resume_from_sampler_path?: boolean } | undefined,
    start: string,
  ) {
    this.current = start;
    this.record = o.storeDir ? new TinkerRecord(o.storeDir, client.http.baseUrl, o.baseModel) : undefined;
    this.owner = o.owner ?? `pid-${process.pid}`;
  }

  static async open(o: TinkerBackendOptions): Promise<TinkerBackend> {
    const client = new TinkerClient({ ...o, baseUrl: o.baseUrl.replace(/\/+$/, '') });
    const tokenizer = await loadChatTokenizer(o.tokenizer);
    const caps = await client.capabilities();
    const b = new TinkerBackend(client, tokenizer, o, caps.whale, o.initialVersion ?? baseVersion(o.baseModel));
    await b.unloadOrphans();
    return b;
  }

  /** whale serve: creates models from sampler paths and dedups by Idempotency-Key. */
  private get isWhale(): boolean {
    return this.whale?.resume_from_sampler_path === true;
  }

  async capabilities(): Promise<Capabilities> {
    const update = this.whale?.update === 'full' ? 'full' : 'lora';
    return { update, tokenIds: true, logprobs: true, maxContext: this.o.maxContext ?? 4096, chatTemplate: 'client' };
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
    const eot = this.tokenizer.endOfTurn;
    // SkyRL takes stop ids or stop strings, not both: the turn's end goes with whichever is sent.
    const stop = p.stop?.length ? [...p.stop, ...(eot?.texts ?? [])] : eot?.ids;
    const params = {
      max_tokens: p.max_tokens ?? this.o.defaultMaxTokens ?? 256,
      temperature: p.temperature ?? 1,
      top_p: p.top_p ?? 1,
      top_k: -1,
      ...(stop?.length ? { stop } : {}),
      ...(p.seed !== undefined ? { seed: toInt32Seed(p.seed) } : {}),
    };
    let out;
    for (let attempt = 1; ; attempt++) {
      const source = await this.samplerSource(version);
      try {
        out = await this.client.sample(source, promptTokenIds, params, { signal: req.signal });
        break;
      } catch (e) {
        if (attempt > 1 || !this.forgotten(e) || !('modelPath' in source)) throw e;
        this.forget(); // the server restarted: put the version back on a new model and sample again
      }
    }
    const s = out.sequences?.[0];
    if (!s) throw new Error(`${this.o.baseUrl}: asample answered no sequences`);
    // The turn ends at its end token, kept (it is what the model must learn to emit); anything a
    // server sampled past it is not part of the reply and never trained on.
    const end = eot ? s.tokens.findIndex((t) => eot.ids.includes(t)) : -1;
    const tokens = end >= 0 ? s.tokens.slice(0, end + 1) : s.tokens;
    const logprobs = end >= 0 ? s.logprobs.slice(0, end + 1) : s.logprobs;
    return {
      text: cutAtStop(this.tokenizer.decode(tokens), p.stop),
      finishReason: end >= 0 || s.stop_reason === 'stop' ? 'stop' : 'length',
      version,
      promptTokenIds,
      completionTokenIds: tokens,
      logprobs,
      usage: { promptTokens: promptTokenIds.length, completionTokens: tokens.length },
    };
  }

  /** What `asample` is pointed at for `version`; a version no live model holds is put back on ours first. */
  private async samplerSource(version: string): Promise<{ modelPath: string } | { baseModel: string }> {
    if (version.startsWith('base:')) return { baseModel: version.slice(5) };
    if (this.isWhale) return { modelPath: version }; // whale serve samples any saved version by its path
    const known = this.samplerPaths.get(version);
    if (known) {
      // SkyRL loads a sampler checkpoint into the slot the model trains in: unless it is what the
      // slot holds, the slot holds something else afterwards (reloaded before the next training).
      if (this.live && this.live.holds !== version) this.live.holds = UNKNOWN;
      return { modelPath: known };
    }
    return this.serial(async () => {
      const again = this.samplerPaths.get(version);
      if (again) return { modelPath: again };
      const m = await this.loadOnModel(version);
      const path = await this.client.saveWeightsForSampler(m.modelId, `${checkpointName(version)}-${randomBytes(3).toString('hex')}`);
      this.samplerPaths.set(version, path);
      return { modelPath: path };
    });
  }

  train(examples: TrainExample[], hyper: TrainHyper, opts: { signal?: AbortSignal; onStep?: (step: number, loss: number) => void } = {}): Promise<TrainResult> {
    return this.serial(() => this.trainNow(examples, hyper, opts));
  }

  private serial<T>(f: () => Promise<T>): Promise<T> {
    const run = this.queue.then(f);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async trainNow(
    examples: TrainExample[],
    hyper: TrainHyper,
    opts: { signal?: AbortSignal; onStep?: (step: number, loss: number) => void },
  ): Promise<TrainResult> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.trainOnce(examples, hyper, opts);
      } catch (e) {
        if (opts.signal?.aborted || attempt >= 3) throw e;
        if (this.forgotten(e)) this.forget();
        else if (this.isWhale || !(e instanceof BackendHttpError || e instanceof TypeError)) throw e;
        // Against a server that does not dedup, a failed call leaves the model in an unknown state
        // (a forward_backward or optim_step may or may not have been applied): the next attempt
        // puts it back at the parent version before sending anything.
        else if (this.live) this.live.holds = UNKNOWN;
        this.o.onRetry?.({
          url: this.o.baseUrl,
          attempt,
          delayMs: 0,
          reason: `training call failed (${(e as Error).message}); running it again from ${this.current}`,
        });
      }
    }
  }

  private async trainOnce(
    examples: TrainExample[],
    hyper: TrainHyper,
    opts: { signal?: AbortSignal; onStep?: (step: number, loss: number) => void },
  ): Promise<TrainResult> {
    const t0 = performance.now();
    const parent = this.current;
    const m = await this.loadOnModel(parent);
    const adam = {
      learning_rate: hyper.learningRate,
      beta1: hyper.adam?.beta1 ?? DEFAULT_ADAM.beta1,
      beta2: hyper.adam?.beta2 ?? DEFAULT_ADAM.beta2,
      eps: hyper.adam?.eps ?? DEFAULT_ADAM.eps,
      weight_decay: hyper.adam?.weightDecay ?? DEFAULT_ADAM.weightDecay,
    };
    const runKey = sha256(JSON.stringify({ model: m.modelId, parent, examples, hyper: { ...hyper, adam } })).slice(0, 32);
    const call = (key: string) => ({ key: `${runKey}-${key}`, signal: opts.signal, noRetry: !this.isWhale });
    const losses: number[] = [];
    let trainedTokens = 0;
    let step = 0;
    m.holds = UNKNOWN; // from the first request on, until the checkpoints are saved
    for (const [i, idx] of minibatchPlan(
      examples.length,
      hyper,
      examples.map((e) => e.group),
    ).entries()) {
      if (opts.signal?.aborted) throw opts.signal.reason instanceof Error ? opts.signal.reason : new Error('training was aborted');
      const batch = idx.map((j) => examples[j]);
      const data = rsftData(batch, hyper.loss);
      if (data.length === 0) continue;
      const fb = await this.client.forwardBackward(m.modelId, data, call(`fb-${i}`));
      await this.client.optimStep(m.modelId, adam, call(`opt-${i}`));
      const loss = lossOf(fb, data);
      losses.push(loss);
      trainedTokens += batch.reduce((n, e) => n + e.lossMask.filter((x) => x).length, 0);
      step++;
      opts.onStep?.(step, loss);
    }
    const name = `whale-${runKey.slice(0, 16)}`;
    const weights = this.isWhale ? undefined : await this.client.saveWeights(m.modelId, name, call('state'));
    // whale serve names a version by its content when no name is given (a path that survives anything).
    const version = await this.client.saveWeightsForSampler(m.modelId, this.isWhale ? undefined : name, call('save'));
    if (weights) this.record?.addVersion({ version, weights });
    m.holds = version;
    // SkyRL keeps "checkpoint X is loaded" across training, so a path sampled before this call
    // would now sample the new weights: older versions get a fresh checkpoint when next sampled.
    this.samplerPaths.clear();
    this.samplerPaths.set(version, version);
    return { version, parentVersion: parent, optimizerSteps: step, losses, trainedTokens, wallMs: performance.now() - t0 };
  }

  /** The live training model, holding `version`'s weights (and optimizer state): created and loaded as needed. */
  private async loadOnModel(version: string): Promise<LiveModel> {
    const base = version.startsWith('base:');
    if (this.live?.holds === version) return this.live;
    if (this.isWhale) {
      // whale serve builds a model from a sampler path; its models hold the version they were made from.
      if (!base && !parseSamplerPath(version))
        throw new Error(`'${version}' is not a version of the tinker backend (base:<model> or a tinker:// sampler path)`);
      await this.unloadLive();
      return this.createLive(base ? this.o.baseModel : version, version);
    }
    if (base) {
      // A fresh adapter is the base model (LoRA's B starts at zero) with a fresh optimizer.
      await this.unloadLive();
      return this.createLive(this.o.baseModel, version);
    }
    const rec = this.record?.version(version);
    if (!rec) {
      throw new Error(
        `${this.o.baseUrl} cannot put version ${version} back: no training checkpoint of it is recorded in ${this.record?.dir ?? 'the run store (no store given)'} (it was trained elsewhere, or by a WHALE before checkpoints were recorded)`,
      );
    }
    // load_weights only as a model's first request: SkyRL >= 0.4 (as the Tinker service) refuses it on a
    // model that has served anything ("LoadWeights is not permitted with seq_id N"), so a fresh model.
    await this.unloadLive();
    const m = await this.createLive(this.o.baseModel, UNKNOWN);
    await this.client.loadWeights(m.modelId, rec.weights);
    m.holds = version;
    return m;
  }

  private async createLive(from: string, holds: string): Promise<LiveModel> {
    const sessionId = await this.client.createSession();
    const modelId = await this.client.createModel(sessionId, from, this.o.loraRank, undefined, this.o.loraSeed);
    this.live = { sessionId, modelId, holds };
    this.record?.setModel({ owner: this.owner, sessionId, modelId, pid: process.pid, at: new Date().toISOString() });
    this.startHeartbeat();
    return this.live;
  }

  private startHeartbeat(): void {
    if (this.heartbeat) return;
    this.heartbeat = setInterval(
      () => {
        const s = this.live?.sessionId;
        if (s) this.client.heartbeat(s).catch(() => undefined); // a missed beat is retried by the next one
      },
      (this.o.heartbeatS ?? 10) * 1000,
    );
    this.heartbeat.unref();
  }

  /** The server no longer has our model (restarted, or expired it). */
  private forgotten(e: unknown): boolean {
    return e instanceof BackendHttpError && (e.status === 404 || e.status === 400) && /not loaded|model not found|session (\S+ )?not found/i.test(e.message);
  }

  private forget(): void {
    if (this.live) this.record?.dropModel(this.owner, this.live.modelId);
    this.live = undefined;
    this.samplerPaths.clear();
  }

  private async unloadLive(): Promise<void> {
    const m = this.live;
    if (!m) return;
    this.live = undefined;
    this.samplerPaths.clear();
    await this.client.unloadModel(m.modelId).catch(() => undefined); // already gone (restart): nothing to free
    this.record?.dropModel(this.owner, m.modelId);
  }

  /** Unloads the models that processes which died (crashed, killed) left on this server. */
  private async unloadOrphans(): Promise<void> {
    for (const r of this.record?.models() ?? []) {
      if (r.pid !== process.pid && processAlive(r.pid)) continue;
      await this.client.unloadModel(r.modelId).catch(() => undefined);
      this.record?.dropModel(r.owner, r.modelId);
    }
  }

  async publish(version: string): Promise<void> {
    if (version !== baseVersion(this.o.baseModel) && !parseSamplerPath(version))
      throw new Error(`'${version}' is not a version of the tinker backend (base:<model> or a tinker:// sampler path)`);
    this.current = version;
  }

  async close(): Promise<void> {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    await this.queue;
    await this.unloadLive();
  }
}

/** The checkpoint name inside a version's path (`tinker://model/[sampler_weights/]name` → name). */
function checkpointName(version: string): string {
  return parseSamplerPath(version)?.checkpoint ?? 'v';
}

export function baseVersion(baseModel: string): string {
  return `base:${baseModel}`;
}

/**
 * RSFT examples of one minibatch → Tinker data: input = prompt + completion without its last token,
 * targets = the next tokens, weight rsftTokenWeights(…, loss) where the target is a model-generated
 * completion token (1/N_tokens of the minibatch for the default 'token-mean'), 0 elsewhere.
 */
export function rsftData(examples: readonly TrainExample[], loss: RsftLoss = 'token-mean'): Datum[] {
  const trained = examples.map((e) => e.lossMask.filter((m) => m).length);
  const w = rsftTokenWeights(
    trained,
    examples.map((e) => e.group),
    loss,
  );
  const out: Datum[] = [];
  examples.forEach((e, i) => {
    if (trained[i] === 0) return;
    if (e.lossMask.length !== e.completionTokenIds.length)
      throw new Error(`training example ${i}: lossMask has ${e.lossMask.length} entries for ${e.completionTokenIds.length} completion tokens`);
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
