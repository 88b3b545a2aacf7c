import type { Verdict, ModelCall, HarnessEvent } from '../core/trajectory.js';

export type Split = 'weight' | 'harness' | 'val' | 'test';
export const SPLITS: readonly Split[] = ['weight', 'harness', 'val', 'test'];

export type Json = string | number | boolean | null | Json[] | { [k: string]: Json };

/** What a harness is allowed to see of a task: never the answer, never verifier data. */
export interface PublicTask {
  id: string;
  /** The task text as a user would pose it. */
  question: string;
  /** Domain-specific public fields (e.g. hop count). */
  meta?: { [k: string]: Json };
}

/** A task as the engine holds it: the public view plus private data that stays in the parent process. */
export interface Task {
  id: string;
  split: Split;
  public: PublicTask;
  /** Answers, the per-task environment (e.g. a knowledge base), verifier data. Never sent to a harness. */
  private: Json;
}

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON schema of the arguments object. */
  parameters: { [k: string]: Json };
  /** Runs in the parent (gateway) with access to the task's private environment. Returns the observation text. */
  call(args: unknown, task: Task): string | Promise<string>;
  // A call that throws InfraError (core/errors.ts) — the service is down — makes the rollout an
  // infrastructure failure (source 'tool'); any other throw is reported to the harness as a tool error.
}

/** The part of a finished rollout a verifier or rule may read. */
export interface RolloutRecord {
  finalAnswer: string | null;
  modelCalls: ModelCall[];
  events: HarnessEvent[];
}

export interface DomainLimits {
  /** Completion tokens per model call, enforced by the gateway whatever the harness asks. */
  maxTokensPerCall?: number;
  /** Model calls per rollout, enforced by the gateway. */
  maxTurns?: number;
  /** Completion tokens over the whole rollout (the paper's assistant token budget), enforced by the gateway. */
  maxAssistantTokens?: number;
  /** Wall-clock limit of one verify() call; past it the rollout is an infrastructure failure (verifier). */
  verifierTimeoutMs?: number;
}

/** Per-rollout diagnostics a domain reports (retrieval hit, format error, illegal move…); the report aggregates them. */
export type Diagnostics = Record<string, number | boolean | string | null>;

export type Regime = 'harness-dominated' | 'weight-dominated' | 'mixed' | 'unknown';

export interface Domain {
  id: string;
  title: string;
  description: string;
  /** Which side the domain is built to stress: the harness or the weights (user domains: usually 'unknown'). */
  regime: Regime;
  splitSizes: Record<Split, number>;
  /** Deterministic: the same split always yields the same tasks in the same order. */
  tasks(split: Split): Task[];
  tools: ToolSpec[];
  /**
   * The verdict. May be async (a command verifier, an LLM judge). A throw, or no answer within
   * limits.verifierTimeoutMs, makes the rollout an infrastructure failure (source 'verifier'): not scored.
   */
  verify(task: Task, rollout: RolloutRecord): Verdict | Promise<Verdict>;
  /** A domain rule the rollout broke (e.g. the answer did not come from the model), or null. */
  checkRules?(task: Task, rollout: RolloutRecord): string | null | Promise<string | null>;
  /** The answer a correct rollout gives, when the domain can say (`whale domain check` runs the verifier on it); never shown to a harness. */
  gold?(task: Task): string | null | Promise<string | null>;
  /** Per-rollout diagnostics, stored on the trajectory (also for rollouts that were not answered). */
  diagnostics?(task: Task, rollout: RolloutRecord & { termination: string }): Diagnostics | Promise<Diagnostics>;
  limits: DomainLimits;
  /**
   * Identifies what decides a verdict besides the public tasks — the domain's code, its verifier, its
   * private task data — for users' domains, whose files change: cached results are reused only under
   * the same fingerprint. Built-ins (versioned with WHALE) leave it unset.
   */
  fingerprint?: string;
  /** Absolute path of the initial harness h0 folder. */
  h0Dir: string;
  /** Plain-text description of what candidates may change, for proposers. */
  searchSpace: string;
}
