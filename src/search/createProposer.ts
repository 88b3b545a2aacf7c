import type { SearchConfig } from '../core/config.js';
import { KnobProposer } from './knobProposer.js';
import { LlmProposer } from './llm/llmProposer.js';
import type { Proposer } from './proposer.js';

/**
 * The proposer a run's config asks for. The llm proposer reads its API key from the environment
 * here, so a missing key is an error when the engine opens — before any rollout is paid for.
 * (Its SDK loads only when it first proposes.)
 */
export function createProposer(search: SearchConfig, env: NodeJS.ProcessEnv = process.env): Proposer {
  if (search.proposer === 'knob') return new KnobProposer();
  if (!search.llm) throw new Error("search.proposer is 'llm' but search.llm is missing");
  return LlmProposer.fromConfig(search.llm, env);
}
