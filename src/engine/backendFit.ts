/**
 * Whether a backend can run a method, decided from its capabilities before a run starts, so a
 * mismatch is refused before any rollout is paid for.
 */
import type { Method } from '../core/config.js';
import { WhaleError } from '../core/errors.js';
import type { Capabilities } from '../policy/types.js';

/** Methods whose schedule has a weight phase. */
export function methodTrains(method: Method): boolean {
  return method !== 'harness-only';
}

/** Why `caps` cannot run `method` (undefined when it can). */
export function backendMismatch(method: Method, kind: string, caps: Capabilities): string | undefined {
  if (!methodTrains(method)) return undefined;
  if (caps.update === 'none' && !caps.recordsRsft) {
    return `method '${method}' has weight phases, but the '${kind}' backend cannot train (capabilities: update 'none'); use --method harness-only or 'whale eval' with it, a backend that trains ('embedded', 'tinker'), or "recordRsft": true to record the batches for later training`;
  }
  if (!caps.tokenIds) {
    return `method '${method}' trains on the sampled token ids, but the '${kind}' backend does not return them; use a server that does (vLLM with return_token_ids) or --method harness-only`;
  }
  return undefined;
}

export function assertBackendFits(method: Method, kind: string, caps: Capabilities, configFile: string): void {
  const why = backendMismatch(method, kind, caps);
  if (why) throw new WhaleError(`${configFile}: backend: ${why}`);
}
