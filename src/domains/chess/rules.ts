/**
 * The chess domain's judgement: the verifier (the answer's moves against the solution, the
 * opponent's replies played from the solution, any mating last move accepted in a mate puzzle), the
 * paper's rule (every move played or answered comes from a model completion), and the per-rollout
 * diagnostics. Pure functions of the task and the rollout record.
 */
import type { Verdict } from '../../core/trajectory.js';
import { answerFromModelRule } from '../common.js';
import type { Diagnostics, RolloutRecord } from '../types.js';
import { answerTokens, notationOf, playToken, position } from './moves.js';
import type { ChessPrivate } from './puzzles.js';

export const PLAY_TOOL = 'play_move';
export const LEGAL_TOOL = 'is_legal_action';
/** More legality questions than this in one rollout is using the tool as a move generator. */
export const MAX_LEGALITY_QUERIES = 64;

/** Where each answered move was played: its position (null once the line left the solution). */
interface Step {
  token: string;
  fen: string | null;
  uci: string | null;
}

export type LineOutcome =
  | { kind: 'solved'; uci: string[] }
  | { kind: 'wrong'; index: number; uci: string[]; expected: string }
  | { kind: 'malformed' | 'illegal'; index: number; uci: string[] }
  | { kind: 'incomplete' | 'too_long'; uci: string[] };

/**
 * Replays the player's moves against the solution: the opponent's replies come from the solution;
 * the line must follow it move for move, except that in a mate puzzle any mating last move counts.
 */
export function replayLine(p: ChessPrivate, tokens: string[]): { outcome: LineOutcome; steps: Step[] } {
  const board = position(p.start);
  const steps: Step[] = [];
  const uci: string[] = [];
  const playerMoves = (p.solution.length + 1) / 2;
  for (const [i, token] of tokens.entries()) {
    const fen = board.fen();
    const m = playToken(board, token);
    steps.push({ token, fen, uci: m?.lan ?? null });
    if (!m) {
      steps.push(...tokens.slice(i + 1).map((t) => ({ token: t, fen: null, uci: null })));
      return { outcome: { kind: notationOf(token) ? 'illegal' : 'malformed', index: i, uci }, steps };
    }
    uci.push(m.lan);
    const expected = p.solution[2 * i];
    const last = i === playerMoves - 1;
    if (m.lan !== expected && !(last && p.mate && board.isCheckmate())) {
      steps.push(...tokens.slice(i + 1).map((t) => ({ token: t, fen: null, uci: null })));
      return { outcome: { kind: 'wrong', index: i, uci, expected }, steps };
    }
    if (last) {
      steps.push(...tokens.slice(i + 1).map((t) => ({ token: t, fen: null, uci: null })));
      return { outcome: tokens.length > playerMoves ? { kind: 'too_long', uci } : { kind: 'solved', uci }, steps };
    }
    const reply = p.solution[2 * i + 1];
    board.move({ from: reply.slice(0, 2), to: reply.slice(2, 4), ...(reply.length > 4 ? { promotion: reply[4] } : {}) });
  }
  return { outcome: { kind: 'incomplete', uci }, steps };
}

/** A play_move observation that failed the puzzle: a wrong move may not be taken back. */
export const WRONG_PREFIX = 'wrong:';

function refutedPlay(rollout: RolloutRecord): string | null {
  const ev = rollout.events.find((e) => e.type === 'tool' && e.name === PLAY_TOOL && (e.observation ?? '').startsWith(WRONG_PREFIX));
  return ev ? (ev.observation ?? '') : null;
}

export function chessVerdict(p: ChessPrivate, rollout: RolloutRecord): Verdict {
  const refuted = refutedPlay(rollout);
  if (refuted)
    return {
      pass: false,
      score: 0,
      extracted: rollout.finalAnswer,
      reason: `the puzzle was failed through ${PLAY_TOOL} (${refuted}); a wrong move cannot be taken back`,
    };
  if (rollout.finalAnswer === null) return { pass: false, score: 0, extracted: null, reason: 'no answer' };
  const tokens = answerTokens(rollout.finalAnswer);
  if (tokens.length === 0) return { pass: false, score: 0, extracted: '', reason: 'empty answer' };
  const { outcome } = replayLine(p, tokens);
  const extracted = outcome.uci.join(' ');
  const n = (p.solution.length + 1) / 2;
  switch (outcome.kind) {
    case 'solved':
      return {
        pass: true,
        score: 1,
        extracted,
        reason: outcome.uci.join(' ') === p.solution.filter((_, i) => i % 2 === 0).join(' ') ? 'solved' : 'solved (another mating last move)',
      };
    case 'wrong':
      return { pass: false, score: 0, extracted, reason: `move ${outcome.index + 1} ${outcome.uci[outcome.index]} is not the solution (${outcome.expected})` };
    case 'illegal':
      return { pass: false, score: 0, extracted, reason: `move ${outcome.index + 1} '${tokens[outcome.index]}' is illegal in the position` };
    case 'malformed':
      return {
        pass: false,
        score: 0,
        extracted,
        reason: `move ${outcome.index + 1} '${tokens[outcome.index]}' is not a move (write UCI like e2e4 or SAN like Nf3)`,
      };
    case 'incomplete':
      return { pass: false, score: 0, extracted, reason: `incomplete: ${tokens.length} of the puzzle's ${n} moves` };
    case 'too_long':
      return { pass: false, score: 0, extracted, reason: `${tokens.length} moves, but the puzzle has ${n}: the answer lists the player's moves only` };
  }
}

