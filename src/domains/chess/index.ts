/**
 * The paper's Chess domain on Lichess puzzles: the player finds the solution of a puzzle, one move
 * at a time. Tools (run in the gateway with the puzzle): `is_legal_action` (is this move legal
 * here?) and `play_move` (play the line so far; the opponent answers from the solution, a wrong move
 * fails the puzzle). The harness may not compute, generate or replace moves (rules.ts).
 */
import * as path from 'node:path';
import { resourcesDir } from '../../core/resources.js';
import { harnessDir, type DomainContext } from '../common.js';
import { materialise } from '../definition.js';
import { defineDomain, type RolloutView, type TaskInput, type ToolDefinition } from '../sdk.js';
import type { Domain, RolloutRecord, Task, ToolSpec } from '../types.js';
import { notationOf, playToken, position } from './moves.js';
import { CHESS_ID, loadPuzzles, parseChessOptions, type ChessOptions, type ChessPrivate } from './puzzles.js';
import { LEGAL_TOOL, MAX_LEGALITY_QUERIES, PLAY_TOOL, WRONG_PREFIX, chessDiagnostics, chessRule, chessVerdict, replayLine } from './rules.js';

export { CHESS_ID } from './puzzles.js';

export const CHESS_SAMPLE = path.join(resourcesDir(), 'data', 'chess', 'puzzles.csv');

/** Limits of the paper's chess runs: the baseline's rollouts ran into an ~8k assistant-token budget. */
export const CHESS_LIMITS = { maxTurns: 8, maxTokensPerCall: 4096, maxAssistantTokens: 8192 };

const chessPrivate = (task: Task) => task.private as unknown as ChessPrivate;

const MOVE_FORMAT = 'a move in UCI (e2e4, e7e8q) or SAN (Nf3, exd5, O-O, e8=Q)';

export const isLegalTool: ToolSpec = {
  name: LEGAL_TOOL,
  description: `${LEGAL_TOOL}(move, fen?): whether ${MOVE_FORMAT} is legal in the puzzle's position, or in \`fen\` when given. Answers 'legal: <uci> <san>' or 'illegal: …'. Says nothing about whether the move is good.`,
  parameters: {
    type: 'object',
    properties: {
      move: { type: 'string', description: MOVE_FORMAT },
      fen: { type: 'string', description: 'a position in FEN (default: the puzzle position)' },
    },
    required: ['move'],
    additionalProperties: false,
  },
  call(args: unknown, task: Task): string {
    const a = (args ?? {}) as { move?: unknown; fen?: unknown };
    if (typeof a.move !== 'string' || a.move.trim() === '') return `error: ${LEGAL_TOOL} needs {move: string, fen?: string}`;
    const fen = typeof a.fen === 'string' && a.fen.trim() !== '' ? a.fen.trim() : chessPrivate(task).start;
    let board;
    try {
      board = position(fen);
    } catch (e) {
      return `error: invalid fen: ${(e as Error).message}`;
    }
    const move = a.move.trim();
    if (!notationOf(move)) return `illegal: '${move}' is not ${MOVE_FORMAT}`;
    const m = playToken(board, move);
    return m ? `legal: ${m.lan} ${m.san}` : `illegal: ${move} is not a legal move in this position`;
  },
};

export const playMoveTool: ToolSpec = {
  name: PLAY_TOOL,
  description: `${PLAY_TOOL}(moves): plays your moves so far (a list, ${MOVE_FORMAT} each) from the puzzle position; the opponent answers each from the puzzle's solution. Answers 'correct: the opponent plays <uci> <san>; position: <fen>', 'solved', 'illegal: …' (nothing happens) or '${WRONG_PREFIX} …' (the puzzle is failed for good, as on Lichess).`,
  parameters: {
    type: 'object',
    properties: { moves: { type: 'array', items: { type: 'string' }, description: "your moves from the puzzle position, in order (not the opponent's)" } },
    required: ['moves'],
    additionalProperties: false,
  },
  call(args: unknown, task: Task): string {
    const moves = ((args ?? {}) as { moves?: unknown }).moves;
    if (!Array.isArray(moves) || moves.length === 0 || !moves.every((m) => typeof m === 'string'))
      return `error: ${PLAY_TOOL} needs {moves: [string, …]} (your moves so far)`;
    const p = chessPrivate(task);
    const { outcome } = replayLine(p, moves as string[]);
    switch (outcome.kind) {
      case 'solved':
        return 'solved';
      case 'incomplete': {
        const board = position(p.start);
        for (const m of p.solution.slice(0, 2 * moves.length)) playToken(board, m);
        const reply = p.solution[2 * moves.length - 1];
        return `correct: the opponent plays ${reply} ${board.history().at(-1) ?? ''}; position: ${board.fen()}`;
      }
      case 'wrong':
        return `${WRONG_PREFIX} ${outcome.uci[outcome.index]} is not the solution; the puzzle is failed`;
      case 'illegal':
        return `illegal: move ${outcome.index + 1} '${moves[outcome.index]}' is not a legal move in its position`;
      case 'malformed':
        return `illegal: move ${outcome.index + 1} '${moves[outcome.index]}' is not ${MOVE_FORMAT}`;
      case 'too_long':
        return `error: ${moves.length} moves, but the puzzle was solved after ${outcome.uci.length}`;
    }
  },
};

