/**
 * Chess rules for the chess domain, all through chess.js: reading a move written in UCI (`e2e4`,
 * `e7e8q`, as the Lichess database writes them) or SAN (`Nf3`, `exd5`, `O-O`, `Qxf7#`), replaying a
 * line, and checking mate. Runs in the engine only; candidates cannot import chess.js (bundle.ts).
 */
import { Chess, validateFen, type Move } from 'chess.js';

export type Notation = 'uci' | 'san';

const UCI = /^([a-h][1-8])([a-h][1-8])([qrbn])?$/;
// SAN as people and models write it; check/mate marks and annotations are optional.
const SAN = /^(?:[KQRBN][a-h]?[1-8]?x?[a-h][1-8]|[a-h](?:x[a-h])?[1-8](?:=?[QRBNqrbn])?|O-O(?:-O)?|0-0(?:-0)?)[+#]?[!?]{0,2}$/;

/** The notation a token is written in, or null when it is no move at all. */
export function notationOf(token: string): Notation | null {
  if (UCI.test(token)) return 'uci';
  if (SAN.test(token)) return 'san';
  return null;
}

/** A position; throws an Error with chess.js's reason when the FEN is invalid. */
export function position(fen: string): Chess {
  const v = validateFen(fen);
  if (!v.ok) throw new Error(v.error ?? 'invalid FEN');
  return new Chess(fen, { skipValidation: true }); // validated just above
}

/**
 * Plays `token` (UCI or SAN) on `board` and returns the move, or null when it is malformed or
 * illegal there (the board is left unchanged then).
 */
export function playToken(board: Chess, token: string): Move | null {
  const t = token.trim();
  const kind = notationOf(t);
  if (!kind) return null;
  try {
    if (kind === 'uci') {
      const m = UCI.exec(t)!;
      return board.move({ from: m[1], to: m[2], ...(m[3] ? { promotion: m[3] } : {}) });
    }
    return board.move(
      t
        .replace(/^0-0-0/, 'O-O-O')
        .replace(/^0-0/, 'O-O')
        .replace(/[!?]+$/, ''),
      { strict: false },
    );
  } catch {
    return null;
  }
}

/** The move `token` denotes in `fen`, in UCI (`e7e8q`), or null when malformed or illegal. */
export function toUci(fen: string, token: string): string | null {
  const m = playToken(position(fen), token);
  return m ? m.lan : null;
}

/** The move tokens of an answer: split on whitespace and commas; move numbers (`1.`, `2...`) dropped. */
export function answerTokens(answer: string): string[] {
  return answer
    .split(/[\s,;]+/)
    .map((t) => t.replace(/^\d+\.+/, ''))
    .filter((t) => t !== '');
}

export function sideToMove(fen: string): 'white' | 'black' {
  return fen.split(/\s+/)[1] === 'b' ? 'black' : 'white';
}
