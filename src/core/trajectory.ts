import { z } from 'zod';

/** Why a rollout ended. Every trajectory has exactly one. */
export const Termination = z.enum([
  'answered', // the harness returned an answer
  'no_answer', // the harness finished without one
  'turn_limit',
  'token_limit',
  'timeout', // wall-clock limit
  'cpu_limit',
  'memory_limit',
  'output_limit', // too many bytes on the protocol
  'crash', // the harness process died or threw
  'protocol_error', // garbage on the protocol
  'rule_violation', // broke the domain's rules or the sandbox's
  'error', // an error of ours; not the harness's fault
  'infra_error', // a backend, tool service or verifier failed: never scored, never cached, never trained on (see `infra`)
]);
export type Termination = z.infer<typeof Termination>;

export const ChatMessageSchema = z.object({
  role: z.enum(['system', 'user', 'assistant', 'tool']),
  content: z.string(),
  name: z.string().optional(),
});
export type ChatMessage = z.infer<typeof ChatMessageSchema>;

export const ModelCall = z.object({
  index: z.number().int(),
  policyVersion: z.string(),
  messages: z.array(ChatMessageSchema),
  params: z.record(z.string(), z.unknown()).default({}),
  completion: z.string(),
  finishReason: z.enum(['stop', 'length', 'error']),
  promptTokenIds: z.array(z.number().int()).optional(),
  completionTokenIds: z.array(z.number().int()).optional(),
  logprobs: z.array(z.number()).optional(),
  usage: z.object({ promptTokens: z.number().int(), completionTokens: z.number().int() }),
  latencyMs: z.number(),
  /** When the call was sent, in ms since rollout start (absent in older records): places tool events between turns. */
  t: z.number().optional(),
});
export type ModelCall = z.infer<typeof ModelCall>;

export const HarnessEvent = z.object({
  t: z.number(), // ms since rollout start
  type: z.enum(['tool', 'log', 'error', 'limit']),
  name: z.string().optional(),
  args: z.unknown().optional(),
  observation: z.string().optional(),
  message: z.string().optional(),
  data: z.unknown().optional(),
});
export type HarnessEvent = z.infer<typeof HarnessEvent>;

export const Verdict = z.object({
  pass: z.boolean(),
  score: z.number(),
  extracted: z.string().nullable(),
  reason: z.string(),
});
export type Verdict = z.infer<typeof Verdict>;

export const TrajectorySchema = z.object({
  id: z.string(),
  runId: z.string().optional(),
  phase: z.string().optional(),
  domain: z.string(),
  harnessHash: z.string(),
  policyVersion: z.string(),
  taskId: z.string(),
  split: z.string(),
  sampleIndex: z.number().int(),
  seed: z.number().int(),
  modelCalls: z.array(ModelCall),
  events: z.array(HarnessEvent),
  finalAnswer: z.string().nullable(),
  termination: Termination,
  terminationDetail: z.string().optional(),
  verdict: Verdict,
  /** Set with termination 'infra_error': which piece of infrastructure failed, and how. */
  infra: z.object({ source: z.enum(['backend', 'tool', 'verifier', 'runtime']), message: z.string() }).optional(),
  /** The domain's per-rollout diagnostics (retrieval hit, format error, illegal move…), aggregated by the report. */
  diagnostics: z.record(z.string(), z.union([z.number(), z.boolean(), z.string(), z.null()])).optional(),
  timings: z.object({ startedAt: z.string(), wallMs: z.number(), modelMs: z.number(), toolMs: z.number() }),
});
export type Trajectory = z.infer<typeof TrajectorySchema>;
