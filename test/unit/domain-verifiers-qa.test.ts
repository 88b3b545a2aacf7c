import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exactMatch, normaliseQa, tokenF1 } from '../../src/domains/verifiers/qa.js';

test('SQuAD normalisation: case, punctuation, articles, whitespace', () => {
  assert.equal(normaliseQa('  The  Eiffel-Tower! '), 'eiffeltower');
  assert.equal(normaliseQa('An apple a day'), 'apple day');
  assert.equal(normaliseQa('Theatre'), 'theatre', 'articles only as whole words');
});

test('exact match against any golden answer', () => {
  assert.equal(exactMatch('william shakespeare.', ['Shakespeare', 'William Shakespeare']), true);
  assert.equal(exactMatch('Shakespear', ['Shakespeare']), false);
  assert.equal(exactMatch('', ['a']), false);
});

test('token F1 is the best over golden answers, with repeated tokens counted once each', () => {
  assert.equal(tokenF1('William Shakespeare', ['Shakespeare', 'William Shakespeare']), 1);
  assert.ok(Math.abs(tokenF1('the playwright Shakespeare', ['William Shakespeare']) - 0.5) < 1e-9);
  assert.equal(tokenF1('new new york', ['new york']), 0.8);
  assert.equal(tokenF1('paris', ['Lima']), 0);
  assert.equal(tokenF1('the', ['a']), 0);
});
