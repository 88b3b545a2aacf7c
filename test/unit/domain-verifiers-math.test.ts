/** `\boxed{}` extraction and math answer equivalence (the `boxed-math` verifier). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { extractBoxed, mathEquivalent, normaliseAnswer } from '../../src/domains/verifiers/math.js';

test('extractBoxed takes the last box, keeps nested braces, knows \\fbox and \\boxed 5', () => {
  assert.equal(extractBoxed('so \\boxed{1} no wait \\boxed{\\frac{1}{2}}.'), '\\frac{1}{2}');
  assert.equal(extractBoxed('\\boxed{\\frac{\\sqrt{3}}{2}+\\left\\{x\\right\\}}'), '\\frac{\\sqrt{3}}{2}+\\left\\{x\\right\\}');
  assert.equal(extractBoxed('answer: $\\fbox{42}$'), '42');
  assert.equal(extractBoxed('thus \\boxed 7$'), '7');
  assert.equal(extractBoxed('\\boxed {x^{2}}'), 'x^{2}');
  assert.equal(extractBoxed('no box here: 42'), null);
  assert.equal(extractBoxed('cut off \\boxed{\\frac{1}{2'), null, 'an unclosed box is no answer');
  assert.equal(extractBoxed('first \\boxed{3} then unclosed \\boxed{4'), '3');
  assert.equal(extractBoxed('\\boxed{}'), '');
});

test('normaliseAnswer: delimiters, \\dfrac, units, degrees, dollars, thousands, leading zeros, x =', () => {
  const n = (s: string) => normaliseAnswer(s).text;
  assert.equal(n('$\\dfrac{3}{4}$'), '\\frac{3}{4}');
  assert.equal(n('\\tfrac12'), '\\frac12');
  assert.equal(n('10 \\text{ cm}'), '10');
  assert.equal(n('12 meters'), '12');
  assert.equal(n('45^\\circ'), '45');
  assert.equal(n('\\$1,234.50'), '1234.50');
  assert.equal(n('1{,}000{,}000'), '1000000');
  assert.equal(n('033'), '33');
  assert.equal(n('000'), '0');
  assert.equal(n('x = -2'), '-2');
  assert.equal(n('25\\%'), '25');
  assert.ok(normaliseAnswer('25\\%').percent);
  assert.equal(n('\\text{(B)}'), '(B)');
  assert.equal(n('1,2'), '1,2', 'a pair is not a thousands separator');
  assert.equal(n('2x'), '2x', 'a variable is not a unit');
});

const SAME: [string, string][] = [
  ['\\boxed{42}', '42'],
  ['The answer is \\boxed{\\dfrac{1}{2}}.', '\\frac{1}{2}'],
  ['\\boxed{0.5}', '\\frac12'],
  ['\\boxed{1/2}', '\\frac{1}{2}'],
  ['\\boxed{\\frac{\\sqrt{2}}{2}}', '\\frac{1}{\\sqrt{2}}'],
  ['\\boxed{2\\sqrt{2}}', '\\sqrt{8}'],
  ['\\boxed{\\frac{3}{4}}', '0.75'],
  ['\\boxed{033}', '33'],
  ['\\boxed{33}', '033'],
  ['\\boxed{1,000}', '1000'],
  ['\\boxed{1{,}000}', '1000'],
  ['\\boxed{10 \\text{ cm}}', '10'],
  ['\\boxed{\\$15}', '15'],
  ['\\boxed{50\\%}', '50'],
  ['\\boxed{50\\%}', '0.5'],
  ['\\boxed{0.5}', '50\\%'],
  ['\\boxed{x = 3}', '3'],
  ['\\boxed{90^\\circ}', '90'],
  ['\\boxed{(x+1)^2}', 'x^2+2x+1'],
  ['\\boxed{\\pi/2}', '\\frac{\\pi}{2}'],
  ['\\boxed{(1, 2)}', '(1,2)'],
  ['\\boxed{\\{2, 1\\}}', '\\{1,2\\}'],
  ['\\boxed{2^{10}}', '1024'],
  ['\\boxed{\\text{(B)}}', 'B'],
  ['\\boxed{\\left( 3, -1 \\right)}', '(3,-1)'],
  ['42', '42'],
  ['\\boxed{-\\frac{7}{3}}', '-7/3'],
  ['\\boxed{sqrt(2)}', '\\sqrt{2}'],
  ['$\\boxed{12}$.', '12'],
  ['\\boxed{2^{64}}', '18446744073709551616'],
  ['\\boxed{0.125}', '\\frac{1}{8}'],
  ['\\boxed{12.5\\%}', '\\frac{1}{8}'],
  ['\\boxed{0.1+0.2}', '0.3'],
  ['\\boxed{\\text{No Solution}}', 'no solution'],
];

const DIFFERENT: [string, string][] = [
  ['\\boxed{3}', '4'],
  ['\\boxed{0.33}', '\\frac{1}{3}'],
  ['\\boxed{0.3333}', '\\frac{1}{3}'],
  ['\\boxed{2\\sqrt{3}}', '2\\sqrt{2}'],
  ['\\boxed{(2, 1)}', '(1,2)'],
  ['\\boxed{12}', '120'],
  ['\\boxed{x+1}', 'x-1'],
  ['\\boxed{x}', 'y'],
  ['\\boxed{10\\%}', '1'],
  ['\\boxed{-5}', '5'],
  ['\\boxed{1,2}', '12'],
  ['\\boxed{3.14}', '\\pi'],
  ['\\boxed{(1,2,3)}', '(1,2)'],
  ['\\boxed{\\text{(A)}}', 'B'],
  ['\\boxed{33}', '330'],
  ['\\boxed{2x}', '2'],
  ['\\boxed{999999999}', '1000000000'],
  ['\\boxed{123456789012345678901}', '123456789012345678902'],
  ['\\boxed{2^{64}}', '18446744073709551617'],
  ['\\boxed{10^{100}}', '10^{100}+1'],
  ['\\boxed{0.000000001}', '0'],
  ['\\boxed{a}', 'A'],
  ['\\boxed{-\\infty}', '\\infty'],
  ['\\boxed{(1,2]}', '[1,2)'],
];

test('mathEquivalent: equivalent answers pass', () => {
  for (const [pred, gold] of SAME) {
    const v = mathEquivalent(pred, gold);
    assert.equal(v.pass, true, `${pred} vs ${gold}: ${v.reason}`);
    assert.match(v.reason, /^correct/);
  }
});

test('mathEquivalent: different answers fail, with the expected and extracted answer in the reason', () => {
  for (const [pred, gold] of DIFFERENT) {
    const v = mathEquivalent(pred, gold);
    assert.equal(v.pass, false, `${pred} vs ${gold} must not match (${v.reason})`);
    assert.match(v.reason, /^expected /);
    assert.notEqual(v.extracted, null);
  }
});

test('mathEquivalent: no answer, an empty box, a box cut off by the token budget', () => {
  assert.deepEqual(mathEquivalent('', '3'), { pass: false, extracted: null, reason: 'no answer' });
  assert.deepEqual(mathEquivalent('\\boxed{}', '3'), { pass: false, extracted: null, reason: 'empty \\boxed{}' });
  const cut = mathEquivalent('Let us compute 3+4 and so \\boxed{7', '7');
  assert.equal(cut.pass, false, 'an unclosed box is not an answer');
  assert.equal(mathEquivalent('\\boxed{\\text{}}', '0').pass, false);
});

test('mathEquivalent is fast enough for a verifier (≈ ms a check)', () => {
  const t0 = performance.now();
  for (let i = 0; i < 50; i++) mathEquivalent(`\\boxed{\\frac{${i}}{7}}`, `${i}/7`);
  const ms = (performance.now() - t0) / 50;
  assert.ok(ms < 50, `${ms} ms a check`);
});

test('answers the CAS would grind on for seconds (it runs inside the engine) are compared as text, at once', () => {
  // Measured before the guard: 99999! 10 s, the sum 5 s, the long sum 1.5 s.
  for (const [pred, gold] of [
    ['\\boxed{99999!}', '3'],
    ['\\boxed{\\sum_{n=1}^{10^{9}} n}', '1'],
    [`\\boxed{${'x+'.repeat(2000)}x}`, '2001x'],
    ['\\boxed{(2^{10})!}', '1'],
  ]) {
    const t0 = performance.now();
    const v = mathEquivalent(pred, gold);
    assert.equal(v.pass, false);
    assert.ok(performance.now() - t0 < 500, `${pred.slice(0, 30)}: ${performance.now() - t0} ms`);
  }
  assert.equal(mathEquivalent('\\boxed{\\sum_{n=1}^{3} n}', '\\sum_{n=1}^{3} n').pass, true, 'the same text still matches');
  assert.equal(mathEquivalent('\\boxed{5!}', '120').pass, true, 'small factorials still go to the CAS');
});
