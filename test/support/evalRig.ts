// What the evaluation tests share: a harness runtime with the default limits and sampling, and
// evaluate()'s options for a domain's h0 on the val split under the backend's current policy.
import { ResultStore } from '../../src/archive/resultStore.js';
import { SandboxLimitsSchema, SamplingSchema } from '../../src/core/config.js';
import type { Domain } from '../../src/domains/types.js';
import type { EvaluateOptions } from '../../src/engine/evaluate.js';
import { HarnessRuntime, type PreparedHarness } from '../../src/harness/runtime.js';
import type { PolicyBackend } from '../../src/policy/types.js';

export function defaultRuntime(domain: Domain, backend: PolicyBackend, cacheDir: string, concurrency: number): HarnessRuntime {
  return new HarnessRuntime({ domain, backend, limits: SandboxLimitsSchema.parse({}), sampling: SamplingSchema.parse({}), concurrency, cacheDir });
}

type Settings = Pick<EvaluateOptions<PreparedHarness>, 'k' | 'seed' | 'concurrency'> & Partial<EvaluateOptions<PreparedHarness>>;

/** `settings` says k, seed and concurrency, and may change anything else. */
export function h0EvalOptions(
  storeDir: string,
  runner: HarnessRuntime,
  domain: Domain,
  backend: PolicyBackend,
  settings: Settings,
): EvaluateOptions<PreparedHarness> {
  return {
    store: new ResultStore(storeDir),
    runner,
    domain,
    harnessDir: domain.h0Dir,
    policyVersion: backend.currentVersion(),
    split: 'val',
    sampling: SamplingSchema.parse({}),
    limits: SandboxLimitsSchema.parse({}),
    ...settings,
  };
}
