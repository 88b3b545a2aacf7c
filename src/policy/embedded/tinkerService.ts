/**
 * The Tinker routes for the embedded policy (served by `whale serve --backend embedded` beside the
 * OpenAI routes), so the Tinker client is tested against a real trainer over HTTP and the embedded
 * policy can train on another machine.
 *
 * A training model is a private copy of a stored version with its own Adam moments and gradient
 * accumulator: `forward_backward` adds Σ w·nll gradients (cross-entropy with the per-token weights
 * as sent — the client arranges them so the sum is the token-normalised RSFT minibatch mean),
 * `optim_step` applies one Adam step with the request's settings and clears the accumulator (the
 * same clip and update as local training, so the two agree), `save_weights_for_sampler` stores the
 * weights as a content-addressed version and answers `tinker://<model>/sampler_weights/<version>`:
 * sampling that path works after a server restart, and `create_model` accepts such a path (or a
 * version id) as `base_model` to continue training from it.
 *
 * Requests of one model run one at a time, in arrival order. A repeated `Idempotency-Key` gets the
 * first request's future back instead of running again. Differences from SkyRL's server, by design:
 * full-parameter training (LoRA rank is accepted and ignored), only `cross_entropy` with
 * next-token targets, no per-token logprobs in forward_backward's outputs (loss:sum is given), stop
 * conditions as strings only.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { writeJsonAtomic } from '../../core/atomic.js';
import type { z } from 'zod';
import {
  CreateModelBody,
  CreateSamplingSessionBody,
  CreateSessionBody,
  ForwardBackwardBody,
  GetInfoBody,
  OptimStepBody,
  RetrieveFutureBody,
  SampleBody,
  SaveForSamplerBody,
  inputTokens,
  parseSamplerPath,
  samplerPath,
  type Datum,
} from '../tinker/protocol.js';
import type { GenerateRequest, GenerateResult } from './sampler.js';
import { VersionStore } from './store.js';
import { writeHfTokenizer } from './hfTokenizerExport.js';
import type { TransformerModel } from './model.js';
import { tf, type Tensor } from './tf.js';
import type { WordTokenizer } from './tokenizer.js';
import { Trainer, computeGradients, type WeightedSequence } from './trainer.js';

export interface TinkerReply {
  status: number;
  body: unknown;
  /** A finished future's result type, for a client that asks for it as protobuf (tinker/proto.ts). */
  kind?: FutureKind;
}

type FutureKind = 'forward_backward' | 'sample';

/**
 * What the Tinker routes need of the embedded backend (EmbeddedBackend has it). Declared here, as
 * server.ts declares ServableBackend, so the service does not import the backend that starts it.
 */
interface TrainableBackend {
  readonly store: VersionStore;
  currentVersion(): string;
  hasVersion(version: string): boolean;
  /** A private copy of a version's weights. */
  cloneVersion(version?: string): { model: TransformerModel; tokenizer: WordTokenizer; version: string };
  /** Stores trained weights as a new version (not made current). */
  saveVersion(model: TransformerModel, tokenizer: WordTokenizer, meta: { parent: string | null; note?: string }): string;
  generateIds(version: string, req: GenerateRequest): Promise<GenerateResult>;
}

interface TrainingModel {
  id: string;
  baseModel: string;
  model: TransformerModel;
  tokenizer: WordTokenizer;
  trainer: Trainer;
  grads: Map<string, Tensor> | undefined;
  /** The stored version the weights came from or were last saved as. */
  version: string;
  queue: Promise<unknown>;
}

interface Future {
  kind?: FutureKind;
  done: boolean;
  result?: unknown;
  error?: string;
  settled: Promise<void>;
}

/** How long one retrieve_future call waits before answering 408 (the client polls again). */
const RETRIEVE_WAIT_MS = 20_000;

export class EmbeddedTinkerService {
  private readonly sessions = new Set<string>();
  private readonly models = new Map<string, TrainingModel>();
  private readonly futures = new Map<string, Future>();
  private readonly byKey = new Map<string, Record<string, unknown>>();
  /** Sampling sessions (the official SDK samples through them): id → what they sample. */
  private readonly samplers = new Map<string, { base_model?: string | null; model_path?: string | null }>();
  /** Checkpoint names given to save_weights_for_sampler → the content-addressed version saved under them. */
  private readonly names: Map<string, string>;
  private nextRequest = 1;

