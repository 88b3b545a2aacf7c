/**
 * Connecting a backend: probe a URL for what it can do (token ids, logprobs, runtime LoRA loading,
 * training) and build the `backend` section of whale.config.json for it. Used by
 * `whale backend connect` and, through it, by `WHALE: Connect Backend`.
 */
import { BackendSchema } from '../core/config.js';
import { InputError, WhaleError } from '../core/errors.js';
import { JsonHttp } from './remote/http.js';
import { probeServer } from './remote/openaiBackend.js';
import { probeLoraLoading } from './split/vllmLora.js';
import { TinkerClient } from './tinker/client.js';

export const CONNECT_KINDS = ['embedded', 'openai-compatible', 'tinker', 'split'] as const;
export type ConnectKind = (typeof CONNECT_KINDS)[number];

export interface ConnectRequest {
  kind: ConnectKind;
  /** The sampler (openai-compatible, split) or the Tinker server (tinker). */
  url?: string;
  model?: string;
  /** split: the Tinker server that trains. */
  trainerUrl?: string;
  /** split: the folder, as the sampler sees it, where the trainer writes saved versions. */
  adapterDir?: string;
  baseModel?: string;
  tokenizer?: string;
  apiKeyEnv?: string;
  /** The LoRA rank to train at (default: the config's default, 32, or the server's maximum if lower). */
  loraRank?: number;
}

export interface Detected {
  tokenIds?: boolean;
  logprobs?: boolean;
  loraLoading?: boolean;
  training: 'full' | 'lora' | 'none' | 'unknown';
  models?: string[];
  /** One line per server probed. */
  lines: string[];
}

/** Probes what `req` names and returns the backend section to write (checked against the config schema, defaults left out). */
export async function connectBackend(req: ConnectRequest): Promise<{ backend: Record<string, unknown>; detected: Detected }> {
  const lines: string[] = [];
  const quick = { timeoutMs: 15_000, retries: 0, outageMs: 0, ...(req.apiKeyEnv ? { apiKeyEnv: req.apiKeyEnv } : {}) };
  if (req.kind === 'embedded') {
    return {
      backend: { kind: 'embedded' },
      detected: {
        tokenIds: true,
        logprobs: true,
        loraLoading: false,
        training: 'full',
        lines: ['embedded: the shipped model, in this process (nothing to probe)'],
      },
    };
  }
  const need = (v: string | undefined, what: string): string => {
    if (!v) throw new WhaleError(`connect ${req.kind}: ${what} is required`);
    return v;
  };

  let sampler: { baseUrl: string; model: string; tokenIds: boolean; logprobs: boolean; loraLoading: boolean; models: string[] } | undefined;
  if (req.kind === 'openai-compatible' || req.kind === 'split') {
    const baseUrl = openAiBase(need(req.url, 'the sampler URL'));
    const http = new JsonHttp({ baseUrl, ...quick });
    const listed = ((await http.get('/models')) as { data?: { id?: string }[] } | undefined)?.data?.map((m) => String(m.id)) ?? [];
    const model = req.model ?? listed[0];
    if (!model) throw new WhaleError(`${baseUrl}/models lists no model; give one with --model`);
    const p = await probeServer(http, { model });
    const loraLoading = await probeLoraLoading(http);
    sampler = { baseUrl, model, tokenIds: p.tokenIds, logprobs: p.logprobs, loraLoading, models: p.models };
    lines.push(
      `${p.summary}; runtime LoRA loading ${loraLoading ? 'yes' : 'no (start vLLM with --enable-lora and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True to publish trained versions)'}`,
    );
  }
  let trainer: { baseUrl: string; update: 'full' | 'lora' | 'unknown'; models: string[]; loraRank?: number } | undefined;
  if (req.kind === 'tinker' || req.kind === 'split') {
    const baseUrl = need(req.kind === 'tinker' ? req.url : req.trainerUrl, req.kind === 'tinker' ? 'the Tinker server URL' : 'the trainer (Tinker server) URL')
      .replace(/\/+$/, '')
      .replace(/\/api\/v1$/, '');
    const client = new TinkerClient({ baseUrl, ...quick });
    const caps = await client.capabilities();
    const models = (caps.supported_models ?? []).map((m) => m.model_name);
    const update = caps.whale?.update === 'full' ? 'full' : caps.whale ? 'unknown' : 'lora';
    const rank = update === 'lora' ? await checkLoraRank(client, req.baseModel ?? models[0], req.loraRank) : undefined;
    trainer = { baseUrl, update, models, loraRank: rank?.rank };
    lines.push(
      `${baseUrl} (Tinker): training ${update === 'unknown' ? 'yes' : update}; models ${models.join(', ') || '(none listed)'}${rank ? `; LoRA rank ${rank.rank} (${rank.note})` : ''}`,
    );
  }

  const remote = req.apiKeyEnv ? { apiKeyEnv: req.apiKeyEnv } : {};
  const tinkerSection = (t: NonNullable<typeof trainer>) => ({
    kind: 'tinker',
    baseUrl: t.baseUrl,
    baseModel: req.baseModel ?? t.models[0] ?? 'embedded',
    tokenizer: req.tokenizer ?? 'embedded',
    ...(t.loraRank !== undefined && t.loraRank !== DEFAULT_LORA_RANK ? { loraRank: t.loraRank } : {}),
    ...remote,
  });
  const samplerSection = (s: NonNullable<typeof sampler>) => ({ kind: 'openai-compatible', baseUrl: s.baseUrl, model: s.model, ...remote });
  let backend: Record<string, unknown>;
  if (req.kind === 'openai-compatible') backend = samplerSection(sampler!);
  else if (req.kind === 'tinker') backend = tinkerSection(trainer!);
  else {
    if (!sampler!.loraLoading)
      throw new WhaleError(
        `the sampler at ${sampler!.baseUrl} has no runtime LoRA loading, so trained versions cannot be published to it: start vLLM with --enable-lora --max-lora-rank N and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True`,
      );
    backend = {
      kind: 'split',
      sampler: samplerSection(sampler!),
      trainer: tinkerSection(trainer!),
      publish: { kind: 'vllm-lora', adapterDir: need(req.adapterDir, 'the adapter folder (as the sampler sees it)') },
    };
  }
  BackendSchema.parse(backend); // what is written must load; defaults stay implicit
  return {
    backend,
    detected: {
      ...(sampler ? { tokenIds: sampler.tokenIds, logprobs: sampler.logprobs, loraLoading: sampler.loraLoading, models: sampler.models } : {}),
      training: trainer ? trainer.update : 'none',
      lines,
    },
  };
}

