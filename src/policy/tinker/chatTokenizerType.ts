/** What the Tinker client tokenises with (chatTokenizer.ts picks one, hfTokenizer.ts builds the Hugging Face one). */
import type { ChatMessage } from '../../core/trajectory.js';

export interface ChatTokenizer {
  /** A short description for logs (which tokenizer, from where). */
  readonly source: string;
  encodeChat(messages: readonly ChatMessage[], opts: { addGenerationPrompt?: boolean }): number[];
  decode(ids: readonly number[]): string;
  /**
   * Where an assistant turn ends, for a server that stops only on what it is told (SkyRL): the
   * template's end-of-turn token(s) by id and as text. Absent when the server's model ends its
   * turns by itself (the embedded one).
   */
  readonly endOfTurn?: { ids: number[]; texts: string[] };
}
