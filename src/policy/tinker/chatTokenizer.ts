/**
 * Client-side tokenisation for the Tinker backend: the client renders chat messages to token ids
 * and decodes sampled ids, so training consumes exactly the ids the rollouts produced.
 * 'embedded' is the embedded model's word-level tokenizer (for `whale serve`).
 */
import { join } from 'node:path';
import { resourcesDir } from '../../core/resources.js';
import { loadTokenizer } from '../embedded/tokenizer.js';
import type { ChatTokenizer } from './chatTokenizerType.js';

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
