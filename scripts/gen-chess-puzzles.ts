/**
 * Makes the chess domain's shipped sample, resources/data/chess/puzzles.csv, in the Lichess puzzle
 * database's own CSV layout: mate-in-1 and mate-in-2 puzzles found by a small exhaustive mate search
 * (chess.js) in positions reached by seeded random play. As in Lichess, FEN is the position before
 * the opponent's move and Moves starts with that move; for mate-in-2 the first solving move must be
 * the only one that forces mate (checked over every legal move), and the opponent's reply is the
 * defence that leaves the fewest mates. Ratings come from the depth. Deterministic:
 *
 *   node --import tsx scripts/gen-chess-puzzles.ts [--per-depth 160] [--out resources/data/chess/puzzles.csv]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { Chess } from 'chess.js';
import { Rng, hashSeed } from '../src/core/rng.js';

const { values } = parseArgs({
  options: { 'per-depth': { type: 'string', default: '160' }, out: { type: 'string', default: 'resources/data/chess/puzzles.csv' } },
});
const PER_DEPTH = Number(values['per-depth']);
const OUT = path.resolve(values.out!);

// Moves are handled as SAN strings: chess.js's plain move list already marks checks ('+') and mates
// ('#'), and is about 15 times faster than the verbose one (which computes a FEN per move).
function legal(board: Chess): string[] {
  return board.moves().sort();
}

function matingMoves(board: Chess): string[] {
  return legal(board).filter((m) => m.endsWith('#'));
}

/** After `m1`, every reply allows a mate: the replies with their mating answers, or null. */
function forcesMate(board: Chess, m1: string): { reply: string; mates: string[] }[] | null {
  board.move(m1);
  try {
    if (board.isGameOver()) return null;
    const lines: { reply: string; mates: string[] }[] = [];
    for (const r of legal(board)) {
      board.move(r);
      const mates = matingMoves(board);
      board.undo();
      if (mates.length === 0) return null;
      lines.push({ reply: r, mates });
    }
    return lines;
  } finally {
    board.undo();
  }
}

interface Found {
  depth: 1 | 2;
  /** SAN: the solution after the opponent's move. */
  solution: string[];
}

/** The puzzle the side to move has in `board` (no mate in 1 for a mate-in-2), or null. */
function findPuzzle(board: Chess, want: Set<1 | 2>): Found | null {
  const m1s = matingMoves(board);
  if (m1s.length > 0) return want.has(1) ? { depth: 1, solution: [m1s[0]] } : null;
  if (!want.has(2)) return null;
  // Cheap first pass over checking moves; a found line is then checked for uniqueness over all moves.
  const all = legal(board);
  const checks = all.filter((m) => m.endsWith('+'));
  let found: { m1: string; lines: { reply: string; mates: string[] }[] } | null = null;
  for (const m of checks) {
    const lines = forcesMate(board, m);
    if (lines) {
      if (found) return null; // two checking moves force mate: not unique
      found = { m1: m, lines };
    }
  }
  if (!found) return null;
  for (const m of all) if (!checks.includes(m) && forcesMate(board, m)) return null;
  const best = found.lines.slice().sort((a, b) => a.mates.length - b.mates.length || (a.reply < b.reply ? -1 : 1))[0];
  return { depth: 2, solution: [found.m1, best.reply, best.mates[0]] };
}

/** The SAN line as UCI, played from the board's position (the board is left unchanged). */
function toUciLine(board: Chess, line: string[]): string[] {
  const out = line.map((san) => board.move(san).lan);
  for (let i = 0; i < line.length; i++) board.undo();
  return out;
}

function puzzleId(n: number): string {
  // Lichess ids are five characters of [0-9A-Za-z]; ours start with 'w' so they never collide in spirit.
  const alphabet = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
  let x = hashSeed(`whale:chess:puzzle:${n}`);
  let s = 'w';
  for (let i = 0; i < 4; i++) {
    s += alphabet[x % 62];
    x = Math.floor(x / 62);
  }
  return s;
}

function pieces(fen: string): number {
  return fen.split(' ')[0].replace(/[^a-zA-Z]/g, '').length;
}

function csvRow(fields: (string | number)[]): string {
  return fields.map((f) => (/[",\n]/.test(String(f)) ? `"${String(f).replace(/"/g, '""')}"` : String(f))).join(',');
}

const counts = { 1: 0, 2: 0 };
const rows: string[] = ['PuzzleId,FEN,Moves,Rating,RatingDeviation,Popularity,NbPlays,Themes,GameUrl,OpeningTags'];
const seenFen = new Set<string>();
const t0 = Date.now();
for (let game = 0; counts[1] < PER_DEPTH || counts[2] < PER_DEPTH; game++) {
  const rng = new Rng(hashSeed(`whale:chess:sample:game:${game}`));
  const board = new Chess();
  for (let ply = 0; ply < 160 && !board.isGameOver(); ply++) {
    const moves = legal(board);
    // Random play that likes captures and checks reaches open, mating positions sooner than uniform play.
    const sharp = moves.filter((m) => m.includes('x') || m.endsWith('+'));
    const opp = sharp.length > 0 && rng.chance(0.6) ? rng.pick(sharp) : rng.pick(moves);
    const before = board.fen();
    const oppUci = board.move(opp).lan;
    if (ply < 12 || board.isGameOver() || seenFen.has(before)) continue;
    const want = new Set<1 | 2>(([1, 2] as const).filter((d) => counts[d] < PER_DEPTH));
    // Mate-in-1 is everywhere in random play: take only some, so the games also reach mate-in-2 positions.
    if (!want.has(2) || rng.chance(0.5)) {
      const p = findPuzzle(board, want);
      if (!p) continue;
      seenFen.add(before);
      counts[p.depth]++;
      const n = rows.length;
      const prng = new Rng(hashSeed(`whale:chess:sample:rating:${n}`));
      const rating = (p.depth === 1 ? 700 : 1300) + Math.min(200, moves.length * 4) + prng.int(200) - 100;
      const phase = pieces(before) <= 12 ? 'endgame' : ply < 30 ? 'opening' : 'middlegame';
      rows.push(
        csvRow([
          puzzleId(n),
          before,
          [oppUci, ...toUciLine(board, p.solution)].join(' '),
          rating,
          75 + prng.int(30),
          80 + prng.int(21),
          50 + prng.int(2000),
          `${phase} mate mateIn${p.depth} ${p.depth === 1 ? 'oneMove' : 'short'}`,
          `synthetic://whale/chess/game-${game}#${ply}`,
          '',
        ]),
      );
      break; // one puzzle per game keeps the sample varied
    }
  }
}
mkdirSync(path.dirname(OUT), { recursive: true });
writeFileSync(OUT, rows.join('\n') + '\n');
console.log(`wrote ${rows.length - 1} puzzles (mateIn1 ${counts[1]}, mateIn2 ${counts[2]}) to ${OUT} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
