// "Propose from Here with the LLM…": a person's proposal seed (archive/proposalSeed.ts) reaches the
// llm proposer of the next harness round as an instruction to derive from that candidate, is
// journaled with the proposal it shaped, and is consumed (the next round does not see it). A real
// engine run (embedded policy, kbqa) with the real Anthropic SDK against the local wire-format server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HarnessArchive } from '../../src/archive/harnessArchive.js';
import { proposalSeedFile, readProposalSeed, writeProposalSeed } from '../../src/archive/proposalSeed.js';
import type { JournalEntry } from '../../src/archive/journal.js';
import { Engine } from '../../src/engine/engine.js';
import { parseSessionLog, renderProposerTranscript } from '../../src/extension/model/proposerTranscript.js';
import { FakeLlmServer } from '../support/fakeLlmServer.js';
import { smallProject } from '../support/smallProject.js';

test('a proposal seed steers the next llm round to its candidate, is journaled with the proposal, and is consumed', { timeout: 600_000 }, async () => {
  // The "model" reads the seeded candidate's manifest (named in its first message), then finishes.
  const server = await new FakeLlmServer((req) => {
    const named = /derive from candidate ([0-9a-f]{12})/.exec(req.userText)?.[1];
    return req.toolResults.length === 0 && named
      ? {
          text: 'Reading the candidate I was asked to start from.',
          toolCalls: [{ name: 'read_file', args: { candidate: named, path: 'harness.json' } }],
          usage: { input: 100, output: 10 },
        }
      : { toolCalls: [{ name: 'finish', args: { report: 'looked, changed nothing' } }], usage: { input: 100, output: 10 } };
  }).start();
  const prevKey = process.env.ANTHROPIC_API_KEY;
  process.env.ANTHROPIC_API_KEY = 'sk-ant-test';
  const made = smallProject('llm-seed', {
    name: 'llm-seed',
    domain: { id: 'kbqa', options: { sizes: { weight: 16, harness: 4, val: 4, test: 4 } } },
    method: 'harness-only',
    evaluation: { k: 1, concurrency: 4 },
    search: {
      proposer: 'llm',
      candidatesPerRound: 1,
      llm: {
        provider: 'anthropic',
        model: 'claude-seed',
        baseUrl: server.anthropicBaseUrl,
        price: { inputPerMillion: 1, outputPerMillion: 1 },
        retryBaseMs: 20,
        retryMaxMs: 100,
      },
    },
    schedule: { iterations: 2, cycles: 1 },
  });
  const p = made.engineProject();
  try {
    // A candidate in the archive, and the seed that names it.
    const mine = join(made.dir, 'mine');
    cpSync(join(made.dir, 'h0'), mine, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(mine, 'harness.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(mine, 'harness.json'), JSON.stringify({ ...manifest, description: 'hand-made' }, null, 2));
    const archive = await HarnessArchive.open(join(p.storeDir, 'archive.git'));
    // Archived by an earlier run (not this run's, so not in its view until the seed brings it in).
    const seeded = (await archive.add(mine, { parents: [], message: 'an earlier run', meta: { run: 'an-earlier-run', origin: 'proposer', round: 1 } }))
      .treeHash;
    assert.throws(() => writeProposalSeed(p.storeDir, { treeHash: 'nothex' }), /proposal-seed\.json: treeHash: a candidate tree hash/);
    writeProposalSeed(p.storeDir, { treeHash: seeded, direction: 'quote the passage before answering' });
    assert.equal(readProposalSeed(p.storeDir)?.treeHash, seeded);

    const engine = await Engine.create(p, { log: () => {} });
    try {
      await engine.run();
      const entries = (engine as unknown as { ctx: { journal: { all(): JournalEntry[] } } }).ctx.journal.all();
      const proposals = entries.filter((e) => e.type === 'proposal');
      assert.equal(proposals.length, 2, 'two harness phases, one proposal round each');
      assert.deepEqual(proposals[0].seed, { treeHash: seeded, direction: 'quote the passage before answering' });
      assert.equal(proposals[1].seed, undefined, 'the seed shaped one round only');
      // The session as the cockpit renders it, from the real log: the tool call folded with its arguments and answer.
      const md = renderProposerTranscript({
        run: engine.runId,
        phase: Number(proposals[0].phase),
        session: { round: 1, proposer: 'llm', dollars: Number(proposals[0].dollars), candidates: 0, report: String(proposals[0].report) },
        log: parseSessionLog(readFileSync(join(p.storeDir, 'runs', engine.runId, String(proposals[0].sessionLog)), 'utf8')),
        candidates: [],
      });
      assert.ok(md.includes(`<details><summary>🔧 read_file(candidate: ${seeded.slice(0, 12)}, path: harness.json) → `), md);
      assert.ok(md.includes('"description": "hand-made"'), "the tool's answer (the manifest it read) is in the document");
      assert.match(md, /^> Reading the candidate I was asked to start from\.$/m);
      assert.match(md, /\*\*llm proposer · anthropic claude-seed\*\* · 2 model call\(s\), 2 tool call\(s\)/);
    } finally {
      await engine.close();
    }
    const firsts = server.requests.filter((r) => r.toolResults.length === 0);
    assert.equal(firsts.length, 2, 'one session per round');
    assert.ok(
      firsts[0].userText.includes(`derive from candidate ${seeded.slice(0, 12)}`) && firsts[0].userText.includes('"quote the passage before answering"'),
      firsts[0].userText,
    );
    assert.ok(!firsts[1].userText.includes(seeded.slice(0, 12)), firsts[1].userText);
    assert.equal(existsSync(proposalSeedFile(p.storeDir)), false, 'consumed');
  } finally {
    if (prevKey === undefined) delete process.env.ANTHROPIC_API_KEY;
    else process.env.ANTHROPIC_API_KEY = prevKey;
    await server.close();
  }
});
