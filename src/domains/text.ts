/**
 * The text shapes shared by the toy domains, their shipped harnesses and the pretraining corpus.
 *
 * The shipped harnesses (resources/harnesses/*) must stay self-contained, so they carry their own
 * copies of these strings and functions; test/unit/domain-corpus.test.ts runs the real harness code
 * against the corpus simulation and fails if the two ever render a message differently.
 *
 * Every word is space-separated (punctuation included) so a word-level tokenizer sees each as one token.
 */

export type PassageFormat = 'plain' | 'numbered' | 'sentence';
export const PASSAGE_FORMATS: readonly PassageFormat[] = ['plain', 'numbered', 'sentence'];

/** kbqa system instructions the corpus knows (knob `instruction`: 'prompt' uses prompts.system instead). */
export const KBQA_INSTRUCTIONS = {
  short: 'search the name , then answer .',
  full: 'write search and a name to see its facts . then write answer and the value from the facts . answer with one word .',
} as const;

/** kbqa harness feedback messages (role user). */
export const KBQA_FEEDBACK = {
  format: 'error : write search and a name , or answer and a value .',
  noSearchLeft: 'error : no search left . answer now .',
  searchFirst: 'error : search first .',
} as const;

/** ramble system instructions the corpus knows. The corpus expert rambles just as often under each. */
export const RAMBLE_INSTRUCTIONS = {
  brief: 'answer with one word .',
  direct: 'do not think . write answer and the value now .',
} as const;

/** What the search tool returns when the query names no known entity. */
export const NO_FACTS = 'no facts';

export type Fact = [subject: string, attribute: string, value: string];

/** One fact as a sentence of the given passage format (without numbering). */
export function factText(f: Fact, format: PassageFormat): string {
  const [s, a, v] = f;
  return format === 'sentence' ? `the ${a} of ${s} is ${v} .` : `${s} ${a} ${v} .`;
}

/** The tool message a harness shows for a list of facts. */
export function formatFacts(facts: Fact[], format: PassageFormat): string {
  if (facts.length === 0) return `${NO_FACTS} .`;
  return facts.map((f, i) => (format === 'numbered' ? `${i + 1} : ${factText(f, 'plain')}` : factText(f, format))).join(' ');
}

/** The search tool's raw observation: one `subject attribute value` line per fact, or `no facts`. */
export function observationText(facts: Fact[]): string {
  return facts.length === 0 ? NO_FACTS : facts.map((f) => f.join(' ')).join('\n');
}

/** Parses the tool's raw observation back into facts: subject, attribute, then the rest of the line as the value. */
export function parseObservation(obs: string): Fact[] {
  const out: Fact[] = [];
  for (const line of obs.split('\n')) {
    const w = line.trim().split(/\s+/);
    if (w.length >= 3) out.push([w[0], w[1], w.slice(2).join(' ')]);
  }
  return out;
}

/** Reads the facts shown in a tool message of any passage format. */
export function factsInText(text: string): Fact[] {
  const out: Fact[] = [];
  for (const seg of text.split(' .')) {
    const s = seg.trim().replace(/^\d+ : /, '');
    let m = /^the (\S+) of (\S+) is (\S+)$/.exec(s);
    if (m) {
      out.push([m[2], m[1], m[3]]);
      continue;
    }
    m = /^(\S+) (\S+) (\S+)$/.exec(s);
    if (m) out.push([m[1], m[2], m[3]]);
  }
  return out;
}

export type Action = { kind: 'search' | 'answer'; arg: string };
export type ParseMode = 'strict' | 'lenient';

/**
 * The action syntax: `search NAME` or `answer VALUE`. Strict: the whole completion is exactly that.
 * Lenient: the first `search`/`answer` keyword (optionally followed by `:` or `is`) and the word after
 * it, anywhere; else a completion of one bare word is taken as an answer.
 */
export function parseAction(text: string, mode: ParseMode): Action | null {
  const t = text.trim();
  const strict = /^(search|answer) ([^\s.,:?]+)$/.exec(t);
  if (strict) return { kind: strict[1] as Action['kind'], arg: strict[2] };
  if (mode === 'strict') return null;
  const m = /\b(search|answer)(?:\s*:\s*|\s+is\s+|\s+)([^\s.,:?]+)/.exec(t);
  if (m) return { kind: m[1] as Action['kind'], arg: m[2] };
  const words = t.split(/\s+/).filter((w) => w !== '' && !/^[.,:?]+$/.test(w));
  if (words.length === 1 && words[0] !== 'search' && words[0] !== 'answer') return { kind: 'answer', arg: words[0] };
  return null;
}

/** kbqa question text. */
export function kbqaQuestion(attribute: string, subject: string, relation?: string): string {
  return relation ? `What is the ${attribute} of the ${relation} of ${subject} ?` : `What is the ${attribute} of ${subject} ?`;
}

/** Parses a kbqa-style question anywhere in a text: the asked attribute, the optional first-hop relation, the subject. */
export function parseQuestion(text: string): { attribute: string; relation?: string; subject: string } | null {
  const m = /What is the (\S+) of (?:the (\S+) of )?(\S+) \?/.exec(text);
  if (!m) return null;
  return m[2] ? { attribute: m[1], relation: m[2], subject: m[3] } : { attribute: m[1], subject: m[3] };
}

/** ramble question text: the facts, then the question about one of them. */
export function rambleQuestion(facts: Fact[], asked: Fact): string {
  return `${facts.map((f) => factText(f, 'plain')).join(' ')} ${kbqaQuestion(asked[1], asked[0])}`;
}

/** What the verifier compares: lower case, `<answer>` tags and surrounding punctuation removed, spaces collapsed. */
export function normaliseAnswer(s: string): string {
  return s
    .replace(/<\/?answer>/gi, ' ')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^[\s.,:;!?"'`]+|[\s.,:;!?"'`]+$/g, '')
    .trim();
}

/** Words of a text for rule checks: lower case, punctuation dropped. */
export function wordsOf(s: string): string[] {
  return s
    .toLowerCase()
    .replace(/<\/?answer>/g, ' ')
    .split(/[^a-z0-9_'-]+/)
    .filter((w) => w !== '');
}
