/** The shipped harnesses through the real harness runtime (sandboxed processes, gateway, rules), the noisy expert as the model. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { SandboxLimitsSchema, SamplingSchema } from '../../src/core/config.js';
import { Rng, hashSeed } from '../../src/core/rng.js';
import { expertAct } from '../../src/domains/corpus.js';
import { getDomain } from '../../src/domains/index.js';
import { HarnessRuntime } from '../../src/harness/runtime.js';
import { ScriptedBackend } from '../../src/harness/testing/scriptedBackend.js';
import { REPO } from './domain-helpers.js';

async function score(id: 'kbqa' | 'ramble', harness: string): Promise<{ pass: number; n: number; terminations: Record<string, number> }> {
  const domain = getDomain(id, { sizes: { val: 48 } });
  const backend = new ScriptedBackend((messages) => expertAct(id, messages, new Rng(hashSeed(JSON.stringify(messages)))));
  const rt = new HarnessRuntime({
    domain,
    backend,
    limits: SandboxLimitsSchema.parse({}),
    sampling: SamplingSchema.parse({}),
    concurrency: 4,
    cacheDir: mkdtempSync(path.join(tmpdir(), 'whale-domain-rt-')),
  });
  try {
    const prepared = await rt.prepare(path.join(REPO, 'resources', 'harnesses', harness));
    const trajs = await rt.rolloutMany(
      prepared,
      domain.tasks('val').map((task, i) => ({ task, sampleIndex: 0, seed: i })),
    );
    const terminations: Record<string, number> = {};
    for (const t of trajs) {
      terminations[t.termination] = (terminations[t.termination] ?? 0) + 1;
      assert.ok(t.verdict.reason.length > 0);
    }
    return { pass: trajs.filter((t) => t.verdict.pass).length, n: trajs.length, terminations };
  } finally {
    await rt.close();
  }
}

test('shipped harnesses run in the real runtime; kbqa-good beats kbqa-h0; ramble answers get cut off', async () => {
  const h0 = await score('kbqa', 'kbqa-h0');
  const good = await score('kbqa', 'kbqa-good');
  const ramble = await score('ramble', 'ramble-h0');
  for (const r of [h0, good, ramble])
    assert.deepEqual(
      Object.keys(r.terminations).filter((k) => k !== 'answered' && k !== 'no_answer'),
      [],
      JSON.stringify(r.terminations),
    );
  assert.ok(h0.pass / h0.n < 0.25, `kbqa-h0 ${h0.pass}/${h0.n}`);
  assert.ok(good.pass / good.n > 0.75, `kbqa-good ${good.pass}/${good.n}`);
  assert.ok(ramble.terminations.no_answer > ramble.n * 0.4, `ramble ${JSON.stringify(ramble.terminations)}`);
});
