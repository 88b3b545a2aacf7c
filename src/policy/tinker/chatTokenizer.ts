/**
 * Client-side tokenisation for the Tinker backend: the client renders chat messages to token ids
 * and decodes sampled ids, so training consumes exactly the ids the rollouts produced.
 * 'embedded' is the embedded model's word-level tokenizer (for `whale serve`).
 */
import { join } from 'node:path';
import { resourcesDir } from '../../core/resources.js';
import type { ChatMessage } from '../../core/trajectory.js';
import { loadTokenizer } from '../embedded/tokenizer.js';

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

export async function loadChatTokenizer(spec: string): Promise<ChatTokenizer> {
  if (spec === 'embedded') {
    const file = join(resourcesDir(), 'model', 'base', 'vocab.json');
    const tok = loadTokenizer(file);
    return {
      source: `embedded vocabulary ${file}`,
      encodeChat: (m, o) => tok.encodeChat(m, o),
      decode: (ids) => tok.decode(ids),
    };
  }
  const { loadHfChatTokenizer } = await import('./hfTokenizer.js');
  return loadHfChatTokenizer(spec);
}
