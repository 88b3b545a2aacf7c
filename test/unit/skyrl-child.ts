// One "CLI invocation" against a Tinker server, in its own process (test/unit/backend-skyrl.test.ts):
//   node --import tsx skyrl-child.ts URL STORE VERSION MODE [EXAMPLES_JSON]
// MODE chat: open at VERSION, one greedy chat, close. hold: the same, then wait to be killed.
// train: open at VERSION, train on the examples (2 steps), close. Prints one JSON line.
import { TinkerBackend } from '../../src/policy/tinker/backend.js';

const [url, store, version, mode, examples] = process.argv.slice(2);
const b = await TinkerBackend.open({
  baseUrl: url,
  baseModel: process.env.WHALE_SKYRL_MODEL!,
  tokenizer: `${process.env.WHALE_SKYRL_MODEL}/tokenizer.json`,
  loraRank: 8,
  storeDir: store,
  initialVersion: version,
});
if (mode === 'train') {
  const r = await b.train(JSON.parse(examples), { learningRate: 0.02, minibatchSize: 4, epochs: 2 });
  await b.close();
  console.log(JSON.stringify({ version: r.version, losses: r.losses }));
} else {
  const r = await b.chat({ messages: [{ role: 'user', content: 'Say yes.' }], params: { temperature: 0, max_tokens: 4 } });
  console.log(JSON.stringify({ text: r.text, tokens: r.completionTokenIds }));
  if (mode === 'hold') await new Promise(() => {});
  await b.close();
}
