/**
 * The embedded PolicyBackend: the small tfjs-wasm transformer, sampled by a continuous-batching
 * sampler, trained by real RSFT steps, versions content-addressed on disk.
 *
 * Versions: `train` saves a new version (parent = the current one) and keeps it loaded; `publish`
 * makes a version current. Up to `maxLoadedVersions` versions stay in memory (least recently used
 * idle ones are unloaded first; the current one never is). Adam moments carry from one `train` call
 * to the next when it starts from the version the previous call produced (momentum across RSFT
 * steps, as a persistent optimizer would), and start from zero otherwise; they are not saved.
 */
import { existsSync, readFileSync } from 'node:fs';
import { writeFileAtomic } from '../../core/atomic.js';
import { resourcesDir } from '../../core/resources.js';
import { join } from 'node:path';
import type { Capabilities, ChatMessage, ChatRequest, ChatResult, PolicyBackend, TrainExample, TrainHyper, TrainResult } from '../types.js';
import type { TransformerModel } from './model.js';
import { BatchSampler, keepPromptTail, type GenerateRequest, type GenerateResult, type SamplerOptions, type SamplerStats } from './sampler.js';
import { startEmbeddedServer, type EmbeddedServer } from './server.js';
import { VersionStore, type VersionMeta } from './store.js';
import { loadTf } from './tf.js';
import type { WordTokenizer } from './tokenizer.js';
import { Trainer, adamStateFromBytes, adamStateToBytes, trainRsft, type AdamState } from './trainer.js';

export interface EmbeddedBackendOptions {
  /** Where trained versions are kept (`<dir>/<versionId>/`). */
  versionsDir: string;
  /** The shipped base model folder; default `resources/model/base` of this package. */
  baseModelDir?: string;
  /** The version to start from (must be in versionsDir); default the base model. */
  initialVersion?: string;
  maxLoadedVersions?: number;
  sampler?: SamplerOptions;
  /** The OpenAI-compatible server `endpoint()` starts on loopback; port 0 (default) = any free port. */
  server?: { port?: number; host?: string };
  /** Global gradient-norm clip for training (default 1.0; null = none). */
  clipNorm?: number | null;
}

interface Entry {
  version: string;
  model: TransformerModel;
  tokenizer: WordTokenizer;
  meta: VersionMeta;
  sampler?: BatchSampler;
  lastUsed: number;
}

export class EmbeddedBackend implements PolicyBackend {
  readonly kind = 'embedded';
  readonly store: VersionStore;
  private current: string;
  private readonly loaded = new Map<string, Entry>();
  private readonly maxLoaded: number;
  private readonly samplerOptions: SamplerOptions;
  private readonly serverOptions: { port?: number; host?: string };
  private readonly clipNorm: number | null;
  private server?: Promise<EmbeddedServer>;
  private adamCarry?: { version: string; state: AdamState };
  private trainQueue: Promise<unknown> = Promise.resolve();
  private useClock = 0;
  private closed = false;
  /** Names given by /v1/load_lora_adapter → the stored version each one serves. */
  private readonly adapters = new Map<string, string>();

  private constructor(store: VersionStore, current: string, opts: EmbeddedBackendOptions) {
    this.store = store;
    this.current = current;
    this.maxLoaded = Math.max(1, opts.maxLoadedVersions ?? 3);
    this.samplerOptions = opts.sampler ?? {};
    this.serverOptions = opts.server ?? {};
    this.clipNorm = opts.clipNorm === undefined ? 1 : opts.clipNorm;
  }

  /** Opens the backend on the shipped base model (imported into versionsDir) or on `initialVersion`. */
  static async open(opts: EmbeddedBackendOptions): Promise<EmbeddedBackend> {
    await loadTf();
    const store = new VersionStore(opts.versionsDir);
    let current = opts.initialVersion;
    if (current === undefined) current = store.importFolder(opts.baseModelDir ?? defaultBaseModelDir());
    else if (!store.has(current)) throw new Error(`policy version ${current} is not in ${store.dir}`);
    const b = new EmbeddedBackend(store, current, opts);
    b.entry(current);
    return b;
  }

  /** Opens the backend on an in-memory model (saved into versionsDir as the first version). */
  static async fromModel(model: TransformerModel, tokenizer: WordTokenizer, opts: EmbeddedBackendOptions & { note?: string }): Promise<EmbeddedBackend> {
    await loadTf();
    const store = new VersionStore(opts.versionsDir);
    const version = store.save(model, tokenizer, { parent: null, note: opts.note });
    const b = new EmbeddedBackend(store, version, opts);
    b.loaded.set(version, { version, model, tokenizer, meta: store.readMeta(version), lastUsed: ++b.useClock });
    return b;
  }

  async capabilities(): Promise<Capabilities> {
    return { update: 'full', tokenIds: true, logprobs: true, maxContext: this.entry(this.current).model.config.contextLength, chatTemplate: 'client' };
  }

