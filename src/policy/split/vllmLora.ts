/**
 * Publishing trained versions to a vLLM-class sampler through its runtime LoRA routes
 * (REFERENCE.md §4; vLLM started with --enable-lora and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True):
 *
 *   POST /v1/load_lora_adapter   {lora_name, lora_path}  → 200 "Success: …" | 400 "… has already been loaded."
 *   POST /v1/unload_lora_adapter {lora_name}             → 200 "Success: …" | 400/404 "… cannot be found."
 *
 * and a loaded adapter is sampled as `model: <lora_name>`. Each version gets one stable name,
 * `<prefix>-<run>-v<N>`, recorded in the run store (`published-adapters.json`) BEFORE it is loaded,
 * so a retry or a resumed process reuses the name (vLLM's "already loaded" then means "done") and
 * never loads a version twice under two names. The newest `keepLoaded` published versions stay
 * loaded; older ones are unloaded (their folders stay, so a later use reloads them on demand).
 */
import { unpackedAdapterPath } from './unpack.js';
import { existsSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { writeJsonAtomic } from '../../core/atomic.js';
import type { PublishConfig } from '../../core/config.js';
import { WhaleError } from '../../core/errors.js';
import { BackendHttpError, type JsonHttp } from '../remote/http.js';
import { parseSamplerPath } from '../tinker/protocol.js';
import type { TrainResult } from '../types.js';

export interface PublishedAdapter {
  version: string;
  name: string;
  path: string;
  /** Whether the sampler was last told to hold it (false after an unload). */
  loaded?: boolean;
}

/** What the run store keeps: names given, what was trained (so a failed publish loses no training), what is loaded. */
interface PublishRecord {
  format: 'whale-published-adapters';
  sampler: string;
  adapters: PublishedAdapter[];
  /** Versions in the order they were made current, newest last. */
  recent: string[];
  trained: Record<string, TrainResult>;
}

export class PublishError extends WhaleError {
  constructor(message: string) {
    super(message, 'publish');
  }
}

export class VllmLoraPublisher {
  private rec: PublishRecord;
  /** Names this process knows the sampler holds (confirmed by a load or an "already loaded"). */
  private readonly loaded = new Set<string>();

  constructor(
    private readonly http: JsonHttp,
    private readonly cfg: PublishConfig,
    private readonly o: { file: string; runTag: string; baseVersion: string; baseModel: string },
  ) {
    this.rec = existsSync(o.file)
      ? (JSON.parse(readFileSync(o.file, 'utf8')) as PublishRecord)
      : { format: 'whale-published-adapters', sampler: http.baseUrl, adapters: [], recent: [], trained: {} };
  }

  adapters(): readonly PublishedAdapter[] {
    return this.rec.adapters;
  }

  /** The `model` a chat completion names to sample `version`; loads its adapter first when needed. */
  async modelFor(version: string, signal?: AbortSignal): Promise<string> {
    if (version === this.o.baseVersion) return this.o.baseModel;
    const a = this.assign(version);
    if (!this.loaded.has(a.name)) await this.load(a, signal);
    return a.name;
  }

  /** Loads `version` and unloads what falls out of the kept window. */
  async publish(version: string, signal?: AbortSignal): Promise<string> {
    const model = await this.modelFor(version, signal);
    this.rec.recent = [...this.rec.recent.filter((v) => v !== version), version];
    this.save();
    const keep = new Set(this.rec.recent.slice(-this.cfg.keepLoaded));
    for (const a of this.rec.adapters) if (!keep.has(a.version) && a.loaded !== false) await this.unload(a, signal);
    return model;
  }

  /** A sampler that restarted has forgotten its adapters: the next use loads again. */
  forget(name: string): void {
    this.loaded.delete(name);
  }

  isAdapterName(name: string): boolean {
    return this.rec.adapters.some((a) => a.name === name);
  }

  trainedFor(key: string): TrainResult | undefined {
    return this.rec.trained[key];
  }

  recordTrained(key: string, r: TrainResult): void {
    this.rec.trained[key] = r;
    this.save();
  }

  /** The version's name, given once and recorded before anything is loaded under it. */
  private assign(version: string): PublishedAdapter {
    const path = adapterPath(this.cfg, version);
    const known = this.rec.adapters.find((a) => a.version === version);
    if (known) {
      // The config's folder may have been corrected since (a failed publish): the name stays.
      if (known.path !== path) {
        known.path = path;
        this.save();
      }
      return known;
    }
    const a = { version, name: `${this.cfg.namePrefix}-${this.o.runTag}-v${this.rec.adapters.length + 1}`, path };
    this.rec.adapters.push(a);
    this.save();
    return a;
  }

  private async load(a: PublishedAdapter, signal?: AbortSignal): Promise<void> {
    try {
      await this.http.post('/load_lora_adapter', { lora_name: a.name, lora_path: unpackedAdapterPath(a.path) }, { signal });
    } catch (e) {
      if (!(e instanceof BackendHttpError && /already been loaded/i.test(e.message))) {
        const why = e instanceof Error ? e.message : String(e);
        throw new PublishError(
          `could not publish policy version ${a.version} to the sampler: loading adapter '${a.name}' from '${a.path}' failed (${why}). ` +
            `The path must be readable by the sampler server (backend.publish.adapterDir / pathTemplate), and vLLM must run with --enable-lora, a --max-lora-rank at least the trainer's loraRank, and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True. ` +
            `The training is kept: run again (resume) once it is fixed and the version is published without training again`,
        );
      }
    }
    this.loaded.add(a.name);
    if (a.loaded !== true) {
      a.loaded = true;
      this.save();
    }
  }

  private async unload(a: PublishedAdapter, signal?: AbortSignal): Promise<void> {
    try {
      await this.http.post('/unload_lora_adapter', { lora_name: a.name }, { signal });
    } catch (e) {
      // The adapter is already gone ("The lora adapter 'x' cannot be found."): done. A 404 from the
      // framework ("Not Found": the route itself is missing, e.g. vLLM restarted without
      // VLLM_ALLOW_RUNTIME_LORA_UPDATING) is not: nothing was unloaded.
      if (!(e instanceof BackendHttpError && e.status === 404 && /cannot be found/i.test(e.message))) {
        if (e instanceof BackendHttpError && e.status === 404)
          throw new PublishError(
            `could not unload adapter '${a.name}': ${this.http.baseUrl}/unload_lora_adapter is not there (${e.message}); start vLLM with VLLM_ALLOW_RUNTIME_LORA_UPDATING=True`,
          );
        throw e;
      }
    }
    this.loaded.delete(a.name);
    a.loaded = false;
    this.save();
  }

  private save(): void {
    writeJsonAtomic(this.o.file, this.rec);
  }
}

/** `lora_path` of a version: the template with {adapterDir}, {checkpoint} and {model} filled in. */
export function adapterPath(cfg: Pick<PublishConfig, 'adapterDir' | 'pathTemplate'>, version: string): string {
  const p = parseSamplerPath(version);
  const checkpoint = p?.checkpoint ?? basename(version);
  return cfg.pathTemplate
    .replaceAll('{adapterDir}', cfg.adapterDir.replace(/\/+$/, ''))
    .replaceAll('{checkpoint}', checkpoint)
    .replaceAll('{model}', p?.modelId ?? '');
}

/**
 * Whether the server has the runtime LoRA routes: unloading a name that was never loaded answers
 * "cannot be found" when they exist, and the framework's plain 404 ("Not Found") when vLLM was
 * started without VLLM_ALLOW_RUNTIME_LORA_UPDATING (or the server is not vLLM at all).
 */
export async function probeLoraLoading(http: JsonHttp): Promise<boolean> {
  try {
    await http.post('/unload_lora_adapter', { lora_name: `whale-probe-${process.pid}-${Date.now()}` }, { retries: 1 });
    return true;
  } catch (e) {
    if (!(e instanceof BackendHttpError)) throw e;
    const said = e.message.replace(/^.*?HTTP \d+: /, ''); // the server's words, not our URL
    return /cannot be found|(adapter|lora).*not found|not found.*(adapter|lora)/i.test(said);
  }
}
