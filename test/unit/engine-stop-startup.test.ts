// A stop asked for while the engine starts (Ctrl-C or SIGTERM while the model loads) stops the run
// at the first safe point. It was lost: the abort had fired before the engine listened for it, and
// the run went on to the end (seen in engine-resume.test.ts: a SIGINT in start-up, then a whole run).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { Engine } from '../../src/engine/engine.js';
import { smallProject } from '../support/smallProject.js';

test('a stop requested during start-up stops the run before any phase', { timeout: 180_000 }, async () => {
  const p = smallProject('stopstart', {
    name: 'stop-at-start',
    domain: { id: 'ramble', options: { sizes: { weight: 8, harness: 4, val: 4, test: 4 } } },
    evaluation: { k: 1, concurrency: 4 },
    rsft: { batchPrompts: 4, groupSize: 2, minibatch: 4 },
    schedule: { epochs: 0.5, iterations: 1, cycles: 1 },
  });
  try {
    const ac = new AbortController();
    ac.abort(); // the user's Ctrl-C arrived before Engine.create returned
    const engine = await Engine.create(p.engineProject(), { signal: ac.signal });
    try {
      const o = await engine.run();
      assert.equal(o.reason, 'stop requested');
      assert.equal(o.phasesRun, 0);
      assert.equal(o.state.finished, undefined, 'the run was completed');
    } finally {
      await engine.close();
    }
  } finally {
    rmSync(p.dir, { recursive: true, force: true });
  }
});
