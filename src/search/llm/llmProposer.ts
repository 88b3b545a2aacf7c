/**
 * The `llm` proposer: one tool-use session per round with Claude (Messages API) or an
 * OpenAI-compatible chat-completions model, over the tools of archiveTools.ts.
 *
 * A session ends when the model calls `finish`, when it stops calling tools with nothing left to
 * write, or at a limit: the dollar cap (the smaller of `maxDollarsPerRound` and the run's remaining
 * `budget.dollars`), `maxToolCalls`, `sessionTimeoutMs`, or an API error that retries did not cure.
 * At a limit the round returns what was written so far, with `stopped` saying why; the money spent
 * is always in the Proposal (the ledger's) and, call by call, in the session log file.
 *
 * The dollar cap is enforced BEFORE each call: its worst case (estimated input tokens at the input
 * price + max_tokens at the output price) must fit in what is left; max_tokens shrinks to fit, and
 * when fewer than MIN_CALL_TOKENS would fit the session stops. The input estimate is the previous
 * call's input + output tokens plus what was added since at 3 characters a token (on the high side
 * for English and code), so a session ends at the cap, not past it.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { LlmProposerConfig } from '../../core/config.js';
import { WhaleError } from '../../core/errors.js';
import type { Proposal, ProposeRequest, Proposer } from '../proposer.js';
import { ArchiveTools, TOOL_SPECS } from './archiveTools.js';
import { type ChatClient, createChatClient, type ToolResult } from './clients.js';
import { firstUserMessage, systemPrompt } from './instructions.js';
import { describeError, isTransient, withRetry } from './retry.js';

export const MIN_CALL_TOKENS = 256;
/** The start of Proposal.stopped when the run's dollar budget (not a round's cap) ended the session. */
export const DOLLAR_BUDGET = 'dollar budget';
const CHARS_PER_TOKEN = 3;
/** Characters of a tool's answer the session log keeps (its size is logged in full). */
const LOGGED_OUTPUT_CHARS = 2000;
/** Turns without a tool call the model is reminded of its open work before the session ends. */
const MAX_NUDGES = 2;

export const DEFAULT_KEY_ENV = { anthropic: 'ANTHROPIC_API_KEY', openai: 'OPENAI_API_KEY' } as const;

/** One line of a session log (runs/<id>/proposer/phase-<p>-round-<r>.jsonl). */
export type SessionLogEntry =
  | { kind: 'session_start'; at: string; provider: string; model: string; round: number; count: number; dollarCap: number | null }
  | {
      kind: 'model_call';
      at: string;
      call: number;
      inputTokens: number;
      outputTokens: number;
      dollars: number;
      totalDollars: number;
      maxTokens: number;
      stop: string;
      text: string;
      toolCalls: string[];
      ms: number;
    }
  | { kind: 'retry'; at: string; call: number; attempt: number; status?: number; error: string; sleepMs: number }
  | {
      kind: 'tool_call';
      at: string;
      call: number;
      tool: string;
      args: string;
      argsChars: number;
      /** The tool's answer, clipped (the session transcript shows it folded under its call). */
      output: string;
      outputChars: number;
      isError: boolean;
      ms: number;
    }
  | {
      kind: 'session_end';
      at: string;
      reason: string;
      modelCalls: number;
      toolCalls: number;
      inputTokens: number;
      outputTokens: number;
      dollars: number;
      candidates: number;
    };

/** Sums the dollars a session log file records (what a crashed session spent). */
export function dollarsInLog(entries: readonly { kind?: string; dollars?: number }[]): number {
  return entries.filter((e) => e.kind === 'model_call').reduce((s, e) => s + (typeof e.dollars === 'number' ? e.dollars : 0), 0);
}

export function apiKeyFor(cfg: LlmProposerConfig, env: NodeJS.ProcessEnv = process.env): string {
  const name = cfg.apiKeyEnv ?? DEFAULT_KEY_ENV[cfg.provider];
  const key = env[name];
  if (!key || key.trim() === '') {
    throw new WhaleError(
      `search.llm: the ${cfg.provider} proposer needs an API key in the environment variable ${name} (in VS Code: "WHALE: Set API Key"); it is not set`,
    );
  }
  return key.trim();
}