  currentVersion(): string {
    return this.current;
  }

  /** Versions stored on disk. */
  versions(): string[] {
    return this.store.list();
  }

  /** `'current'` and undefined mean the current version. */
  resolveVersion(version?: string): string {
    if (version === undefined || version === 'current') return this.current;
    return this.adapters.get(version) ?? version;
  }

  /** Adapter names loaded at runtime, with the version each serves. */
  adapterNames(): { name: string; version: string }[] {
    return [...this.adapters].map(([name, version]) => ({ name, version }));
  }

  /**
   * vLLM's runtime LoRA loading, for a full-parameter model: `path` is a saved model folder (a
   * full weights snapshot, not a low-rank adapter — the embedded trainer is full-parameter), copied
   * into the store and served under `name`. Errors carry vLLM's wording and status.
   */
  loadAdapter(name: string, path: string): string {
    this.assertOpen();
    if (this.adapters.has(name)) throw new AdapterError(400, `The lora adapter '${name}' has already been loaded.`);
    if (!existsSync(join(path, 'weights.bin')))
      throw new AdapterError(
        404,
        `Loading lora ${name} failed: No adapter found for ${path} (a folder with weights.bin, config.json and vocab.json is expected)`,
      );
    let version: string;
    try {
      version = this.store.importFolder(path);
      this.entry(version);
    } catch (e) {
      throw new AdapterError(400, `Loading lora ${name} failed: ${(e as Error).message}`);
    }
    this.adapters.set(name, version);
    return version;
  }

  unloadAdapter(name: string): void {
    if (!this.adapters.delete(name)) throw new AdapterError(404, `The lora adapter '${name}' cannot be found.`);
  }

  hasVersion(version: string): boolean {
    const v = this.resolveVersion(version);
    return this.loaded.has(v) || this.store.has(v);
  }

  async endpoint(version?: string): Promise<{ baseUrl: string; model: string }> {
    this.assertOpen();
    const v = this.resolveVersion(version);
    this.entry(v);
    this.server ??= startEmbeddedServer({ backend: this, port: this.serverOptions.port ?? 0, host: this.serverOptions.host ?? '127.0.0.1' });
    const s = await this.server;
    return { baseUrl: `${s.url}/v1`, model: v };
  }

  /** The context length of a version (the HTTP server refuses longer prompts, as vLLM does). */
  maxContext(version?: string): number {
    return this.entry(this.resolveVersion(version)).model.config.contextLength;
  }

  tokenizerFor(version?: string): WordTokenizer {
    return this.entry(this.resolveVersion(version)).tokenizer;
  }

  encodeChat(messages: ChatMessage[]): number[] {
    return this.tokenizerFor().encodeChat(messages, { addGenerationPrompt: true });
  }

  async chat(req: ChatRequest): Promise<ChatResult> {
    this.assertOpen();
    const version = this.resolveVersion(req.version);
    const e = this.entry(version);
    e.sampler ??= new BatchSampler(e.model, e.tokenizer, this.samplerOptions);
    const p = req.params ?? {};
    const r = await e.sampler.generate({
      promptIds: keepPromptTail(e.tokenizer.encodeChat(req.messages, { addGenerationPrompt: true }), e.model.config.contextLength, p.max_tokens),
      temperature: p.temperature,
      topP: p.top_p,
      maxTokens: p.max_tokens,
      stop: p.stop,
      seed: p.seed,
      signal: req.signal,
    });
    return { ...r, version };
  }

  /** Samples from `version` given prompt token ids (the Tinker routes: the client renders the chat). */
  async generateIds(version: string, req: GenerateRequest): Promise<GenerateResult> {
    this.assertOpen();
    const e = this.entry(this.resolveVersion(version));
    e.sampler ??= new BatchSampler(e.model, e.tokenizer, this.samplerOptions);
    return e.sampler.generate(req);
  }

  /** A private copy of a version's weights (a Tinker training model starts from one). */
  cloneVersion(version?: string): { model: TransformerModel; tokenizer: WordTokenizer; version: string } {
    this.assertOpen();
    const v = this.resolveVersion(version);
    const e = this.entry(v);
    return { model: e.model.clone(), tokenizer: e.tokenizer, version: v };
  }

  /** Saves weights trained elsewhere in this process as a new version (content-addressed; not made current). */
  saveVersion(model: TransformerModel, tokenizer: WordTokenizer, meta: { parent: string | null; note?: string }): string {
    this.assertOpen();
    const version = this.store.save(model, tokenizer, meta);
    if (!this.loaded.has(version)) {
      this.loaded.set(version, { version, model: model.clone(), tokenizer, meta: this.store.readMeta(version), lastUsed: ++this.useClock });
      this.evict(version);
    }
    return version;
  }

  /** Sampler counters of a loaded version (batching evidence for tests and the benchmark). */
  samplerStats(version?: string): SamplerStats | undefined {
    return this.loaded.get(this.resolveVersion(version))?.sampler?.stats;
  }

