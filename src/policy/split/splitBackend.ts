/**
 * The `split` backend: rollouts on an OpenAI-compatible sampler (vLLM), training on a Tinker server
 * (SkyRL's, on the same GPU box), each trained version published to the sampler through vLLM's
 * runtime LoRA routes (vllmLora.ts).
 *
 * Versions are the trainer's (`base:<model>`, then `tinker://…` sampler paths); the sampler knows
 * them by the adapter name the publisher gave (`whale-<run>-v<N>`), so rollouts, the cache and the
 * journal record the same version ids as with the tinker backend alone. Training consumes the token
 * ids the sampler returned (vLLM's return_token_ids), so the trainer sees exactly what was sampled.
 *
 * A trained result is recorded before it is published: when publishing fails (the sampler cannot
 * read the path, LoRA is off), the phase fails with a clear error and a rerun publishes the same
 * version without training again.
 */
import { createHash } from 'node:crypto';
import type { PublishConfig } from '../../core/config.js';
import { CapabilityError, type OpenAICompatibleBackend } from '../remote/openaiBackend.js';
import { BackendHttpError } from '../remote/http.js';
import type { TinkerBackend } from '../tinker/backend.js';
import { baseVersion } from '../tinker/backend.js';
import type { Capabilities, ChatRequest, ChatResult, PolicyBackend, TrainExample, TrainHyper, TrainResult } from '../types.js';
import { VllmLoraPublisher, probeLoraLoading } from './vllmLora.js';

export class SplitBackend implements PolicyBackend {
  readonly kind = 'split';

  private constructor(
    readonly sampler: OpenAICompatibleBackend,
    readonly trainer: TinkerBackend,
    readonly publisher: VllmLoraPublisher,
  ) {}

  /**
   * Refuses, before any rollout, a sampler without the runtime LoRA routes; a resumed run's
   * version is loaded (a restarted vLLM has forgotten it).
   */
  static async open(o: {
    sampler: OpenAICompatibleBackend;
    trainer: TinkerBackend;
    publish: PublishConfig;
    samplerModel: string;
    baseModel: string;
    recordFile: string;
    runTag: string;
  }): Promise<SplitBackend> {
    if (!(await probeLoraLoading(o.sampler.http))) {
      throw new CapabilityError(
        `the sampler at ${o.sampler.http.baseUrl} has no runtime LoRA loading (POST /v1/load_lora_adapter is not there): start vLLM with --enable-lora --max-lora-rank <at least the trainer's loraRank> and the environment variable VLLM_ALLOW_RUNTIME_LORA_UPDATING=True`,
      );
    }
    const publisher = new VllmLoraPublisher(o.sampler.http, o.publish, {
      file: o.recordFile,
      runTag: o.runTag,
      baseVersion: baseVersion(o.baseModel),
      baseModel: o.samplerModel,
    });
    const b = new SplitBackend(o.sampler, o.trainer, publisher);
    const current = o.trainer.currentVersion();
    if (current !== baseVersion(o.baseModel)) await publisher.publish(current);
    return b;
  }

  async capabilities(): Promise<Capabilities> {
    const s = await this.sampler.capabilities();
    const t = await this.trainer.capabilities();
    const { recordsRsft: _none, ...sampling } = s;
    return { ...sampling, update: t.update, loraLoading: true };
  }

  currentVersion(): string {
    return this.trainer.currentVersion();
  }

  async endpoint(version?: string): Promise<{ baseUrl: string; model: string }> {
    return { baseUrl: this.sampler.http.baseUrl, model: await this.publisher.modelFor(version ?? this.currentVersion()) };
  }

  async chat(req: ChatRequest): Promise<ChatResult> {
    const version = req.version ?? this.currentVersion();
    const model = await this.publisher.modelFor(version, req.signal);
    try {
      return { ...(await this.sampler.chat({ ...req, version: model })), version };
    } catch (e) {
      // A sampler restarted since the load answers 404 for the adapter: load it again, once.
      if (!(e instanceof BackendHttpError && e.status === 404 && this.publisher.isAdapterName(model))) throw e;
      this.publisher.forget(model);
      await this.publisher.modelFor(version, req.signal);
      return { ...(await this.sampler.chat({ ...req, version: model })), version };
    }
  }

  async train(
    examples: TrainExample[],
    hyper: TrainHyper,
    opts?: { signal?: AbortSignal; onStep?: (step: number, loss: number) => void },
  ): Promise<TrainResult> {
    const key = createHash('sha256')
      .update(JSON.stringify({ parent: this.currentVersion(), examples, hyper }))
      .digest('hex')
      .slice(0, 32);
    const done = this.publisher.trainedFor(key);
    if (done) return done;
    const r = await this.trainer.train(examples, hyper, opts);
    this.publisher.recordTrained(key, r);
    return r;
  }

  /** Loads the version into the sampler first, so a version that cannot be published never becomes current. */
  async publish(version: string): Promise<void> {
    await this.publisher.publish(version);
    await this.trainer.publish(version);
  }

  async close(): Promise<void> {
    await this.sampler.close();
    await this.trainer.close();
  }
}
