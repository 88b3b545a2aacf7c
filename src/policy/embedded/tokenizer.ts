/**
 * Word-level tokenizer with a byte fallback.
 *
 * Why word-level: the toy domains need entities and values to be single tokens so that looking a
 * value up becomes one-token copying, which a ~1 M-parameter model learns (REFERENCE.md §5); a
 * byte-level model never learned to copy values. The fallback makes every well-formed string encode
 * and decode exactly: a piece missing from the vocabulary is spelt with single printable-ASCII
 * tokens, and anything else with `<0xNN>` UTF-8 byte tokens.
 *
 * Text in messages is never parsed for special tokens: `<|end|>` typed by a user is spelt out as
 * characters, so content cannot forge the chat template.
 */
import { readFileSync } from 'node:fs';
import type { ChatMessage } from '../types.js';

export const SPECIAL_TOKENS = ['<pad>', '<bos>', '<|system|>', '<|user|>', '<|assistant|>', '<|tool|>', '<|end|>'] as const;
export type SpecialToken = (typeof SPECIAL_TOKENS)[number];

/**
 * Pre-tokenisation: a word with its optional leading space, one punctuation (or other non-space)
 * character with its optional leading space, a newline, or a run of other whitespace. A run of
 * spaces before a word leaves its last space to the word (as GPT-2 does), so ` x` stays one piece.
 */
const PIECE_RE = / ?[A-Za-z0-9_]+| ?[^\sA-Za-z0-9_]|\n|[^\S\n]+(?!\S)|[^\S\n]+/gu;

export function pretokenize(text: string): string[] {
  return text.match(PIECE_RE) ?? [];
}