  constructor(
    private readonly backend: TrainableBackend,
    private readonly opts: {
      clipNorm?: number | null;
      retrieveWaitMs?: number;
      /** Where save_weights_for_sampler also writes each saved version, as `<exportDir>/<version>/` (a folder a sampler server can load). */
      exportDir?: string;
    } = {},
  ) {
    this.names = new Map(Object.entries(existsSync(this.namesFile) ? (JSON.parse(readFileSync(this.namesFile, 'utf8')) as Record<string, string>) : {}));
  }

  /** Named checkpoints survive a restart, as content-addressed versions do. */
  private get namesFile(): string {
    return join(this.backend.store.dir, 'tinker-names.json');
  }

  /** Counts of accepted work, for tests and health views. */
  readonly counters = { forwardBackward: 0, optimSteps: 0, deduplicated: 0, samples: 0 };

  async handle(method: string, path: string, body: unknown, idempotencyKey: string | undefined): Promise<TinkerReply | undefined> {
    const route = path.replace(/^\/api\/v1/, '');
    if (method === 'GET' && (route === '/healthz' || route === '/health')) return ok({ status: 'ok' });
    if (method === 'GET' && route === '/get_server_capabilities')
      return ok({ supported_models: [{ model_name: 'embedded' }], whale: { update: 'full', resume_from_sampler_path: true } });
    const sampler = method === 'GET' ? /^\/samplers\/([A-Za-z0-9_-]+)$/.exec(route) : null;
    if (sampler) {
      // SDK >= 0.38 asks what a sampling session samples before it samples.
      const s = this.samplers.get(sampler[1]);
      if (!s) throw new TinkerHttpError(404, `sampling session ${sampler[1]} not found`);
      return ok({ sampler_id: sampler[1], base_model: s.base_model ?? 'embedded', model_path: s.model_path ?? null });
    }
    if (method !== 'POST') return undefined;
    switch (route) {
      case '/create_session': {
        parse(CreateSessionBody, body, route);
        const id = `session_${hex(4)}`;
        this.sessions.add(id);
        return ok({ type: 'create_session', session_id: id });
      }
      case '/session_heartbeat':
        return ok({ type: 'session_heartbeat' });
      case '/create_sampling_session': {
        const b = parse(CreateSamplingSessionBody, body, route);
        if (!this.sessions.has(b.session_id)) throw new TinkerHttpError(404, `session ${b.session_id} not found`);
        if ((b.model_path == null) === (b.base_model == null)) throw new TinkerHttpError(400, 'give exactly one of base_model or model_path');
        this.resolveCheckpoint((b.model_path ?? b.base_model)!);
        const id = `sampling_${hex(4)}`;
        this.samplers.set(id, { base_model: b.base_model, model_path: b.model_path });
        return ok({ type: 'create_sampling_session', sampling_session_id: id });
      }
      case '/client/config':
        // The official SDK's first request (tinker >= 0.20); SkyRL answers the same. Fwd/bwd chunks
        // one at a time (a model's requests run in arrival order) and uncompressed (Node 20 has no zstd).
        return ok({ pjwt_auth_enabled: false, parallel_fwdbwd_chunks: false, proto_compress_fwdbwd: false });
      case '/unload_model': {
        // Frees the training model once its queued requests have run (its saved versions stay samplable).
        const b = parse(GetInfoBody, body, route);
        const m = this.model(b.model_id);
        return this.once(route, idempotencyKey, () =>
          this.enqueue(m, async () => {
            this.models.delete(m.id);
            this.dispose(m);
            return { type: 'unload_model', model_id: m.id };
          }),
        );
      }
      case '/telemetry':
        return ok({ status: 'accepted' });
      case '/get_info': {
        const b = parse(GetInfoBody, body, route);
        const m = this.model(b.model_id);
        return ok({
          model_id: m.id,
          status: 'ready',
          // tokenizer_id: a local folder, so the SDK's get_tokenizer() loads it without the hub (hfTokenizerExport.ts)
          model_data: {
            base_model: m.baseModel,
            lora_config: null,
            model_name: m.baseModel,
            tokenizer_id: writeHfTokenizer(m.tokenizer, m.model.config.contextLength, join(this.backend.store.dir, 'hf-tokenizer')),
          },
          whale: { version: m.version, optimizer_steps: m.trainer.optimizerSteps },
        });
      }
      case '/create_model':
        return this.once(route, idempotencyKey, () => this.createModel(parse(CreateModelBody, body, route)));
      case '/forward': // SDK <= 0.24: forward() has its own route and names its input forward_input
      case '/forward_backward': {
        const raw = route === '/forward' && body && typeof body === 'object' ? (body as Record<string, unknown>) : undefined;
        const b = parse(ForwardBackwardBody, raw ? { ...raw, forward_backward_input: raw.forward_input, forward_only: true } : body, route);
        const m = this.model(b.model_id);
        if (b.forward_backward_input.loss_fn !== 'cross_entropy')
          throw new TinkerHttpError(400, `loss_fn '${b.forward_backward_input.loss_fn}' is not supported by the embedded backend (only 'cross_entropy')`);
        const seqs = b.forward_backward_input.data.map((d, i) => toSequence(d, i));
        return this.once(route, idempotencyKey, () => this.enqueue(m, () => this.forwardBackward(m, seqs, b.forward_only ?? false), 'forward_backward'));
      }
      case '/optim_step': {
        const b = parse(OptimStepBody, body, route);
        const m = this.model(b.model_id);
        return this.once(route, idempotencyKey, () => this.enqueue(m, () => this.optimStep(m, b.adam_params)));
      }
      case '/save_weights_for_sampler': {
        const b = parse(SaveForSamplerBody, body, route);
        const m = this.model(b.model_id);
        return this.once(route, idempotencyKey, () => this.enqueue(m, () => this.save(m, b.path ?? undefined, b.sampling_session_seq_id != null)));
      }
      case '/asample':
      case '/sample': {
        const b = parse(SampleBody, body, route);
        return this.once(route, idempotencyKey, () => {
          const reply = this.future(this.sample(b), 'sample');
          // SDK >= 0.38 takes each sequence's id from the submission (for stability tracking it never asks this server for).
          (reply.body as Record<string, unknown>).sample_sequence_ids = Array.from({ length: b.num_samples }, () => `seq_${hex(6)}`);
          return reply;
        });
      }
      case '/retrieve_future':
        return this.retrieve(parse(RetrieveFutureBody, body, route).request_id);
      default:
        return undefined;
    }
  }

