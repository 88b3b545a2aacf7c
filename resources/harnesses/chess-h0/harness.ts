/**
 * chess harness h0, shaped as the paper's contract: `proposeAction` asks the model for the next move
 * and reads it from the model's text; `isLegalAction` asks the domain (tool is_legal_action) whether
 * that move is legal. The harness never computes a move: it plays only moves the model wrote, through
 * the domain's play_move tool, which answers with the opponent's reply until the puzzle is solved
 * or failed. Self-contained: imports only the SDK (chess libraries are refused by the bundler).
 */
import { defineHarness, type HarnessContext, type HarnessMessage } from 'whale-harness';

// A move as UCI (e2e4, e7e8q) or SAN (Nf3, exd5, O-O, e8=Q, Qxf7#).
const MOVE = /^(?:[a-h][1-8][a-h][1-8][qrbn]?|[KQRBN][a-h]?[1-8]?x?[a-h][1-8][+#]?|[a-h](?:x[a-h])?[1-8](?:=?[QRBNqrbn])?[+#]?|O-O(?:-O)?[+#]?)$/;

interface State {
  fen: string;
  side: string;
  lastMove: string;
  /** The player's moves played so far. */
  played: string[];
}

function boardDiagram(fen: string): string {
  const rows = fen.split(' ')[0].split('/');
  return rows.map((r, i) => `${8 - i} ${r.replace(/\d/g, (d) => '.'.repeat(Number(d))).split('').join(' ')}`).join('\n') + '\n  a b c d e f g h';
}

function fill(template: string, s: State, showBoard: boolean): string {
  const vars: Record<string, string> = { fen: s.fen, side: s.side, lastMove: s.lastMove, board: showBoard ? boardDiagram(s.fen) + '\n' : '' };
  return template.replace(/\{(\w+)\}/g, (m, k: string) => vars[k] ?? m);
}

/** The move in the model's text: the whole reply (strict) or the last move-like token (lenient). */
function parseMove(text: string, mode: string): string | null {
  const t = text.trim();
  if (MOVE.test(t)) return t;
  if (mode === 'strict') return null;
  const tokens = t.split(/[\s,;:()[\]{}"'`*<>]+/).map((w) => w.replace(/^\d+\.+/, '').replace(/\.+$/, ''));
  for (let i = tokens.length - 1; i >= 0; i--) if (MOVE.test(tokens[i])) return tokens[i];
  return null;
}

/** propose_action: one model call for the next move; null when the reply holds no move. */
async function proposeAction(ctx: HarnessContext, messages: HarnessMessage[]): Promise<{ move: string | null; text: string }> {
  const maxTokens = Number(ctx.knobs.maxTokens ?? 0) || ctx.limits.maxTokensPerCall;
  const reply = await ctx.chat(messages, maxTokens ? { max_tokens: maxTokens } : {});
  return { move: parseMove(reply.text, String(ctx.knobs.parse ?? 'lenient')), text: reply.text };
}

/** is_legal_action: asks the domain; the harness itself knows no chess rules. */
async function isLegalAction(ctx: HarnessContext, state: State, move: string): Promise<boolean> {
  const obs = await ctx.tool('is_legal_action', { move, fen: state.fen });
  return obs.startsWith('legal');
}

export default defineHarness({
  async run(task, ctx) {
    const meta = (task.meta ?? {}) as { fen?: string; sideToMove?: string; lastMove?: string; lastMoveSan?: string };
    const notation = String(ctx.knobs.notation ?? 'uci');
    const state: State = { fen: String(meta.fen ?? ''), side: String(meta.sideToMove ?? ''), lastMove: String((notation === 'san' ? meta.lastMoveSan : meta.lastMove) ?? ''), played: [] };
    const retries = Number(ctx.knobs.legalityRetries ?? 1);
    const showBoard = ctx.knobs.showBoard === true;
    const system = ctx.prompts.system ?? '';
    const user = ctx.prompts[notation === 'san' ? 'userSan' : 'user'] ?? ctx.prompts.user ?? '{fen}';
    let calls = 0;
    while (calls < ctx.limits.maxTurns) {
      const messages: HarnessMessage[] = [];
      if (system.trim() !== '') messages.push({ role: 'system', content: system });
      messages.push({ role: 'user', content: fill(user, state, showBoard) });
      let move: string | null = null;
      for (let attempt = 0; attempt <= retries && calls < ctx.limits.maxTurns; attempt++) {
        const p = await proposeAction(ctx, messages);
        calls++;
        messages.push({ role: 'assistant', content: p.text });
        if (p.move && (retries === 0 || (await isLegalAction(ctx, state, p.move)))) {
          move = p.move;
          break;
        }
        ctx.log(p.move ? 'illegal move' : 'no move in the reply', { move: p.move });
        messages.push({ role: 'user', content: p.move ? `${p.move} is not a legal move here. Try again: one legal move.` : 'Write one move.' });
      }
      if (!move) return { answer: state.played.length > 0 ? state.played.join(' ') : null };
      const obs = await ctx.tool('play_move', { moves: [...state.played, move] });
      if (obs.startsWith('illegal')) {
        ctx.log('play_move refused the move', { move, obs });
        continue;
      }
      state.played.push(move);
      if (!obs.startsWith('correct')) return { answer: state.played.join(' ') };
      // "correct: the opponent plays <uci> <san>; position: <fen>"
      const m = /the opponent plays (\S+) (\S+); position: (.+)$/.exec(obs);
      if (!m) return { answer: state.played.join(' ') };
      state.lastMove = notation === 'san' ? m[2] : m[1];
      state.fen = m[3].trim();
      state.side = state.fen.split(' ')[1] === 'b' ? 'black' : 'white';
    }
    ctx.log('turn limit reached', { maxTurns: ctx.limits.maxTurns });
    return { answer: state.played.length > 0 ? state.played.join(' ') : null };
  },
});