const PRINTABLE: string[] = Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCharCode(0x20 + i));
const isPrintableAscii = (c: string) => c.length === 1 && c >= ' ' && c <= '~';
const byteToken = (b: number) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`;
/** Bytes without a printable single-character token: control characters, DEL and all non-ASCII. */
const FALLBACK_BYTES: number[] = [...Array(256).keys()].filter((b) => b < 0x20 || b > 0x7e);

export interface VocabularyJson {
  format: 'whale-word-vocab';
  version: 1;
  /** Token strings in id order; byte tokens are spelt `<0xNN>`. */
  tokens: string[];
}

export interface BuildVocabularyOptions {
  /** Always in the vocabulary, each in both `word` and ` word` forms (domain entities and values). */
  requiredWords: string[];
  /** Text whose frequent pieces fill the rest of the vocabulary. */
  corpus: Iterable<string>;
  /** Total size including special, fallback and byte tokens. */
  maxSize: number;
  /** Pieces seen fewer times than this are left to the fallback (default 2). */
  minCount?: number;
}

/**
 * Vocabulary order: special tokens, word pieces (required words first, then by frequency, ties
 * alphabetical so the result is deterministic), single printable characters, `\n`, byte tokens.
 */
export function buildVocabulary(opts: BuildVocabularyOptions): WordTokenizer {
  const minCount = opts.minCount ?? 2;
  const fixed = new Set<string>([...SPECIAL_TOKENS, ...PRINTABLE, '\n', ...FALLBACK_BYTES.map(byteToken)]);
  const reserved = fixed.size;
  const words: string[] = [];
  const seen = new Set<string>();
  const addWord = (w: string) => {
    if (!fixed.has(w) && !seen.has(w)) {
      seen.add(w);
      words.push(w);
    }
  };
  for (const raw of opts.requiredWords) {
    const w = raw.replace(/^ /, '');
    const pieces = pretokenize(w);
    if (w.length === 0 || pieces.length !== 1 || pieces[0] !== w) {
      throw new Error(`buildVocabulary: required word ${JSON.stringify(raw)} is not a single piece (it splits as ${JSON.stringify(pieces)})`);
    }
    addWord(w);
    addWord(' ' + w);
  }
  if (reserved + words.length > opts.maxSize) {
    throw new Error(`buildVocabulary: maxSize ${opts.maxSize} is smaller than the ${reserved} fixed tokens plus ${words.length} required word forms`);
  }
  const counts = new Map<string, number>();
  for (const text of opts.corpus) {
    for (const p of pretokenize(text)) {
      if (p.length > 1 || !isPrintableAscii(p)) counts.set(p, (counts.get(p) ?? 0) + 1);
    }
  }
  const frequent = [...counts.entries()]
    .filter(([p, c]) => c >= minCount && !fixed.has(p) && !seen.has(p))
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  for (const [p] of frequent) {
    if (reserved + words.length >= opts.maxSize) break;
    words.push(p);
  }
  const tokens = [...SPECIAL_TOKENS, ...words, ...PRINTABLE, '\n', ...FALLBACK_BYTES.map(byteToken)];
  return new WordTokenizer(tokens);
}

export class WordTokenizer {
  readonly tokens: readonly string[];
  private readonly ids = new Map<string, number>();
  /** The UTF-8 bytes each token stands for (specials: their own spelling, for debugging output). */
  private readonly bytes: Uint8Array[];
  private readonly special = new Set<number>();
  private readonly pieceCache = new Map<string, number[]>();
  private readonly byteIds: number[] = [];
  readonly padId: number;
  readonly bosId: number;
  readonly endId: number;
  private readonly roleIds: Record<ChatMessage['role'] | 'assistant', number>;

  constructor(tokens: string[]) {
    this.tokens = tokens;
    const enc = new TextEncoder();
    this.bytes = tokens.map((t, i) => {
      if (this.ids.has(t)) throw new Error(`vocabulary has a duplicate token ${JSON.stringify(t)} (id ${i})`);
      this.ids.set(t, i);
      const m = /^<0x([0-9A-F]{2})>$/.exec(t);
      if (m) {
        const b = parseInt(m[1], 16);
        this.byteIds[b] = i;
        return Uint8Array.of(b);
      }
      return enc.encode(t);
    });
    for (const s of SPECIAL_TOKENS) {
      const id = this.ids.get(s);
      if (id === undefined) throw new Error(`vocabulary lacks the special token ${s}`);
      this.special.add(id);
    }
    for (const c of [...PRINTABLE, '\n']) {
      if (!this.ids.has(c)) throw new Error(`vocabulary lacks the fallback character ${JSON.stringify(c)}`);
    }
    for (const b of FALLBACK_BYTES) {
      if (this.byteIds[b] === undefined) throw new Error(`vocabulary lacks the byte token ${byteToken(b)}`);
    }
    this.padId = this.ids.get('<pad>')!;
    this.bosId = this.ids.get('<bos>')!;
    this.endId = this.ids.get('<|end|>')!;
    this.roleIds = {
      system: this.ids.get('<|system|>')!,
      user: this.ids.get('<|user|>')!,
      assistant: this.ids.get('<|assistant|>')!,
      tool: this.ids.get('<|tool|>')!,
    };
  }

  get size(): number {
    return this.tokens.length;
  }

  idOf(token: string): number | undefined {
    return this.ids.get(token);
  }

  /** The UTF-8 bytes a token stands for (a special token: its own spelling). */
  tokenBytes(id: number): Uint8Array {
    const b = this.bytes[id];
    if (b === undefined) throw new Error(`token id ${id} is outside the vocabulary (size ${this.size})`);
    return b;
  }

  isSpecial(id: number): boolean {
    return this.special.has(id);
  }

  /** Plain text to ids; never produces special tokens. */
  encode(text: string): number[] {
    const out: number[] = [];
    for (const p of pretokenize(text)) {
      let ids = this.pieceCache.get(p);
      if (!ids) {
        ids = this.encodePiece(p);
        if (this.pieceCache.size < 100_000) this.pieceCache.set(p, ids);
      }
      for (const id of ids) out.push(id);
    }
    return out;
  }

  private encodePiece(p: string): number[] {
    const whole = this.ids.get(p);
    if (whole !== undefined) return [whole];
    // ` word` unknown but `word` known: a space token then the word beats spelling it out.
    if (p.length > 2 && p[0] === ' ') {
      const rest = this.ids.get(p.slice(1));
      if (rest !== undefined) return [this.ids.get(' ')!, rest];
    }
    const out: number[] = [];
    for (const ch of p) {
      if (isPrintableAscii(ch) || ch === '\n') out.push(this.ids.get(ch)!);
      else for (const b of new TextEncoder().encode(ch)) out.push(this.byteIds[b]);
    }
    return out;
  }

  /**
   * Ids to text. Byte tokens are joined before UTF-8 decoding, so split characters come back whole;
   * an invalid byte sequence (possible in sampled output) decodes to U+FFFD. Special tokens are
   * dropped unless `keepSpecial`.
   */
  decode(ids: readonly number[], opts: { keepSpecial?: boolean } = {}): string {
    const parts: Uint8Array[] = [];
    let n = 0;
    for (const id of ids) {
      const b = this.bytes[id];
      if (b === undefined) throw new Error(`token id ${id} is outside the vocabulary (size ${this.size})`);
      if (this.special.has(id) && !opts.keepSpecial) continue;
      parts.push(b);
      n += b.length;
    }
    const all = new Uint8Array(n);
    let o = 0;
    for (const b of parts) {
      all.set(b, o);
      o += b.length;
    }
    return new TextDecoder('utf-8', { fatal: false }).decode(all);
  }

  /**
   * The chat template: `<bos>`, then per message `<|role|>` content `<|end|>`, then `<|assistant|>`
   * when a reply is to be generated. Generation stops at `<|end|>`. Message names are not rendered.
   */
  encodeChat(messages: readonly ChatMessage[], opts: { addGenerationPrompt?: boolean } = {}): number[] {
    const out = [this.bosId];
    for (const m of messages) {
      const role = this.roleIds[m.role];
      if (role === undefined) throw new Error(`unknown chat role ${JSON.stringify(m.role)}`);
      out.push(role);
      for (const id of this.encode(m.content)) out.push(id);
      out.push(this.endId);
    }
    if (opts.addGenerationPrompt) out.push(this.roleIds.assistant);
    return out;
  }

  toJSON(): VocabularyJson {
    return { format: 'whale-word-vocab', version: 1, tokens: [...this.tokens] };
  }

  static fromJSON(json: unknown, source = 'vocabulary'): WordTokenizer {
    const j = json as Partial<VocabularyJson>;
    if (!j || j.format !== 'whale-word-vocab' || j.version !== 1 || !Array.isArray(j.tokens) || !j.tokens.every((t) => typeof t === 'string')) {
      throw new Error(`${source}: not a whale-word-vocab v1 file (expected {format:"whale-word-vocab", version:1, tokens:[...]})`);
    }
    try {
      return new WordTokenizer(j.tokens);
    } catch (e) {
      throw new Error(`${source}: ${(e as Error).message}`);
    }
  }
}

/** Reads a `vocab.json` written by `WordTokenizer.toJSON`. */
export function loadTokenizer(file: string): WordTokenizer {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`cannot read the vocabulary ${file}: ${(e as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new Error(`${file}: invalid JSON: ${(e as Error).message}`);
  }
  return WordTokenizer.fromJSON(json, file);
}
