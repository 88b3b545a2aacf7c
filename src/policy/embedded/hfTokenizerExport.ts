/**
 * The embedded word-level vocabulary as a Hugging Face tokenizer folder (tokenizer.json +
 * tokenizer_config.json with the chat template), so the official tinker SDK's `get_tokenizer()`
 * — `AutoTokenizer.from_pretrained(model_data.tokenizer_id)` — loads it from a local path with no
 * hub access (`whale serve` reports the folder as `tokenizer_id`).
 *
 * A BPE model with no merges, `ignore_merges` (a piece in the vocabulary is one token) and
 * `byte_fallback` (other characters become `<0xNN>` tokens) behind WHALE's own pre-tokenisation
 * regex gives the same ids as `WordTokenizer.encode` for every piece in the vocabulary and every
 * piece spelt out in printable ASCII. Two cases differ, and decode to the same text either way:
 * a piece ` word` whose bare `word` is known (WHALE: a space and the word; here: spelt out), and a
 * non-ASCII character that is itself a vocabulary piece inside an unknown piece.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { writeJsonAtomic } from '../../core/atomic.js';
import { SPECIAL_TOKENS, type WordTokenizer } from './tokenizer.js';

/** WordTokenizer's PIECE_RE, in the Oniguruma syntax the tokenizers library reads (the same text). */
const PIECE_PATTERN = / ?[A-Za-z0-9_]+| ?[^\sA-Za-z0-9_]|\n|[^\S\n]+(?!\S)|[^\S\n]+/u.source;

const CHAT_TEMPLATE =
  '{{ bos_token }}{% for m in messages %}{{ "<|" + m["role"] + "|>" }}{{ m["content"] }}<|end|>{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}';

function hfTokenizerFiles(tok: WordTokenizer, contextLength: number): { 'tokenizer.json': unknown; 'tokenizer_config.json': unknown } {
  const vocab = Object.fromEntries(tok.tokens.map((t, i) => [t, i]));
  return {
    'tokenizer.json': {
      version: '1.0',
      truncation: null,
      padding: null,
      added_tokens: SPECIAL_TOKENS.map((s) => ({
        id: tok.idOf(s)!,
        content: s,
        single_word: false,
        lstrip: false,
        rstrip: false,
        normalized: false,
        special: true,
      })),
      normalizer: null,
      pre_tokenizer: { type: 'Split', pattern: { Regex: PIECE_PATTERN }, behavior: 'Isolated', invert: false },
      post_processor: null,
      decoder: { type: 'Sequence', decoders: [{ type: 'ByteFallback' }, { type: 'Fuse' }] },
      model: {
        type: 'BPE',
        dropout: null,
        unk_token: null,
        continuing_subword_prefix: null,
        end_of_word_suffix: null,
        fuse_unk: false,
        byte_fallback: true,
        ignore_merges: true,
        vocab,
        merges: [],
      },
    },
    'tokenizer_config.json': {
      tokenizer_class: 'PreTrainedTokenizerFast',
      bos_token: '<bos>',
      eos_token: '<|end|>',
      pad_token: '<pad>',
      add_bos_token: false,
      clean_up_tokenization_spaces: false,
      model_max_length: contextLength,
      chat_template: CHAT_TEMPLATE,
    },
  };
}

/** Writes the folder once per vocabulary under `root` (named by the vocabulary's hash) and returns its path. */
export function writeHfTokenizer(tok: WordTokenizer, contextLength: number, root: string): string {
  const files = hfTokenizerFiles(tok, contextLength);
  const id = createHash('sha256').update(JSON.stringify(files)).digest('hex').slice(0, 16);
  const dir = join(root, id);
  if (!existsSync(join(dir, 'tokenizer_config.json'))) {
    mkdirSync(dir, { recursive: true });
    // tokenizer_config.json last: its presence marks a complete folder
    for (const name of ['tokenizer.json', 'tokenizer_config.json'] as const) writeJsonAtomic(join(dir, name), files[name]);
  }
  return dir;
}
