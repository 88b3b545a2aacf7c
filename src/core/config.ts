import { z } from 'zod';
import { readJsonWithSchema } from './jsonFile.js';

export const SamplingSchema = z
  .object({
    temperature: z.number().min(0).max(5).default(1),
    top_p: z.number().gt(0).max(1).default(1),
    max_tokens: z.number().int().positive().default(64),
  })
  .strict();
export type Sampling = z.infer<typeof SamplingSchema>;

export const SandboxLimitsSchema = z
  .object({
    wallMs: z.number().int().positive().default(30_000).describe('wall-clock limit per rollout'),
    cpuMs: z.number().int().positive().default(20_000).describe('CPU-time limit per rollout (harness process)'),
    memoryMb: z.number().int().positive().default(256).describe('heap limit of the harness process'),
    outputBytes: z.number().int().positive().default(1_000_000).describe('bytes the harness may write on the protocol'),
    maxTurns: z.number().int().positive().default(16).describe('model calls per rollout (hard cap, above any harness setting)'),
    maxTokens: z.number().int().positive().default(4096).describe('completion tokens per rollout'),
  })
  .strict();
export type SandboxLimits = z.infer<typeof SandboxLimitsSchema>;

export const BackendSchema = z.discriminatedUnion('kind', [
  z
    .object({
      kind: z.literal('embedded'),
      /** A version id in the local store, or a folder with weights; default: the shipped base model. */
      model: z.string().default('base'),
      maxBatch: z.number().int().positive().default(64),
    })
    .strict(),
  z
    .object({
      kind: z.literal('openai-compatible'),
      baseUrl: z.string().url(),
      model: z.string(),
      apiKeyEnv: z.string().optional(),
    })
    .strict(),
]);
export type BackendConfig = z.infer<typeof BackendSchema>;

export const EvaluationSchema = z
  .object({
    k: z.number().int().positive().default(8).describe('samples per task for mean@k'),
    split: z.enum(['weight', 'harness', 'val', 'test']).default('val'),
    seed: z.number().int().default(0),
    concurrency: z.number().int().positive().default(32).describe('rollouts in flight at once'),
    limit: z.number().int().positive().optional().describe('evaluate only the first N tasks of the split'),
  })
  .strict();
export type EvaluationConfig = z.infer<typeof EvaluationSchema>;

export const DomainRefSchema = z
  .object({
    id: z.string().min(1).describe('a built-in domain (kbqa, ramble) or a path to a domain pack'),
    options: z.record(z.string(), z.unknown()).default({}),
  })
  .strict();

export const WhaleConfigSchema = z
  .object({
    $schema: z.string().optional(),
    name: z.string().min(1),
    domain: DomainRefSchema,
    harness: z.string().min(1).describe('folder of the initial harness h0, relative to the config file'),
    backend: BackendSchema.default({ kind: 'embedded', model: 'base', maxBatch: 64 }),
    sampling: SamplingSchema.default({ temperature: 1, top_p: 1, max_tokens: 64 }),
    evaluation: EvaluationSchema.default({ k: 8, split: 'val', seed: 0, concurrency: 32 }),
    sandbox: SandboxLimitsSchema.default({ wallMs: 30_000, cpuMs: 20_000, memoryMb: 256, outputBytes: 1_000_000, maxTurns: 16, maxTokens: 4096 }),
    store: z.string().default('.whale').describe('run store folder, relative to the config file'),
  })
  .strict();
export type WhaleConfig = z.infer<typeof WhaleConfigSchema>;

export function loadConfig(file: string): WhaleConfig {
  return readJsonWithSchema(file, WhaleConfigSchema);
}
