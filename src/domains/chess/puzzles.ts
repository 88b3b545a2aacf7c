/**
 * Loads Lichess puzzle CSV files (`PuzzleId,FEN,Moves,Rating,RatingDeviation,Popularity,NbPlays,
 * Themes,GameUrl,OpeningTags`) into chess tasks. FEN is the position before the opponent's move; the
 * first UCI move of `Moves` is the opponent's and is played before the task is posed; the rest is the
 * solution (player, opponent, player, …). Every row is replayed with chess.js, so a bad FEN or an
 * illegal move is an InputError naming file:line and the field.
 */
import { z } from 'zod';
import { InputError } from '../../core/errors.js';
import { hashSeed } from '../../core/rng.js';
import { SplitSizes } from '../common.js';
import { readTableFile, rowLocation, type Table } from '../data/tableFile.js';
import { SPLITS, type Json, type Split, type Task } from '../types.js';
import { notationOf, position, sideToMove } from './moves.js';

export const CHESS_ID = 'chess';

/** What task.private holds for chess (never sent to a harness). */
export interface ChessPrivate {
  puzzleId: string;
  /** The position the player faces (after the opponent's move). */
  start: string;
  /** UCI moves from `start`: player, opponent, player, … (always ends on a player move). */
  solution: string[];
  /** The solution's last move mates: any mating last move is accepted. */
  mate: boolean;
  rating: number;
  ratingBand: string;
  themes: string[];
  /** file:line of the row. */
  source: string;
}

const RatingBand = z.tuple([z.number().int(), z.number().int()]).refine(([lo, hi]) => lo < hi, 'a band is [min, max) with min < max');

export const ChessOptions = z
  .object({
    /** Lichess puzzle CSV file(s); relative paths resolve against the project. Default: the shipped sample. */
    files: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
    /** The option name every built-in domain accepts; same as `files`. */
    tasksFile: z.string().min(1).optional(),
    /** Keep only puzzles whose rating is in one of these [min, max) bands; they also label the diagnostics' rating band. */
    ratingBands: z.array(RatingBand).min(1).optional(),
    /** Keep only puzzles with at least one of these Lichess themes (e.g. mateIn1, fork). */
    themes: z.array(z.string().min(1)).min(1).optional(),
    /** Seed of the split assignment (a stable hash of PuzzleId); change it to draw other splits. */
    splitSeed: z.string().default('v1'),
    /** Relative split weights (default weight 0.4, harness/val/test 0.2 each). */
    splitWeights: z
      .object({ weight: z.number().nonnegative(), harness: z.number().nonnegative(), val: z.number().nonnegative(), test: z.number().nonnegative() })
      .partial()
      .strict()
      .optional(),
    /** At most this many tasks per split (the first ones in file order). */
    sizes: SplitSizes.optional(),
    /** Read at most this many rows of each file. */
    maxRows: z.number().int().positive().optional(),
    /** The domain's limits (turns, tokens per call, assistant token budget). */
    limits: z
      .object({ maxTurns: z.number().int().positive(), maxTokensPerCall: z.number().int().positive(), maxAssistantTokens: z.number().int().positive() })
      .partial()
      .strict()
      .optional(),
  })
  .strict();
export type ChessOptions = z.output<typeof ChessOptions>;

export const DEFAULT_SPLIT_WEIGHTS: Record<Split, number> = { weight: 0.4, harness: 0.2, val: 0.2, test: 0.2 };

export function parseChessOptions(options: unknown): ChessOptions {
  const r = ChessOptions.safeParse(options ?? {});
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const field = ['domain', 'options', ...issue.path.map(String)].join('.');
  throw new InputError(
    { file: 'whale.config.json', field },
    `${issue.message} (options of domain 'chess': files, ratingBands, themes, splitSeed, splitWeights, sizes, maxRows, limits)`,
  );
}

/** The band label of a rating: the configured band that holds it, else a 200-point band. */
export function bandOf(rating: number, bands?: [number, number][]): string | null {
  if (bands) {
    const b = bands.find(([lo, hi]) => rating >= lo && rating < hi);
    return b ? `${b[0]}-${b[1]}` : null;
  }
  const lo = Math.floor(rating / 200) * 200;
  return `${lo}-${lo + 200}`;
}

/** A stable split for a puzzle id: the same id and seed always land in the same split. */
export function splitOf(puzzleId: string, seed: string, weights: Record<Split, number>): Split {
  const total = SPLITS.reduce((a, s) => a + weights[s], 0);
  let x = (hashSeed(`whale:chess:split:${seed}:${puzzleId}`) / 4294967296) * total;
  for (const s of SPLITS) {
    if (x < weights[s]) return s;
    x -= weights[s];
  }
  return SPLITS.filter((s) => weights[s] > 0).at(-1) ?? 'weight';
}

function field(row: Record<string, unknown>, name: string): string {
  const v = row[name];
  return v === undefined || v === null ? '' : String(v).trim();
}