  /** Frees every training model. */
  close(): void {
    for (const m of this.models.values()) this.dispose(m);
    this.models.clear();
  }

  private createModel(b: z.infer<typeof CreateModelBody>): TinkerReply {
    if (!this.sessions.has(b.session_id))
      throw new TinkerHttpError(404, `session ${b.session_id} not found (create_session first; sessions do not survive a server restart)`);
    const from = this.resolveCheckpoint(b.base_model);
    const { model, tokenizer, version } = this.backend.cloneVersion(from);
    const id = `model_${hex(4)}`;
    const trainer = new Trainer(model, { learningRate: 0, clipNorm: this.opts.clipNorm === undefined ? 1 : this.opts.clipNorm });
    this.models.set(id, { id, baseModel: b.base_model, model, tokenizer, trainer, grads: undefined, version, queue: Promise.resolve() });
    const reply = this.future(Promise.resolve({ model_id: id, base_model: b.base_model, lora_config: b.lora_config ?? null }));
    return ok({
      model_id: id,
      base_model: b.base_model,
      lora_config: b.lora_config ?? null,
      status: 'created',
      request_id: (reply.body as { request_id: string }).request_id,
    });
  }

  /** 'embedded' / 'base' / 'current' → the served version; a version id or a sampler path → that version. */
  private resolveCheckpoint(name: string): string {
    if (name === 'embedded' || name === 'base' || name === 'current') return this.backend.currentVersion();
    const p = parseSamplerPath(name);
    const checkpoint = (p && this.names.get(`${p.modelId}/${p.checkpoint}`)) ?? p?.checkpoint ?? name;
    if (!this.backend.hasVersion(checkpoint))
      throw new TinkerHttpError(
        404,
        `unknown model or checkpoint '${name}': use 'embedded', a version id, or a tinker://…/sampler_weights/<version> path this server returned`,
      );
    return checkpoint;
  }

  private forwardBackward(m: TrainingModel, seqs: WeightedSequence[], forwardOnly: boolean): unknown {
    // Per-target logprobs under the weights before this step, as Tinker answers them (the
    // cookbook computes its loss from them): one more forward pass, without gradients.
    const logprobs = seqs.map((q) => targetLogprobs(m.model, q.tokens));
    const outputs = logprobs.map((data) => ({ logprobs: { data, dtype: 'float32', shape: [data.length] } }));
    if (forwardOnly) {
      // The SDK's forward(): the loss under the current weights, nothing accumulated.
      const weights = seqs.map((q) => Array.from(q.weights).slice(1));
      const loss = weights.reduce((sum, ws, i) => sum + ws.reduce((s, w, t) => s - w * (logprobs[i][t] ?? 0), 0), 0);
      const tokens = weights.reduce((n, ws) => n + ws.filter((w) => w !== 0).length, 0);
      return { loss_fn_output_type: 'cross_entropy', loss_fn_outputs: outputs, metrics: { 'loss:sum': loss, 'tokens:sum': tokens } };
    }
    const { loss, tokens, grads } = computeGradients(m.model, seqs);
    if (!m.grads) m.grads = grads;
    else {
      for (const [name, g] of grads) {
        const prev = m.grads.get(name);
        if (prev) {
          m.grads.set(name, tf().add(prev, g));
          prev.dispose();
          g.dispose();
        } else m.grads.set(name, g);
      }
    }
    this.counters.forwardBackward++;
    return {
      loss_fn_output_type: 'cross_entropy',
      loss_fn_outputs: outputs,
      metrics: { 'loss:sum': loss, 'tokens:sum': tokens },
    };
  }

