// Harnesses run by command: the shipped Python example end to end, and what the sandbox does and
// does not stop for a non-Node process.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { countingListener } from '../support/countingListener.js';
import { TrajectorySchema } from '../../src/core/trajectory.js';
import { sandboxCapabilities } from '../../src/harness/sandbox.js';
import { fixtureTasks } from '../fixtures/harnesses/fixtureDomain.js';
import { fixture, setup, TEST_SAMPLING } from '../fixtures/harnesses/helpers.js';

const EXAMPLE = fileURLToPath(new URL('../../examples/python-harness', import.meta.url));
const caps = sandboxCapabilities();
const networks: ('guard' | 'namespace')[] = caps.netns ? ['guard', 'namespace'] : ['guard'];

/** Host processes whose command line is exactly these words. */
function processesRunning(...argv: string[]): number[] {
  const out: number[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(join('/proc', pid, 'cmdline'), 'utf8')
        .split('\0')
        .filter(Boolean);
      if (cmd.length === argv.length && cmd.every((w, i) => w === argv[i])) out.push(Number(pid));
    } catch {
      /* gone */
    }
  }
  return out;
}

describe('command (Python) harnesses', () => {
  it(
    'has bubblewrap where the environment requires it (CI sets WHALE_REQUIRE_BWRAP=1)',
    { skip: process.env.WHALE_REQUIRE_BWRAP !== '1' && 'WHALE_REQUIRE_BWRAP is not set' },
    () => {
      assert.equal(caps.bwrap, true, 'bwrap is missing or cannot create a mount namespace here, so command harnesses would run unconfined');
    },
  );

  for (const network of networks) {
    it(`runs the Python example end to end (network: ${network})`, async () => {
      const { rt } = setup({ network, domainLimits: { maxTokensPerCall: 8 } });
      try {
        const prepared = await rt.prepare(EXAMPLE);
        assert.equal(prepared.runtime, 'command');
        assert.deepEqual(prepared.command, ['python3', '-I', 'harness.py']);
        const tasks = fixtureTasks('val', 4);
        const trajs = await rt.rolloutMany(
          prepared,
          tasks.map((task, i) => ({ task, sampleIndex: 0, seed: i })),
        );
        for (const t of trajs) {
          assert.ok(TrajectorySchema.safeParse(t).success);
          assert.equal(t.termination, 'answered', t.terminationDetail);
          assert.equal(t.verdict.pass, true, t.verdict.reason);
          assert.equal(t.modelCalls.length, 2);
          assert.equal(t.modelCalls[0].params.temperature, TEST_SAMPLING.temperature);
          assert.equal(t.modelCalls[0].params.max_tokens, 8);
          assert.ok(t.events.some((e) => e.type === 'tool' && e.name === 'search'));
          assert.ok(t.events.some((e) => e.type === 'log' && e.message === 'searched'));
        }
      } finally {
        await rt.close();
      }
    });
  }

  it('gives command harnesses a scrubbed environment and the folder as HOME and cwd', async () => {
    process.env.OPENAI_API_KEY = 'sk-PLANTED';
    const { rt } = setup({ network: 'guard' });
    try {
      const prepared = await rt.prepare(fixture('py-probe'));
      const t = await rt.rollout(prepared, fixtureTasks('val', 1)[0], { sampleIndex: 0, seed: 0 });
      const found = t.events.find((e) => e.message === 'probe')?.data as { env: string[]; home: string; cwd: string };
      assert.ok(found, JSON.stringify(t));
      assert.ok(!found.env.includes('OPENAI_API_KEY'));
      // LC_CTYPE: Python's C-locale coercion; PWD: bubblewrap's --chdir (the folder itself).
      assert.deepEqual(
        found.env.filter((k) => !['LC_CTYPE', 'PWD'].includes(k)),
        ['HOME', 'LANG', 'PATH', 'PYTHONDONTWRITEBYTECODE', 'PYTHONIOENCODING', 'PYTHONUNBUFFERED', 'WHALE_ENGINE'],
      );
      // The folder it runs in: the candidate's materialised copy.
      assert.equal(found.home, prepared.dir);
      assert.equal(found.cwd, prepared.dir);
      assert.equal(t.termination, 'no_answer');
      assert.equal(t.verdict.score, 0);
    } finally {
      delete process.env.OPENAI_API_KEY;
      await rt.close();
    }
  });

  it(
    'in a network namespace, a command harness reaches nothing but the gateway, and its escaped children die with it',
    { skip: !caps.netns && 'no network namespace here' },
    async () => {
      const listener = await countingListener();
      const port = listener.port;
      const { rt } = setup({ network: 'namespace', filesystem: 'open' });
      try {
        const prepared = await rt.prepare(fixture('py-probe'));
        // The candidate runs from its materialised copy: plant the file next to that.
        writeFileSync(join(dirname(prepared.dir), 'answers.json'), '{}');
        const t = await rt.rollout({ ...prepared, knobs: { port, spawnEscaper: true } }, fixtureTasks('val', 1)[0], { sampleIndex: 0, seed: 0 });
        const found = t.events.find((e) => e.message === 'probe')?.data as { tcp: string; readOutside: string };
        assert.match(found.tcp, /^denied/);
        assert.equal(listener.connections(), 0);
        // Without bubblewrap a command harness is not confined to its folder (SANDBOX.md).
        assert.equal(found.readOutside, 'ALLOWED');
        await new Promise((r) => setTimeout(r, 300));
        assert.deepEqual(processesRunning('sleep', '31.337'), [], 'a grandchild in its own session outlived the rollout');
      } finally {
        listener.close();
        await rt.close();
      }
    },
  );

  for (const network of networks) {
    it(
      `under bubblewrap a command harness sees only its folder (read-only), the system and a private /tmp, and its escaped children die with it (network: ${network})`,
      { skip: !caps.bwrap && 'bubblewrap (bwrap) cannot run here' },
      async () => {
        const listener = await countingListener();
        const port = listener.port;
        const { rt } = setup({ network, filesystem: 'confined' });
        // A file of the user's that the harness process could read without confinement.
        const hostFile = join(mkdtempSync(join(tmpdir(), 'whale-host-')), 'secret.txt');
        writeFileSync(hostFile, 'host secret');
        try {
          const prepared = await rt.prepare(fixture('py-probe'));
          const t = await rt.rollout({ ...prepared, knobs: { port, spawnEscaper: true, confinement: true, hostFile } }, fixtureTasks('val', 1)[0], {
            sampleIndex: 0,
            seed: 0,
          });
          const found = t.events.find((e) => e.message === 'probe')?.data as Record<string, string>;
          assert.ok(found, JSON.stringify(t.events));
          assert.match(found.readOutside, /^denied/, 'the answers planted next to the folder were readable');
          assert.match(found.readHostSecret, /^denied/, 'a file of the user outside the folder was readable');
          assert.match(found.writeFolder, /^denied/, 'the candidate folder was writable');
          assert.equal(found.writeTmp, 'ALLOWED');
          assert.equal(found.readOwn, 'ALLOWED');
          if (network === 'namespace') {
            assert.match(found.tcp, /^denied/);
            assert.equal(listener.connections(), 0);
          }
          assert.match(t.events.find((e) => e.name === 'sandbox')?.message ?? '', /file system confined/);
          await new Promise((r) => setTimeout(r, 300));
          assert.deepEqual(processesRunning('sleep', '31.337'), [], 'a grandchild in its own session outlived the rollout');
        } finally {
          listener.close();
          rmSync(dirname(hostFile), { recursive: true, force: true });
          rmSync(join(fixture('py-probe'), 'written.txt'), { force: true });
          await rt.close();
        }
      },
    );
  }
});