  train(examples: TrainExample[], hyper: TrainHyper, opts: { signal?: AbortSignal; onStep?: (step: number, loss: number) => void } = {}): Promise<TrainResult> {
    // One training run at a time: each starts from the version current when it starts.
    const run = this.trainQueue.then(() => this.trainNow(examples, hyper, opts));
    this.trainQueue = run.catch(() => undefined);
    return run;
  }

  private async trainNow(
    examples: TrainExample[],
    hyper: TrainHyper,
    opts: { signal?: AbortSignal; onStep?: (step: number, loss: number) => void },
  ): Promise<TrainResult> {
    this.assertOpen();
    const parent = this.current;
    const src = this.entry(parent);
    // A copy: the parent's tensors may be in use by its sampler while we train.
    const model = src.model.clone();
    let carried: AdamState | undefined;
    if (this.adamCarry?.version === parent) carried = this.adamCarry.state;
    else {
      if (this.adamCarry) disposeAdam(this.adamCarry.state);
      // A resumed process: continue from the moments saved with the parent, as if never stopped.
      const saved = join(this.store.folder(parent), OPTIMIZER_FILE);
      if (existsSync(saved)) carried = adamStateFromBytes(readFileSync(saved), model, saved);
    }
    this.adamCarry = undefined;
    const trainer = new Trainer(model, { learningRate: hyper.learningRate, adam: hyper.adam, clipNorm: this.clipNorm }, carried);
    let run;
    try {
      run = await trainRsft(trainer, examples, hyper, opts);
    } catch (e) {
      trainer.dispose();
      model.dispose();
      throw e;
    }
    const trainStats = {
      examples: examples.length,
      optimizerSteps: run.optimizerSteps,
      trainedTokens: run.trainedTokens,
      losses: run.losses,
      wallMs: Math.round(run.wallMs),
      hyper,
    };
    const version = this.store.save(model, src.tokenizer, { parent, train: trainStats });
    this.adamCarry = { version, state: trainer.takeState() };
    writeFileAtomic(join(this.store.folder(version), OPTIMIZER_FILE), adamStateToBytes(this.adamCarry.state));
    if (this.loaded.has(version)) model.dispose();
    else this.loaded.set(version, { version, model, tokenizer: src.tokenizer, meta: this.store.readMeta(version), lastUsed: ++this.useClock });
    this.evict();
    return {
      version,
      parentVersion: parent,
      optimizerSteps: run.optimizerSteps,
      losses: run.losses,
      trainedTokens: run.trainedTokens,
      wallMs: run.wallMs,
    };
  }

  async publish(version: string): Promise<void> {
    this.assertOpen();
    const v = this.resolveVersion(version);
    this.entry(v);
    this.current = v;
    this.evict();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.server) await (await this.server).close();
    for (const e of this.loaded.values()) {
      e.sampler?.close();
      e.model.dispose();
    }
    this.loaded.clear();
    if (this.adamCarry) disposeAdam(this.adamCarry.state);
    this.adamCarry = undefined;
  }

  /** The loaded version, loading it from the store when needed (tfjs is loaded by open/fromModel). */
  private entry(version: string): Entry {
    let e = this.loaded.get(version);
    if (!e) {
      if (!this.store.has(version)) throw new UnknownVersionError(version, this.store.dir);
      const l = this.store.load(version);
      e = { ...l, lastUsed: 0 };
      this.loaded.set(version, e);
      this.evict(version);
    }
    e.lastUsed = ++this.useClock;
    return e;
  }

  private evict(keep?: string): void {
    while (this.loaded.size > this.maxLoaded) {
      const idle = [...this.loaded.values()]
        .filter((e) => e.version !== this.current && e.version !== keep && !e.sampler?.busy)
        .sort((a, b) => a.lastUsed - b.lastUsed);
      const victim = idle[0];
      if (!victim) return; // everything is busy: stay over the limit until it is not
      victim.sampler?.close();
      victim.model.dispose();
      this.loaded.delete(victim.version);
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('the embedded backend is closed');
  }
}

export class AdapterError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'AdapterError';
  }
}

export class UnknownVersionError extends Error {
  readonly code = 'model_not_found';
  constructor(version: string, dir: string) {
    super(`unknown policy version ${JSON.stringify(version)}: not loaded and not in ${dir}`);
    this.name = 'UnknownVersionError';
  }
}

/** Adam moments saved beside each trained version (about twice the weights' size). */
const OPTIMIZER_FILE = 'optimizer.bin';

function disposeAdam(s: AdamState): void {
  for (const x of [...s.m.values(), ...s.v.values()]) x.dispose();
}

/** `resources/model/base` of the package this file belongs to (found by walking up to its package.json). */
export function defaultBaseModelDir(): string {
  return join(resourcesDir(), 'model', 'base');
}