  private optimStep(m: TrainingModel, a: z.infer<typeof OptimStepBody>['adam_params']): unknown {
    if (!m.grads) return { metrics: { grad_norm: 0, applied: 0 } };
    const gradNorm = m.trainer.applyGradients(m.grads, {
      learningRate: a.learning_rate,
      beta1: a.beta1,
      beta2: a.beta2,
      eps: a.eps,
      weightDecay: a.weight_decay,
    });
    for (const g of m.grads.values()) g.dispose();
    m.grads = undefined;
    this.counters.optimSteps++;
    return { metrics: { grad_norm: gradNorm, applied: 1, step: m.trainer.optimizerSteps } };
  }

  private save(m: TrainingModel, name: string | undefined, forSession = false): unknown {
    const version = this.backend.saveVersion(m.model, m.tokenizer, {
      parent: m.version,
      note: `tinker ${m.id}${name ? ` ${name}` : ''} after ${m.trainer.optimizerSteps} optimizer steps`,
    });
    m.version = version;
    if (forSession) {
      // The SDK's save_weights_and_get_sampling_client: no path, a sampling session on the weights.
      const id = `sampling_${hex(4)}`;
      this.samplers.set(id, { model_path: samplerPath(m.id, version) });
      return { path: null, type: 'save_weights_for_sampler', sampling_session_id: id };
    }
    // A named checkpoint keeps its name in the path (tinker://<model>/sampler_weights/<name>).
    if (name) {
      this.names.set(`${m.id}/${name}`, version);
      writeJsonAtomic(this.namesFile, Object.fromEntries(this.names));
    }
    // A full snapshot (the embedded trainer is full-parameter), in the store's folder format, for a
    // sampler process to load by path (POST /v1/load_lora_adapter) — as SkyRL writes LoRA adapters.
    const exported = this.opts.exportDir ? new VersionStore(this.opts.exportDir).importFolder(this.backend.store.folder(version)) : undefined;
    return {
      path: samplerPath(m.id, name ?? version),
      type: 'save_weights_for_sampler',
      sampling_session_id: null,
      ...(exported ? { whale: { exported_to: join(resolve(this.opts.exportDir!), exported) } } : {}),
    };
  }

  private async sample(body: z.infer<typeof SampleBody>): Promise<unknown> {
    const session = body.sampling_session_id ? this.samplers.get(body.sampling_session_id) : undefined;
    if (body.sampling_session_id && !session) throw new TinkerHttpError(404, `sampling session ${body.sampling_session_id} not found`);
    const b = session ? { ...body, ...session } : body;
    if ((b.model_path == null) === (b.base_model == null)) throw new TinkerHttpError(400, 'give exactly one of base_model or model_path');
    const version = this.resolveCheckpoint((b.model_path ?? b.base_model)!);
    const stop = b.sampling_params.stop;
    if (stop && stop.some((s) => typeof s !== 'string'))
      throw new TinkerHttpError(400, 'stop token ids are not supported by the embedded backend; send stop strings');
    const promptIds = inputTokens(b.prompt);
    const sequences = [];
    for (let i = 0; i < b.num_samples; i++) {
      const seed = b.sampling_params.seed == null ? undefined : b.sampling_params.seed + i;
      const r = await this.backend.generateIds(version, {
        promptIds,
        temperature: b.sampling_params.temperature,
        topP: b.sampling_params.top_p,
        maxTokens: b.sampling_params.max_tokens,
        stop: stop as string[] | undefined,
        seed,
      });
      sequences.push({ tokens: r.completionTokenIds, logprobs: r.logprobs, stop_reason: r.finishReason });
    }
    this.counters.samples += b.num_samples;
    return { sequences, prompt_logprobs: null, whale: { version } };
  }

  /** Runs `work` after the model's earlier requests (forward_backward → optim_step order matters). */
  private enqueue(m: TrainingModel, work: () => unknown, kind?: FutureKind): TinkerReply {
    const run = m.queue.then(async () => {
      await new Promise<void>((r) => setImmediate(r)); // let the HTTP reply go out first
      return work();
    });
    m.queue = run.catch(() => undefined);
    return this.future(run, kind);
  }

