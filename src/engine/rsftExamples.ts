/**
 * Trajectories → RSFT training examples (REFERENCE.md §1 and §4).
 *
 * The objective trains on the model-generated tokens of EVERY model call of a kept trajectory; the
 * prompt, tool output and anything the harness inserted are context with loss mask 0. Calls are
 * turned into examples by the recording gateway's rule: consecutive calls of one trajectory MERGE
 * into one example when the later call's `promptTokenIds` extend the earlier call's prompt +
 * completion ids exactly (token for token). The tokens in between (the closing `<|end|>` of a
 * reply cut at max_tokens, the tool message, a feedback turn, the next `<|assistant|>` marker) then
 * sit inside the example's completion with mask 0, and each model completion with mask 1. When the
 * ids do not line up — the harness edited the reply before putting it back, dropped or reordered
 * messages, or the call stopped at a stop string whose tokens are in the ids but not in the text —
 * the call starts an example of its own. Either way every model-generated token is trained exactly
 * once, in the context the model actually saw.
 *
 * Calls with `finishReason: 'error'` (the backend failed; nothing was generated) are skipped: they
 * neither contribute tokens nor break or bridge a merge chain by themselves (the next call is tested
 * against the last call that was kept). Examples with no trained token are dropped.
 *
 * Token ids: the embedded backend, vLLM with `return_token_ids` and tinker record them per call. A
 * call without them is an error naming the trajectory and the call, unless `opts.fallback` is given:
 * it re-tokenises the call's messages and completion text. The fallback is an approximation — a
 * re-tokenisation can differ from the ids that were sampled (BPE merges across the prompt/
 * completion boundary, stop-string tokens that are not in the text) — so prefer a backend that
 * returns ids; with the fallback a merge happens only when the re-tokenised ids still line up.
 */
import type { ChatMessage, ModelCall, Trajectory } from '../core/trajectory.js';
import type { RsftLoss, TrainExample } from '../policy/types.js';

/** Re-tokenises a call whose backend gave no token ids (see the file comment for its limits). */
export interface TokenizerFallback {
  /** The prompt ids exactly as the backend renders `messages` for generation (template + generation prompt). */
  encodePrompt(messages: ChatMessage[]): number[];
  /**
   * The completion's ids. For `finishReason: 'stop'` include the end-of-turn token the model emitted
   * (so training teaches it to stop); for 'length' the text's ids alone.
   */
  encodeCompletion(text: string, finishReason: 'stop' | 'length'): number[];
}

/**
 * A fallback for a client-side chat template such as the embedded backend's WordTokenizer
 * (`<bos><|role|>content<|end|>…<|assistant|>`): the prompt rendered with the generation prompt, the
 * completion text encoded, plus `<|end|>` when the call stopped (the sampler includes it in the ids).
 */
export function chatTemplateFallback(tok: {
  encodeChat(messages: readonly ChatMessage[], opts: { addGenerationPrompt?: boolean }): number[];
  encode(text: string): number[];
  readonly endId: number;
}): TokenizerFallback {
  return {
    encodePrompt: (messages) => tok.encodeChat(messages, { addGenerationPrompt: true }),
    encodeCompletion: (text, finish) => [...tok.encode(text), ...(finish === 'stop' ? [tok.endId] : [])],
  };
}

export interface ToExamplesOptions {
  /** Used only for calls that lack token ids; without it such a call is an error. */
  fallback?: TokenizerFallback;
  /** Merge consecutive calls whose prompts extend each other (default true; false = one example per call). */
  merge?: boolean;
}

/** Where an example came from (for logs and tests). */
export interface ExampleSource {
  trajectoryId: string;
  /** ModelCall.index of each call merged into the example, in order. */
  callIndices: number[];
}

export interface ExamplesResult {
  examples: TrainExample[];
  sources: ExampleSource[];
  /** Model calls that contributed trained tokens. */
  calls: number;
  /** Calls skipped because the backend failed (finishReason 'error'). */
  skippedErrorCalls: number;
  /** Calls whose ids came from the tokenizer fallback. */
  fallbackCalls: number;
  /** Σ mask (tokens the objective is averaged over, before the trainer's context cut). */
  trainedTokens: number;
  /** Σ masked completion tokens (tool output, feedback, template markers) kept as context. */
  contextTokens: number;
}

export class MissingTokenIdsError extends Error {
  readonly code = 'missing_token_ids';
  constructor(
    readonly trajectoryId: string,
    readonly callIndex: number,
  ) {
    super(
      `trajectory ${trajectoryId}: model call ${callIndex} has no token ids (the policy backend did not return them); ` +
        'RSFT needs the sampled ids — use a backend that returns them (embedded, vLLM with return_token_ids, tinker) or pass a tokenizer fallback',
    );
    this.name = 'MissingTokenIdsError';
  }
}

