/**
 * The harness SDK: what candidate code imports as `whale-harness`. A candidate's entry file does
 *
 *   import { defineHarness } from 'whale-harness';
 *   export default defineHarness({ async run(task, ctx) { ...; return { answer }; } });
 *
 * The runtime bundles the entry with this module aliased, so a candidate folder stays self-contained.
 * Everything here is plain data + async calls: the model and the tools are reached through the
 * recording gateway, never directly.
 */

export type KnobValue = string | number | boolean;

export interface HarnessMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
}

export interface ChatOptions {
  /**
   * Ignored: sampling is the run config's, for training and evaluation alike. The gateway uses the
   * config's temperature/top_p and records what a harness asked (`requested_temperature`).
   */
  temperature?: number;
  /** Ignored, like temperature. */
  top_p?: number;
  max_tokens?: number;
  stop?: string[];
}

export interface ChatReply {
  text: string;
  finishReason: 'stop' | 'length';
  usage: { promptTokens: number; completionTokens: number };
}

export interface ToolInfo {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface HarnessTask {
  id: string;
  question: string;
  meta?: Record<string, unknown>;
}

export interface HarnessLimits {
  maxTurns: number;
  maxTokens: number;
  maxTokensPerCall?: number;
  wallMs: number;
}

export interface HarnessContext {
  /** Values of the knobs declared in harness.json (`settings`, else each knob's default). */
  knobs: Record<string, KnobValue>;
  /** The prompt strings declared in harness.json (the only thing FST mode may change). */
  prompts: Record<string, string>;
  /** The domain's tools as the gateway offers them. */
  tools: ToolInfo[];
  limits: HarnessLimits;
  /** One model call through the gateway. Counts against the turn and token limits. */
  chat(messages: HarnessMessage[], opts?: ChatOptions): Promise<ChatReply>;
  /** One tool call through the gateway; returns the observation text. */
  tool(name: string, args: Record<string, unknown>): Promise<string>;
  /** A harness event recorded in the trajectory. */
  log(message: string, data?: unknown): void;
}

export interface HarnessResult {
  /** The final answer, or null when the harness gives up. */
  answer: string | null;
}

export interface HarnessDefinition {
  run(task: HarnessTask, ctx: HarnessContext): Promise<HarnessResult>;
}

export function defineHarness(def: HarnessDefinition): HarnessDefinition {
  if (!def || typeof def.run !== 'function') throw new TypeError('defineHarness needs an object with a run(task, ctx) function');
  return def;
}
