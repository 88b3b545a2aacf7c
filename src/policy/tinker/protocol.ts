/**
 * The Tinker wire format as the client uses it and the embedded server serves it (pinned against
 * SkyRL's `skyrl.tinker.api` server; REFERENCE.md §4). Every training or sampling call answers
 * `{future_id, request_id}`; `POST /api/v1/retrieve_future {request_id}` waits for the result and
 * answers 408 when it is not ready yet (the client polls again).
 *
 * Our one addition: POSTs carry an `Idempotency-Key` header; the embedded server answers a repeated
 * key with the first request's future, so a retried `optim_step` is applied once.
 */
import { z } from 'zod';

export const API = '/api/v1';

export const ModelInputSchema = z.object({
  chunks: z.array(z.object({ type: z.string().optional(), tokens: z.array(z.number().int()) })).min(1),
});
export type ModelInput = z.infer<typeof ModelInputSchema>;

const TensorData = z.object({ data: z.array(z.number()), dtype: z.string().optional(), shape: z.array(z.number()).optional() });

export const DatumSchema = z.object({
  model_input: ModelInputSchema,
  loss_fn_inputs: z.object({ target_tokens: TensorData, weights: TensorData.optional() }).passthrough(),
});
export type Datum = z.infer<typeof DatumSchema>;

export const CreateSessionBody = z.object({
  tags: z.array(z.string()).default([]),
  user_metadata: z.record(z.string(), z.unknown()).nullish(),
  sdk_version: z.string().default('whale'),
});
export const CreateModelBody = z.object({
  session_id: z.string(),
  base_model: z.string(),
  lora_config: z.object({ rank: z.number().int().nonnegative(), seed: z.number().int().nullish() }).optional(),
});
export const GetInfoBody = z.object({ model_id: z.string() });
export const ForwardBackwardBody = z.object({
  model_id: z.string(),
  // The SDK's forward() (>= 0.25: forward_backward with forward_only); nothing is accumulated.
  forward_only: z.boolean().optional(),
  forward_backward_input: z.object({ data: z.array(DatumSchema).min(1), loss_fn: z.string(), loss_fn_config: z.record(z.string(), z.number()).nullish() }),
});
export const AdamParamsSchema = z.object({
  learning_rate: z.number().min(0).default(1e-4),
  beta1: z.number().min(0).lt(1).default(0.9),
  beta2: z.number().min(0).lt(1).default(0.95),
  eps: z.number().gt(0).default(1e-12),
  weight_decay: z.number().min(0).default(0),
});
export type AdamParams = z.infer<typeof AdamParamsSchema>;
export const OptimStepBody = z.object({ model_id: z.string(), adam_params: AdamParamsSchema });
export const SaveForSamplerBody = z.object({
  model_id: z.string(),
  path: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .max(255)
    .nullish(),
  // The official SDK's save_weights_and_get_sampling_client: answer a sampling session for the saved weights.
  sampling_session_seq_id: z.number().int().nullish(),
  seq_id: z.number().int().nullish(),
});
export const CreateSamplingSessionBody = z.object({
  session_id: z.string(),
  sampling_session_seq_id: z.number().int().nullish(),
  base_model: z.string().nullish(),
  model_path: z.string().nullish(),
});
export const SamplingParamsSchema = z.object({
  max_tokens: z.number().int().positive(),
  seed: z.number().int().nullish(),
  stop: z.union([z.array(z.string()), z.array(z.number().int())]).nullish(),
  temperature: z.number().min(0).default(1),
  top_k: z.number().int().default(-1),
  top_p: z.number().gt(0).max(1).default(1),
});
export type SamplingParams = z.infer<typeof SamplingParamsSchema>;
export const SampleBody = z.object({
  num_samples: z.number().int().positive().default(1),
  prompt: ModelInputSchema,
  sampling_params: SamplingParamsSchema,
  base_model: z.string().nullish(),
  model_path: z.string().nullish(),
  sampling_session_id: z.string().nullish(),
});
export const RetrieveFutureBody = z.object({ request_id: z.string() });

export interface FutureResponse {
  future_id: string;
  request_id: string;
  status: string;
}

export interface ForwardBackwardOutput {
  loss_fn_output_type: string;
  loss_fn_outputs: { logprobs: { data: number[] } }[];
  metrics: Record<string, number>;
}

export interface SampleOutput {
  sequences: { tokens: number[]; logprobs: number[]; stop_reason: 'stop' | 'length' }[];
  prompt_logprobs?: number[] | null;
}

/** `tinker://<model_id>/sampler_weights/<checkpoint>` ↔ its parts. */
export function samplerPath(modelId: string, checkpoint: string): string {
  return `tinker://${modelId}/sampler_weights/${checkpoint}`;
}

export function parseSamplerPath(path: string): { modelId: string; checkpoint: string } | undefined {
  const m = /^tinker:\/\/([A-Za-z0-9_-]+)\/(?:sampler_weights\/)?([A-Za-z0-9_.-]+)$/.exec(path);
  return m ? { modelId: m[1], checkpoint: m[2] } : undefined;
}

/** The tokens of a model input, chunks concatenated. */
export function inputTokens(input: ModelInput): number[] {
  return input.chunks.flatMap((c) => c.tokens);
}