function callIds(t: Trajectory, c: ModelCall, fallback: TokenizerFallback | undefined): { prompt: number[]; completion: number[]; viaFallback: boolean } {
  if (c.promptTokenIds && c.completionTokenIds) return { prompt: c.promptTokenIds, completion: c.completionTokenIds, viaFallback: false };
  if (!fallback) throw new MissingTokenIdsError(t.id, c.index);
  return {
    prompt: fallback.encodePrompt(c.messages),
    completion: fallback.encodeCompletion(c.completion, c.finishReason === 'length' ? 'length' : 'stop'),
    viaFallback: true,
  };
}

function extendsExactly(prompt: readonly number[], prefixA: readonly number[], prefixB: readonly number[]): boolean {
  const n = prefixA.length + prefixB.length;
  if (prompt.length < n) return false;
  for (let i = 0; i < prefixA.length; i++) if (prompt[i] !== prefixA[i]) return false;
  for (let i = 0; i < prefixB.length; i++) if (prompt[prefixA.length + i] !== prefixB[i]) return false;
  return true;
}

/**
 * RSFT examples from trajectories (the caller passes only the ones the verifier passed, S⁺).
 * Deterministic: examples come in trajectory order, then call order.
 */
export function trajectoriesToExamples(trajectories: readonly Trajectory[], opts: ToExamplesOptions = {}): ExamplesResult {
  const merge = opts.merge ?? true;
  const out: ExamplesResult = { examples: [], sources: [], calls: 0, skippedErrorCalls: 0, fallbackCalls: 0, trainedTokens: 0, contextTokens: 0 };
  for (const t of trajectories) {
    let cur: { prompt: number[]; completion: number[]; mask: number[]; calls: number[] } | undefined;
    const flush = () => {
      if (!cur) return;
      const trained = cur.mask.reduce((a, m) => a + m, 0);
      if (trained > 0) {
        out.examples.push({ promptTokenIds: cur.prompt, completionTokenIds: cur.completion, lossMask: cur.mask, group: t.id });
        out.sources.push({ trajectoryId: t.id, callIndices: cur.calls });
        out.trainedTokens += trained;
        out.contextTokens += cur.mask.length - trained;
      }
      cur = undefined;
    };
    for (const c of t.modelCalls) {
      if (c.finishReason === 'error') {
        out.skippedErrorCalls++;
        continue;
      }
      const ids = callIds(t, c, opts.fallback);
      if (ids.viaFallback) out.fallbackCalls++;
      if (ids.completion.length > 0) out.calls++;
      if (merge && cur && extendsExactly(ids.prompt, cur.prompt, cur.completion)) {
        const between = ids.prompt.slice(cur.prompt.length + cur.completion.length);
        for (const id of between) {
          cur.completion.push(id);
          cur.mask.push(0);
        }
        for (const id of ids.completion) {
          cur.completion.push(id);
          cur.mask.push(1);
        }
        cur.calls.push(c.index);
        continue;
      }
      flush();
      cur = { prompt: [...ids.prompt], completion: [...ids.completion], mask: ids.completion.map(() => 1), calls: [c.index] };
    }
    flush();
  }
  return out;
}

/**
 * The RSFT objective of one minibatch, given each trained token's log probability
 * (`logprobOf(exampleIndex, completionPosition)`), computed directly from its definition: 'token-mean'
 * (default, the public code) −Σ logp / trained tokens; 'sequence-mean' (REFERENCE.md §1) the mean over
 * trajectories (examples grouped by `group`) of each trajectory's mean NLL. What
 * `PolicyBackend.train` minimises per minibatch; the reference the trainers are tested against.
 */
export function rsftObjective(
  examples: readonly TrainExample[],
  logprobOf: (example: number, position: number) => number,
  loss: RsftLoss = 'token-mean',
): number {
  const byGroup = new Map<string, { nll: number; tokens: number }>();
  examples.forEach((e, i) => {
    const g = byGroup.get(e.group ?? `#${i}`) ?? { nll: 0, tokens: 0 };
    e.lossMask.forEach((m, j) => {
      if (m) {
        g.nll -= logprobOf(i, j);
        g.tokens++;
      }
    });
    byGroup.set(e.group ?? `#${i}`, g);
  });
  const groups = [...byGroup.values()].filter((g) => g.tokens > 0);
  if (groups.length === 0) return NaN;
  if (loss === 'token-mean') return groups.reduce((a, g) => a + g.nll, 0) / groups.reduce((a, g) => a + g.tokens, 0);
  return groups.reduce((a, g) => a + g.nll / g.tokens, 0) / groups.length;
}