export class LlmProposer implements Proposer {
  readonly kind = 'llm';

  /** `apiKey`: from apiKeyFor (env vars only), so a missing key fails before any rollout is paid for. */
  constructor(
    private readonly cfg: LlmProposerConfig,
    private readonly apiKey: string,
  ) {}

  static fromConfig(cfg: LlmProposerConfig, env: NodeJS.ProcessEnv = process.env): LlmProposer {
    return new LlmProposer(cfg, apiKeyFor(cfg, env));
  }

  async propose(req: ProposeRequest): Promise<Proposal> {
    const cfg = this.cfg;
    const log: SessionLogEntry[] = [];
    const write = (e: SessionLogEntry) => {
      log.push(e);
      if (req.logFile) appendFileSync(req.logFile, JSON.stringify(e) + '\n');
    };
    if (req.logFile) mkdirSync(dirname(req.logFile), { recursive: true });
    const now = () => new Date().toISOString();
    const cap = Math.min(cfg.maxDollarsPerRound ?? Infinity, req.dollarsLeft ?? Infinity);
    // Which cap binds decides what stops: the run's budget ends the search, a round's cap only the round.
    const capName = (req.dollarsLeft ?? Infinity) <= (cfg.maxDollarsPerRound ?? Infinity) ? DOLLAR_BUDGET : 'round dollar cap';
    write({
      kind: 'session_start',
      at: now(),
      provider: cfg.provider,
      model: cfg.model,
      round: req.round,
      count: req.count,
      dollarCap: Number.isFinite(cap) ? cap : null,
    });

    const tools = new ArchiveTools(req, cfg.toolOutputChars);
    const system = systemPrompt(req);
    const first = firstUserMessage(req);
    const client: ChatClient = await createChatClient({ config: cfg, apiKey: this.apiKey, system, firstUser: first, tools: TOOL_SPECS });

    const timeout = AbortSignal.timeout(cfg.sessionTimeoutMs);
    const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
    const price = (input: number, output: number) => (input * cfg.price.inputPerMillion + output * cfg.price.outputPerMillion) / 1e6;

    let dollars = 0;
    let inTok = 0;
    let outTok = 0;
    let calls = 0;
    let toolCalls = 0;
    let nudges = 0;
    let report: string | undefined;
    let lastText = '';
    let stopped: string | undefined;
    // Estimated input of the next call: the conversation so far, in tokens.
    let estInput = Math.ceil((system.length + first.length + JSON.stringify(TOOL_SPECS).length) / CHARS_PER_TOKEN);

    for (;;) {
      if (timeout.aborted) {
        stopped = `session timeout (${cfg.sessionTimeoutMs} ms)`;
        break;
      }
      let maxTokens = cfg.maxTokens;
      const left = cap - dollars;
      if (Number.isFinite(left) && price(estInput, maxTokens) > left) {
        maxTokens = cfg.price.outputPerMillion > 0 ? Math.floor(((left - price(estInput, 0)) * 1e6) / cfg.price.outputPerMillion) : maxTokens;
        if (maxTokens < MIN_CALL_TOKENS || price(estInput, 0) > left) {
          stopped = `${capName}: $${dollars.toFixed(4)} spent of $${cap.toFixed(4)}; the next call could cost up to $${price(estInput, Math.min(cfg.maxTokens, MIN_CALL_TOKENS)).toFixed(4)}`;
          break;
        }
      }
      calls++;
      const t0 = Date.now();
      let turn;
      try {
        turn = await withRetry(
          () => client.next(maxTokens, signal),
          { maxRetries: cfg.maxRetries, baseMs: cfg.retryBaseMs, maxMs: cfg.retryMaxMs },
          (n) => write({ kind: 'retry', at: now(), call: calls, ...n }),
          signal,
        );
      } catch (e) {
        if (req.signal?.aborted) throw e;
        if (timeout.aborted) {
          stopped = `session timeout (${cfg.sessionTimeoutMs} ms) during model call ${calls}`;
          break;
        }
        if (!isTransient(e)) {
          const why = `model call ${calls} failed: ${describeError(e)}`;
          write({
            kind: 'session_end',
            at: now(),
            reason: why,
            modelCalls: calls,
            toolCalls,
            inputTokens: inTok,
            outputTokens: outTok,
            dollars,
            candidates: tools.written.length,
          });
          // Not something a retry or the next round can cure (a bad key, model name or request).
          throw new WhaleError(`the ${cfg.provider} proposer (${cfg.model}): ${why}`);
        }
        stopped = `API error after ${cfg.maxRetries} retries: ${describeError(e)}`;
        break;
      }
      const cost = price(turn.usage.input, turn.usage.output);
      dollars += cost;
      inTok += turn.usage.input;
      outTok += turn.usage.output;
      if (turn.text.trim()) lastText = turn.text;
      write({
        kind: 'model_call',
        at: now(),
        call: calls,
        inputTokens: turn.usage.input,
        outputTokens: turn.usage.output,
        dollars: cost,
        totalDollars: dollars,
        maxTokens,
        stop: turn.stop,
        text: turn.text.slice(0, 4000),
        toolCalls: turn.toolCalls.map((c) => c.name),
        ms: Date.now() - t0,
      });
      estInput = turn.usage.input + turn.usage.output;

      if (turn.toolCalls.length === 0) {
        const open = tools.pending();
        if ((open.toWrite === 0 && open.toRevise.length === 0) || nudges >= MAX_NUDGES) {
          stopped = open.toWrite > 0 ? `the model stopped with ${open.toWrite} candidate(s) unwritten` : undefined;
          break;
        }
        nudges++;
        const note = `You still have ${open.toWrite} candidate(s) to write${open.toRevise.length ? ` and may revise ${open.toRevise.join(', ')}` : ''}. Use write_candidate, then call finish with your report.`;
        client.say(note);
        estInput += Math.ceil(note.length / CHARS_PER_TOKEN);
        continue;
      }
      const results: ToolResult[] = [];
      for (const call of turn.toolCalls) {
        const c0 = Date.now();
        let out;
        if (toolCalls >= cfg.maxToolCalls) out = { output: `tool-call cap reached (${cfg.maxToolCalls} per session): call finish now`, isError: true };
        else {
          toolCalls++;
          out = await tools.call(call.name, call.args, call.argsError);
        }
        if (out.finished) report = out.finished.report;
        results.push({ id: call.id, output: out.output, isError: out.isError });
        write({
          kind: 'tool_call',
          at: now(),
          call: calls,
          tool: call.name,
          args: call.raw.slice(0, 2000),
          argsChars: call.raw.length,
          output: out.output.slice(0, LOGGED_OUTPUT_CHARS),
          outputChars: out.output.length,
          isError: out.isError,
          ms: Date.now() - c0,
        });
        estInput += Math.ceil((out.output.length + 50) / CHARS_PER_TOKEN);
      }
      client.answer(results);
      if (report !== undefined) break;
      if (toolCalls >= cfg.maxToolCalls) {
        stopped = `tool-call cap (${cfg.maxToolCalls} per session)`;
        break;
      }
    }

    const candidates = tools.written.map((w) => ({
      dir: w.dir,
      parents: w.parents,
      hypothesis: w.supersededBy ? `${w.hypothesis} (failed validation; revised as ${w.supersededBy})` : w.hypothesis,
    }));
    write({
      kind: 'session_end',
      at: now(),
      reason: stopped ?? (report !== undefined ? 'finished' : 'the model stopped'),
      modelCalls: calls,
      toolCalls,
      inputTokens: inTok,
      outputTokens: outTok,
      dollars,
      candidates: candidates.length,
    });
    const footer = `\n\n_${cfg.provider} ${cfg.model}: ${calls} model call(s), ${toolCalls} tool call(s), ${inTok} input / ${outTok} output tokens, $${dollars.toFixed(4)}${stopped ? `; stopped: ${stopped}` : ''}_`;
    return {
      candidates,
      report: (report ?? (lastText || 'The proposer wrote no report.')).trim() + footer,
      dollars,
      log,
      ...(stopped ? { stopped } : {}),
    };
  }
}