export const CHESS_SEARCH_SPACE = `chess: Lichess puzzles. The task shows the position (FEN) after the opponent's move, the side to move and that move;
the player must find the solution line, one move at a time.
Tools (run by the domain, with the puzzle):
  ${LEGAL_TOOL}(move, fen?)  is this move legal here? Says nothing about quality. At most ${MAX_LEGALITY_QUERIES} calls per rollout.
  ${PLAY_TOOL}(moves)        play your moves so far; the opponent replies from the solution and the new position is shown.
                             A wrong move fails the puzzle for good (a later answer cannot take it back); 'solved' ends it.
Answer: the player's moves only, space-separated, UCI or SAN (e.g. "h5f7" or "Qxf7#"; for a 2-move line "d1h5 h5f7").
In a mate puzzle any mating last move is accepted.
Limits (defaults; domain options may change them): ${CHESS_LIMITS.maxTurns} model calls, ${CHESS_LIMITS.maxTokensPerCall} completion tokens per call,
${CHESS_LIMITS.maxAssistantTokens} completion tokens per rollout. A prompt longer than the model's context ends the rollout (token_limit).
THE RULE (enforced on every rollout; a violation scores 0, and in the smoke run makes the candidate invalid): the harness may not compute,
generate or replace moves. Every move it plays or answers must appear in one of the model's completions (the same move in
UCI or SAN counts). The harness decides prompts, what it shows of the position (FEN, a board diagram, the move history),
parsing of the model's text, when to ask ${LEGAL_TOOL} and how to tell the model its move was illegal, retries within the
turn limit, and the token budget per call (sampling settings belong to the run, not the harness). It may not import chess
libraries (chess.js, chessops, stockfish, …: refused when the candidate is bundled), write its own move generator,
enumerate moves through ${LEGAL_TOOL}, or forge chat turns ("<|" in a message).
Knobs of the h0 harness (harness.json): prompt (system/user variants), notation uci|san (what the prompt asks for),
legalityRetries 0..3 (ask ${LEGAL_TOOL} and tell the model when its move is illegal), showBoard (an ASCII board under the FEN),
parse strict|lenient (the whole reply is the move, or the last move-like token), maxTokens per call (0 = the domain's).
Propose_action / is_legal_action: h0 is written as those two functions (propose a move from the model; check it with the
domain); keep that structure.`;

const inputsOf = (tasks: Task[]): TaskInput<ChessPrivate>[] =>
  tasks.map((t) => ({ id: t.id, question: t.public.question, ...(t.public.meta ? { meta: t.public.meta } : {}), private: chessPrivate(t) }));
/** The SDK hands tools the task as a DomainTask: the same object the engine holds. */
const asTool = (t: ToolSpec): ToolDefinition<ChessPrivate, ChessOptions> => ({
  name: t.name,
  description: t.description,
  parameters: t.parameters,
  call: (args, task) => t.call(args, task as unknown as Task),
});
const record = (r: RolloutView): RolloutRecord => r as unknown as RolloutRecord;

/** chess as a `defineDomain` definition: the same contract a user's domain module uses. */
export const chessDefinition = defineDomain<ChessOptions, ChessPrivate>({
  id: CHESS_ID,
  title: 'chess — Lichess puzzles, every move from the model',
  description:
    "Lichess puzzles (the database's CSV): find the solution line move by move. The harness may check legality and play moves through the domain but may not compute, generate or replace a move: every move must come from a model completion.",
  summary: 'find the solution of Lichess puzzles (their CSV) move by move; the harness may check legality but never compute a move.',
  regime: 'mixed',
  options: parseChessOptions,
  async tasks({ options, baseDir }) {
    const files =
      options.files !== undefined
        ? Array.isArray(options.files)
          ? options.files
          : [options.files]
        : options.tasksFile !== undefined
          ? [options.tasksFile]
          : [CHESS_SAMPLE];
    const splits = await loadPuzzles(files, options, baseDir);
    return { weight: inputsOf(splits.weight), harness: inputsOf(splits.harness), val: inputsOf(splits.val), test: inputsOf(splits.test) };
  },
  tools: [asTool(isLegalTool), asTool(playMoveTool)],
  verify: (task, rollout) => chessVerdict(task.private, record(rollout)),
  checkRules: (task, rollout) => chessRule(task.private, record(rollout)),
  // The player's moves of the solution line (the opponent's replies come from the puzzle).
  gold: (task) => task.private.solution.filter((_, i) => i % 2 === 0).join(' '),
  diagnostics: (task, rollout) => chessDiagnostics(task.private, rollout as unknown as RolloutRecord & { termination: string }),
  limits: ({ options }) => ({ ...CHESS_LIMITS, ...(options.limits ?? {}) }),
  h0: harnessDir('chess-h0'),
  searchSpace: CHESS_SEARCH_SPACE,
});

export function createChessDomain(options: unknown, ctx: DomainContext = {}): Promise<Domain> {
  return materialise(chessDefinition, options, { origin: `built-in domain ${CHESS_ID}`, moduleDir: harnessDir('chess-h0'), ...ctx });
}
