/** Messages between the engine and the worker thread that runs a user's domain module. */
import type { CommandVerifier } from '../sdk.js';
import type { Domain, DomainLimits, RolloutRecord, Split, Task } from '../types.js';

export interface WorkerInit {
  bundle: string;
  origin: string;
  moduleDir: string;
  baseDir: string;
  configFile?: string;
  secret?: string;
  options: unknown;
  /** A replacement worker only serves calls: the tasks were loaded by the first one. */
  skipTasks: boolean;
}

export interface SerializedError {
  /** Our errors are told apart by their code ('input', 'infra'): a bundler may rename classes. */
  name: string;
  code?: string;
  message: string;
  source?: string;
  location?: { file: string; line?: number; column?: number; field?: string };
  detail?: string;
}

/** What the engine keeps of a loaded domain; everything but the functions. */
export interface DomainDescriptor {
  id: string;
  title: string;
  description: string;
  summary?: string;
  regime: Domain['regime'];
  tasks: Record<Split, Task[]> | null;
  tools: { name: string; description: string; parameters: Domain['tools'][number]['parameters'] }[];
  limits: DomainLimits;
  h0Dir: string;
  searchSpace: string;
  hasCheckRules: boolean;
  hasDiagnostics: boolean;
  /** A command verifier runs from the engine directly (a process has its own timeout). */
  verifyCommand?: CommandVerifier;
}

export type FromWorker =
  | { type: 'ready'; descriptor: DomainDescriptor }
  | { type: 'load-error'; error: SerializedError }
  | { type: 'result'; id: number; ok: true; value: unknown }
  | { type: 'result'; id: number; ok: false; error: SerializedError };

export type CallOp = 'verify' | 'checkRules' | 'diagnostics' | 'tool' | 'gold';

export interface CallMessage {
  id: number;
  op: CallOp;
  task: Task;
  rollout?: RolloutRecord & { termination?: string };
  tool?: string;
  args?: unknown;
}

export function serializeError(e: unknown): SerializedError {
  if (!(e instanceof Error)) return { name: 'Error', message: String(e) };
  const x = e as Error & { code?: unknown; source?: string; location?: SerializedError['location']; detail?: string };
  const code = typeof x.code === 'string' ? x.code : x.name === 'InfraError' ? 'infra' : x.name === 'InputError' ? 'input' : undefined;
  return {
    name: x.name,
    message: x.message,
    ...(code ? { code } : {}),
    ...(typeof x.source === 'string' ? { source: x.source } : {}),
    ...(x.location ? { location: x.location, detail: x.detail } : {}),
  };
}