  private future(p: Promise<unknown>, kind?: FutureKind): TinkerReply {
    const id = String(this.nextRequest++);
    const f: Future = { kind, done: false, settled: Promise.resolve() };
    f.settled = p.then(
      (r) => {
        f.done = true;
        f.result = r;
      },
      (e: unknown) => {
        f.done = true;
        f.error = e instanceof Error ? e.message : String(e);
      },
    );
    this.futures.set(id, f);
    return ok({ future_id: id, request_id: id, status: 'pending' });
  }

  /** The first reply for an idempotency key, or a new one. */
  private once(route: string, key: string | undefined, start: () => TinkerReply): TinkerReply {
    if (!key) return start();
    const k = `${route} ${key}`;
    const seen = this.byKey.get(k);
    if (seen) {
      this.counters.deduplicated++;
      return ok(seen);
    }
    const reply = start();
    if (reply.status === 200) this.byKey.set(k, reply.body as Record<string, unknown>);
    return reply;
  }

  private async retrieve(id: string): Promise<TinkerReply> {
    const f = this.futures.get(id);
    if (!f) return { status: 404, body: { detail: `future ${id} not found (futures do not survive a server restart)` } };
    if (!f.done) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([f.settled, new Promise<void>((r) => (timer = setTimeout(r, this.opts.retrieveWaitMs ?? RETRIEVE_WAIT_MS)))]);
      clearTimeout(timer);
    }
    if (!f.done) return { status: 408, body: { detail: 'Timeout waiting for result' } };
    if (f.error !== undefined) return { status: 400, body: { detail: f.error } };
    return { status: 200, body: f.result, kind: f.kind };
  }

  private model(id: string): TrainingModel {
    const m = this.models.get(id);
    if (!m)
      throw new TinkerHttpError(404, `Model not found: ${id} (training models do not survive a server restart; create_model from your last sampler path)`);
    return m;
  }

  private dispose(m: TrainingModel): void {
    if (m.grads) for (const g of m.grads.values()) g.dispose();
    m.trainer.dispose();
    m.model.dispose();
  }
}

export class TinkerHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A datum → a weighted sequence. The targets must be the next tokens of the input (the usual
 * shift, as the client sends); `weights[t]` weights the target at position t.
 */
function toSequence(d: Datum, index: number): WeightedSequence {
  const input = inputTokens(d.model_input);
  const targets = d.loss_fn_inputs.target_tokens.data;
  const weights = d.loss_fn_inputs.weights?.data ?? targets.map(() => 1);
  const where = `forward_backward_input.data[${index}]`;
  if (targets.length !== input.length)
    throw new TinkerHttpError(400, `${where}: ${targets.length} target_tokens for ${input.length} input tokens (they must be equal)`);
  if (weights.length !== targets.length) throw new TinkerHttpError(400, `${where}: ${weights.length} weights for ${targets.length} target_tokens`);
  for (let i = 0; i + 1 < input.length; i++) {
    if (targets[i] !== input[i + 1])
      throw new TinkerHttpError(400, `${where}: target_tokens[${i}] is not input token ${i + 1}; the embedded backend trains next-token targets only`);
  }
  return { tokens: [...input, targets[targets.length - 1]], weights: [0, ...weights] };
}

/** log p(tokens[t+1] | tokens[..t]) for every t: what `loss_fn_outputs[i].logprobs` holds. */
function targetLogprobs(model: TrainingModel['model'], tokens: ArrayLike<number>): number[] {
  const T = tokens.length - 1;
  if (T < 1 || T > model.config.contextLength) return [];
  const V = model.config.vocabSize;
  const z = model.logits(Int32Array.from(tokens).subarray(0, T), 1, T);
  const out: number[] = [];
  for (let t = 0; t < T; t++) {
    let max = -Infinity;
    for (let v = 0; v < V; v++) max = Math.max(max, z[t * V + v]);
    let sum = 0;
    for (let v = 0; v < V; v++) sum += Math.exp(z[t * V + v] - max);
    out.push(z[t * V + tokens[t + 1]] - max - Math.log(sum));
  }
  return out;
}

function parse<T extends z.ZodType>(schema: T, body: unknown, route: string): z.infer<T> {
  const r = schema.safeParse(body);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new TinkerHttpError(400, `${route}: ${issue.path.join('.') || '(body)'}: ${issue.message}`);
  }
  return r.data;
}

function ok(body: unknown): TinkerReply {
  return { status: 200, body };
}

function hex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}
