import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildVocabulary, pretokenize, SPECIAL_TOKENS, WordTokenizer } from '../../src/policy/embedded/tokenizer.js';
import { tinyTokenizer } from './policy-fixtures.js';

test('pre-tokenisation splits words with their leading space, punctuation, newlines and space runs', () => {
  assert.deepEqual(pretokenize('Hello, world!\n  x  y'), ['Hello', ',', ' world', '!', '\n', ' ', ' x', ' ', ' y']);
  assert.deepEqual(pretokenize('a (b)'), ['a', ' (', 'b', ')']);
  assert.equal(pretokenize('tab\there').join(''), 'tab\there');
});

test('any text round-trips exactly, including unicode, control characters and byte fallback', () => {
  const tok = tinyTokenizer();
  const samples = [
    'hello world',
    'count a b c d',
    'Unknown words spell out: zyzzyva!',
    'tabs\tand\r\nwindows newlines\n\n',
    'émigré café naïve — “quotes” ∑ 数学 🐳🐋 end',
    '   leading and trailing   ',
    '<|end|> <bos> typed by a user',
    '\u0000\u0001\u007f',
    '',
  ];
  for (const s of samples) {
    const ids = tok.encode(s);
    assert.equal(tok.decode(ids), s, JSON.stringify(s));
    for (const id of ids) assert.ok(!tok.isSpecial(id), 'plain text never yields special tokens');
  }
});

test('required words are single tokens in both forms; unknown leading-space forms reuse the bare word', () => {
  const tok = tinyTokenizer();
  assert.equal(tok.encode('hello').length, 1);
  assert.equal(tok.encode(' hello').length, 1);
  assert.equal(tok.encode('hello world').length, 2);
  const t2 = new WordTokenizer(tok.tokens.filter((x) => x !== ' hello'));
  assert.deepEqual(
    t2.encode(' hello').map((i) => t2.tokens[i]),
    [' ', 'hello'],
  );
});

test('non-ASCII characters become UTF-8 byte tokens', () => {
  const tok = tinyTokenizer();
  const ids = tok.encode('é');
  assert.deepEqual(
    ids.map((i) => tok.tokens[i]),
    ['<0xC3>', '<0xA9>'],
  );
  // a cut multi-byte character decodes to U+FFFD instead of throwing
  assert.equal(tok.decode([ids[0]]), '\uFFFD');
});

test('buildVocabulary: order, frequency, minCount, maxSize, determinism', () => {
  const corpus = ['the cat sat on the mat', 'the dog sat', 'a rare word'];
  const tok = buildVocabulary({ requiredWords: ['zebra'], corpus, maxSize: 270 + 4, minCount: 2 });
  assert.deepEqual(tok.tokens.slice(0, SPECIAL_TOKENS.length), [...SPECIAL_TOKENS]);
  assert.deepEqual(tok.tokens.slice(7, 9), ['zebra', ' zebra']);
  const words = tok.tokens.slice(9, tok.size - 95 - 1 - 161);
  // ' sat' and 'the' twice each (ties alphabetical); ' the' and ' rare' once, below minCount.
  assert.deepEqual(words, [' sat', 'the']);
  assert.ok(!tok.tokens.includes(' rare'), 'below minCount');
  const capped = buildVocabulary({ requiredWords: ['zebra'], corpus, maxSize: 267, minCount: 1 });
  assert.equal(capped.size, 267);
  assert.equal(capped.tokens[9], ' sat');
  assert.ok(tok.size <= 274);
  const again = buildVocabulary({ requiredWords: ['zebra'], corpus, maxSize: 274, minCount: 2 });
  assert.deepEqual(again.tokens, tok.tokens);
  assert.throws(() => buildVocabulary({ requiredWords: ['two words'], corpus: [], maxSize: 400 }), /not a single piece/);
  assert.throws(() => buildVocabulary({ requiredWords: ['x1', 'x2'], corpus: [], maxSize: 100 }), /maxSize 100/);
});

test('vocabulary JSON round-trips and bad files are named', () => {
  const tok = tinyTokenizer();
  const back = WordTokenizer.fromJSON(JSON.parse(JSON.stringify(tok.toJSON())));
  assert.deepEqual(back.tokens, tok.tokens);
  assert.throws(() => WordTokenizer.fromJSON({ format: 'x' }, '/tmp/v.json'), /\/tmp\/v\.json/);
});

test('chat template: <bos>, <|role|> content <|end|> per message, generation prompt', () => {
  const tok = tinyTokenizer();
  const ids = tok.encodeChat(
    [
      { role: 'system', content: 'the answer' },
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'world' },
      { role: 'tool', content: 'is' },
    ],
    { addGenerationPrompt: true },
  );
  assert.deepEqual(
    ids.map((i) => tok.tokens[i]),
    [
      '<bos>',
      '<|system|>',
      'the',
      ' answer',
      '<|end|>',
      '<|user|>',
      'hello',
      '<|end|>',
      '<|assistant|>',
      'world',
      '<|end|>',
      '<|tool|>',
      'is',
      '<|end|>',
      '<|assistant|>',
    ],
  );
  assert.equal(tok.decode(ids), 'the answerhelloworldis');
  assert.equal(tok.encodeChat([{ role: 'user', content: 'a' }]).at(-1), tok.endId);
});
