// Issue 12 §7: an evaluation under one isolation mode (network, file system) is not answered from
// the cache of an evaluation under another.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ResultStore } from '../../src/archive/resultStore.js';
import { evaluate } from '../../src/engine/evaluate.js';
import { sandboxCapabilities } from '../../src/harness/sandbox.js';
import { fixture, setup, TEST_LIMITS, TEST_SAMPLING } from '../fixtures/harnesses/helpers.js';

const store = mkdtempSync(join(tmpdir(), 'whale-isokey-'));
after(() => rmSync(store, { recursive: true, force: true }));

test(
  'the result key names the isolation mode: a guarded run is not served from a namespaced run’s cache',
  { skip: !sandboxCapabilities().netns && 'no network namespace here' },
  async () => {
    const keys: string[] = [];
    for (const network of ['namespace', 'guard'] as const) {
      const { rt, domain } = setup({ network });
      try {
        const r = await evaluate({
          store: new ResultStore(store),
          runner: rt,
          domain,
          harnessDir: fixture('good'),
          policyVersion: 'scripted-v0',
          split: 'val',
          k: 1,
          seed: 1,
          sampling: TEST_SAMPLING,
          limits: TEST_LIMITS,
          concurrency: 2,
          limit: 2,
        });
        assert.equal(r.cacheHit, false, `${network}: answered from another isolation mode's cache`);
        assert.equal(r.summary.key.isolation?.network, network);
        keys.push(r.summary.keyHash);
      } finally {
        await rt.close();
      }
    }
    assert.notEqual(keys[0], keys[1]);
  },
);