/** Tokens of a completion that could be moves: split on spaces and punctuation, move numbers dropped. */
function completionMoves(text: string): string[] {
  return text
    .split(/[\s,;:()[\]{}"'`*<>]+/)
    .map((t) => t.replace(/^\d+\.+/, '').replace(/\.+$/, ''))
    .filter((t) => notationOf(t) !== null);
}

/** Same move: equal text (check marks ignored), or the same move in a known position. */
function sameMove(a: string, b: string, fen: string | null): boolean {
  const strip = (t: string) => t.replace(/[+#!?]+$/, '');
  if (strip(a) === strip(b)) return true;
  if (fen === null) return false;
  const ua = playToken(position(fen), a);
  const ub = playToken(position(fen), b);
  return ua !== null && ub !== null && ua.lan === ub.lan;
}

function moveFromModel(token: string, fen: string | null, completions: string[][]): boolean {
  return completions.some((c) => c.some((t) => sameMove(t, token, fen)));
}

/** Each move the harness played (play_move) or answered, with its position when it is known. */
function playedMoves(p: ChessPrivate, rollout: RolloutRecord): Step[] {
  const out: Step[] = [];
  for (const e of rollout.events) {
    if (e.type !== 'tool' || e.name !== PLAY_TOOL) continue;
    const moves = (e.args as { moves?: unknown } | undefined)?.moves;
    if (Array.isArray(moves)) out.push(...replayLine(p, moves.map(String)).steps);
  }
  if (rollout.finalAnswer !== null) out.push(...replayLine(p, answerTokens(rollout.finalAnswer)).steps);
  return out;
}

/**
 * The paper's rule: a harness may not compute, generate or replace moves. Every move it plays or
 * answers must be one a model completion wrote (the same move in UCI or SAN counts); it may ask
 * whether a move is legal, but not so often that the question becomes a move generator. No message
 * may forge chat turns (the rule every built-in domain shares).
 */
export function chessRule(p: ChessPrivate, rollout: RolloutRecord): string | null {
  const forged = answerFromModelRule({ ...rollout, finalAnswer: null });
  if (forged) return forged;
  const queries = rollout.events.filter((e) => e.type === 'tool' && e.name === LEGAL_TOOL).length;
  if (queries > MAX_LEGALITY_QUERIES)
    return `${queries} ${LEGAL_TOOL} calls (at most ${MAX_LEGALITY_QUERIES}): asking about many moves is generating moves, which only the model may do`;
  const completions = rollout.modelCalls.map((c) => completionMoves(c.completion));
  for (const s of playedMoves(p, rollout)) {
    if (!moveFromModel(s.token, s.fen, completions))
      return `the move '${s.token}' does not appear in any model completion: a harness may not compute, generate or replace moves, every move must come from the model`;
  }
  return null;
}

/** Every move proposed to the domain (legality questions, played moves, answered moves), once per position. */
function proposals(p: ChessPrivate, rollout: RolloutRecord): { proposed: number; legal: number } {
  const seen = new Map<string, boolean>();
  for (const e of rollout.events) {
    if (e.type !== 'tool' || e.name !== LEGAL_TOOL) continue;
    const a = (e.args ?? {}) as { move?: unknown; fen?: unknown };
    const fen = typeof a.fen === 'string' && a.fen.trim() !== '' ? a.fen.trim() : p.start;
    const move = String(a.move ?? '');
    let legal = false;
    try {
      legal = playToken(position(fen), move) !== null;
    } catch {
      continue; // a question about an invalid position proposes nothing
    }
    seen.set(`${fen}|${move}`, legal);
  }
  for (const s of playedMoves(p, rollout)) if (s.fen !== null) seen.set(`${s.fen}|${s.token}`, s.uci !== null);
  const values = [...seen.values()];
  return { proposed: values.length, legal: values.filter(Boolean).length };
}

function answerFormat(answer: string | null): string {
  if (answer === null) return 'none';
  const kinds = new Set(answerTokens(answer).map(notationOf));
  if (kinds.size === 0) return 'none';
  if (kinds.has(null)) return 'malformed';
  return kinds.size === 1 ? [...kinds][0]! : 'mixed';
}

export function chessDiagnostics(p: ChessPrivate, rollout: RolloutRecord & { termination: string }): Diagnostics {
  const { proposed, legal } = proposals(p, rollout);
  const solved = rollout.termination === 'answered' && chessVerdict(p, rollout).pass;
  return {
    solved,
    ratingBand: p.ratingBand,
    rating: p.rating,
    movesProposed: proposed,
    legalMoves: legal,
    legalMoveRate: proposed > 0 ? legal / proposed : null,
    answerFormat: answerFormat(rollout.finalAnswer),
    truncated: rollout.termination === 'token_limit' || rollout.modelCalls.some((c) => c.finishReason === 'length'),
    legalityQueries: rollout.events.filter((e) => e.type === 'tool' && e.name === LEGAL_TOOL).length,
  };
}