/** The fields a filter needs, read without replaying the line (cheap: a big file is filtered first). */
export function puzzleHeader(
  table: Pick<Table, 'file' | 'format'>,
  row: Record<string, unknown>,
  line: number,
): { puzzleId: string; rating: number; themes: string[] } {
  const at = (f: string) => rowLocation(table, line, f);
  const puzzleId = field(row, 'PuzzleId');
  if (puzzleId === '') throw new InputError(at('PuzzleId'), 'missing puzzle id');
  const ratingText = field(row, 'Rating');
  const rating = Number(ratingText);
  if (ratingText === '' || !Number.isInteger(rating)) throw new InputError(at('Rating'), `not an integer rating: '${ratingText}'`);
  return {
    puzzleId,
    rating,
    themes: field(row, 'Themes')
      .split(/\s+/)
      .filter((t) => t !== ''),
  };
}

/** One CSV row as a puzzle, its line replayed with chess.js; throws an InputError naming file:line and the field. */
export function parsePuzzleRow(
  table: Pick<Table, 'file' | 'format'>,
  row: Record<string, unknown>,
  line: number,
): Omit<ChessPrivate, 'ratingBand'> & { fen: string; opponentMove: string; opponentSan: string } {
  const at = (f: string) => rowLocation(table, line, f);
  const { puzzleId, rating, themes } = puzzleHeader(table, row, line);
  const fen = field(row, 'FEN');
  let board;
  try {
    board = position(fen);
  } catch (e) {
    throw new InputError(at('FEN'), `invalid FEN '${fen}': ${(e as Error).message}`);
  }
  const moves = field(row, 'Moves')
    .split(/\s+/)
    .filter((m) => m !== '');
  if (moves.length < 2) throw new InputError(at('Moves'), `needs the opponent's move and at least one solution move, got '${field(row, 'Moves')}'`);
  if (moves.length % 2 !== 0) throw new InputError(at('Moves'), `${moves.length} moves: a puzzle's line must end on the player's move (an even count)`);
  let start = '';
  let opponentSan = '';
  for (const [i, m] of moves.entries()) {
    if (notationOf(m) !== 'uci') throw new InputError(at('Moves'), `move ${i + 1} '${m}' is not a UCI move (e.g. e2e4, e7e8q)`);
    try {
      const played = board.move({ from: m.slice(0, 2), to: m.slice(2, 4), ...(m.length > 4 ? { promotion: m[4] } : {}) });
      if (i === 0) {
        start = played.after;
        opponentSan = played.san;
      }
    } catch {
      throw new InputError(at('Moves'), `move ${i + 1} '${m}' is illegal in ${board.fen()}`);
    }
  }
  return {
    puzzleId,
    fen,
    opponentMove: moves[0],
    opponentSan,
    start,
    solution: moves.slice(1),
    mate: board.isCheckmate(),
    rating,
    themes,
    source: `${table.file}:${line}`,
  };
}

export function taskQuestion(start: string, opponentMoveSan: string): string {
  const side = sideToMove(start);
  return `Chess puzzle. Position (FEN): ${start}\n${side === 'white' ? 'White' : 'Black'} to move; the opponent just played ${opponentMoveSan}. Find the best move.`;
}

/** Reads the puzzle files, filters by band and theme, and assigns splits. */
export async function loadPuzzles(files: string[], opts: ChessOptions, baseDir: string | undefined): Promise<Record<Split, Task[]>> {
  const weights = { ...DEFAULT_SPLIT_WEIGHTS, ...(opts.splitWeights ?? {}) };
  if (SPLITS.every((s) => weights[s] === 0))
    throw new InputError({ file: 'whale.config.json', field: 'domain.options.splitWeights' }, 'at least one split needs a positive weight');
  const out: Record<Split, Task[]> = { weight: [], harness: [], val: [], test: [] };
  const seen = new Map<string, string>();
  for (const file of files) {
    const table = await readTableFile(file, { baseDir, format: 'csv', ...(opts.maxRows ? { limit: opts.maxRows } : {}) });
    for (const { row, line } of table.rows) {
      // Filters and size caps first: only kept rows are replayed (about 1-2 ms each with chess.js).
      const h = puzzleHeader(table, row, line);
      const dup = seen.get(h.puzzleId);
      if (dup) throw new InputError(rowLocation(table, line, 'PuzzleId'), `duplicate puzzle id '${h.puzzleId}' (first at ${dup})`);
      seen.set(h.puzzleId, `${table.file}:${line}`);
      const band = bandOf(h.rating, opts.ratingBands);
      if (band === null) continue;
      if (opts.themes && !h.themes.some((t) => opts.themes!.includes(t))) continue;
      const split = splitOf(h.puzzleId, opts.splitSeed, weights);
      if (opts.sizes?.[split] !== undefined && out[split].length >= opts.sizes[split]) continue;
      const p = parsePuzzleRow(table, row, line);
      const oppSan = p.opponentSan;
      const priv: ChessPrivate = {
        puzzleId: p.puzzleId,
        start: p.start,
        solution: p.solution,
        mate: p.mate,
        rating: p.rating,
        ratingBand: band,
        themes: p.themes,
        source: p.source,
      };
      const id = `chess-${p.puzzleId}`;
      out[split].push({
        id,
        split,
        public: {
          id,
          question: taskQuestion(p.start, oppSan),
          meta: { fen: p.start, sideToMove: sideToMove(p.start), lastMove: p.opponentMove, lastMoveSan: oppSan },
        },
        private: priv as unknown as Json,
      });
    }
  }
  return out;
}
