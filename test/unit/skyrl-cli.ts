// The whale CLI with one more domain registered, for the SkyRL end-to-end test (backend-skyrl.test.ts):
//   node --import tsx test/unit/skyrl-cli.ts <whale arguments>
// 'coin' is ramble's tasks and harness with a verifier a random model passes about half the time
// (the reply has an even number of characters), so RSFT on a random tiny Qwen3 has accepted rollouts.
import { main } from '../../src/cli/main.js';
import { parseOptions } from '../../src/domains/common.js';
import { registerDomain } from '../../src/domains/index.js';
import { createRambleDomain } from '../../src/domains/ramble.js';

registerDomain({
  id: 'coin',
  title: 'coin — a reply of even length passes',
  regime: 'weight-dominated',
  summary: 'test domain: ramble tasks, a verifier a random model passes half the time',
  create: (o, c) => ({
    ...createRambleDomain(parseOptions('coin', o), c),
    id: 'coin',
    verify: (_task, rollout) => {
      const reply = rollout.modelCalls[0]?.completion ?? '';
      const pass = reply.length > 0 && reply.length % 2 === 0;
      return { pass, score: pass ? 1 : 0, extracted: null, reason: `reply of ${reply.length} characters` };
    },
    checkRules: () => null,
  }),
});
process.exitCode = await main(process.argv.slice(2));