/** An OpenAI base URL ends in /v1: `http://host:8000` → `http://host:8000/v1`. */
export function openAiBase(url: string): string {
  const u = url.replace(/\/+$/, '');
  return /\/v\d+$/.test(u) ? u : `${u}/v1`;
}

const DEFAULT_LORA_RANK = 32;

/**
 * The LoRA rank the server accepts. The Tinker protocol has no route that tells a server's maximum
 * rank, so a model is created at the wanted rank and unloaded again; SkyRL refuses a rank above its
 * `max_lora_rank` with "LoRA rank R must be between 1 and MAX", which names the maximum. An asked
 * rank above it is bad input; with none asked, the default (32) comes down to the maximum.
 */
async function checkLoraRank(client: TinkerClient, baseModel: string | undefined, asked: number | undefined): Promise<{ rank: number; note: string }> {
  if (!baseModel) return { rank: asked ?? DEFAULT_LORA_RANK, note: 'not checked: the server lists no model' };
  const wanted = asked ?? DEFAULT_LORA_RANK;
  const session = await client.createSession();
  for (const rank of [wanted, undefined]) {
    try {
      const modelId = await client.createModel(session, baseModel, rank ?? 1);
      await client.unloadModel(modelId).catch(() => undefined);
      return { rank: rank ?? 1, note: rank === undefined ? 'the server accepts rank 1 only' : 'accepted by the server' };
    } catch (e) {
      const max = /rank \d+ must be between 1 and (\d+)/i.exec((e as Error).message);
      if (!max)
        throw new WhaleError(`${client.http.baseUrl}: creating a LoRA model of rank ${wanted} to check the server's limits failed: ${(e as Error).message}`);
      const limit = Number(max[1]);
      if (asked !== undefined) {
        throw new InputError(
          { file: '(command line)', field: '--lora-rank' },
          `LoRA rank ${asked} is above the server's maximum ${limit} (${client.http.baseUrl}); give --lora-rank ${limit} or less, or restart SkyRL with --backend-config '{"max_lora_rank": ${asked}}'`,
        );
      }
      return { rank: limit, note: `the server's maximum; the default ${DEFAULT_LORA_RANK} is above it` };
    }
  }
  throw new Error('unreachable');
}
