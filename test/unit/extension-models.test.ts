// The side bar's tree models (vscode-free) on real run stores: a real `whale run` followed live,
// killed mid-phase, reported as interrupted, resumed to the end; the archive model from the same store.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HarnessArchive } from '../../src/archive/harnessArchive.js';
import { archiveModel, candidateTooltip, compareTable, describeCandidate } from '../../src/extension/model/archiveModel.js';
import { JournalTail } from '../../src/extension/model/journalTail.js';
import { RunsFeed, describePhase, describeRun, type RunNode } from '../../src/extension/model/runsModel.js';
import { until } from '../support/until.js';
import { smallProject } from '../support/smallProject.js';

const dev = fileURLToPath(new URL('../../src/cli/dev.ts', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/tsx/dist/esm/index.mjs', import.meta.url));

test('JournalTail reads only appended bytes, waits for an unfinished line, and starts over when the file shrank', () => {
  const dir = mkdtempSync(join(tmpdir(), 'whale-tail-'));
  const f = join(dir, 'journal.jsonl');
  const tail = new JournalTail(f);
  assert.deepEqual(tail.read(), { entries: [], changed: false }, 'no file yet');
  const a = JSON.stringify({ type: 'a', at: 't' }) + '\n';
  writeFileSync(f, a);
  assert.equal(tail.read().entries.length, 1);
  assert.equal(tail.bytesRead, Buffer.byteLength(a));
  assert.equal(tail.read().changed, false, 'nothing new');
  const b = JSON.stringify({ type: 'b', at: 't', text: 'ünïcode' });
  appendFileSync(f, b.slice(0, 10));
  assert.equal(tail.read().changed, false, 'half a line is not an entry yet');
  appendFileSync(f, b.slice(10) + '\n');
  const r = tail.read();
  assert.equal(r.changed, true);
  assert.deepEqual(
    r.entries.map((e) => e.type),
    ['a', 'b'],
  );
  assert.equal((r.entries[1] as { text?: string }).text, 'ünïcode');
  // A crash tears a line; the resuming engine cuts it off and appends after it.
  appendFileSync(f, '{"type":"torn"\n');
  assert.deepEqual(
    tail.read().entries.map((e) => e.type),
    ['a', 'b'],
    'a torn line is not an entry',
  );
  const size = Buffer.byteLength(a) + Buffer.byteLength(b) + 1;
  truncateSync(f, size);
  appendFileSync(f, JSON.stringify({ type: 'c', at: 't' }) + '\n');
  assert.deepEqual(
    tail.read().entries.map((e) => e.type),
    ['a', 'b', 'c'],
    'read on from where the torn line began',
  );
  truncateSync(f, 0);
  writeFileSync(f, JSON.stringify({ type: 'z', at: 't' }) + '\n');
  assert.deepEqual(
    tail.read().entries.map((e) => e.type),
    ['z'],
    'a shorter file is read from the start',
  );
});

function project(): string {
  return smallProject('views', {
    name: 'views',
    domain: { id: 'ramble', options: { sizes: { weight: 16, harness: 8, val: 8, test: 8 } } },
    method: 'whale',
    evaluation: { k: 1, concurrency: 8 },
    rsft: { batchPrompts: 8, groupSize: 2 },
    search: { candidatesPerRound: 2 },
    schedule: { epochs: 1, iterations: 2, cycles: 1 },
  }).dir;
}

test(
  'Runs model: a terminal `whale run` shows up live, a killed engine is reported as interrupted, a resumed run completes',
  { timeout: 600_000 },
  async () => {
    const dir = project();
    const feed = new RunsFeed(join(dir, '.whale'));
    assert.deepEqual(feed.refresh().runs, []);
    const child = spawn(process.execPath, ['--import', tsx, dev, 'run'], { cwd: dir, stdio: 'ignore' });
    const exited = new Promise<void>((r) => child.on('exit', () => r()));
    let live: RunNode | undefined;
    try {
      // Live: the weight phase is running in the child; the feed sees it without being told.
      live = await until('a running weight phase', () => {
        const r = feed.refresh().runs[0];
        return r?.status === 'running' && r.current?.kind === 'weight' ? r : undefined;
      });
      assert.equal(live.pid, child.pid);
      assert.match(describeRun(live), /^running · phase 0 \(weight\) of cycle 0/);
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
    const dead = feed.refresh().runs[0];
    assert.equal(dead.status, 'interrupted');
    assert.match(dead.detail!, new RegExp(`pid ${child.pid}\\) ended during phase 0`));
    assert.equal(dead.current?.status, 'interrupted');

    const resumed = spawnSync(process.execPath, ['--import', tsx, dev, 'run', '--resume'], { cwd: dir, encoding: 'utf8', timeout: 500_000 });
    assert.equal(resumed.status, 0, resumed.stderr);
    const { runs, changed } = feed.refresh();
    assert.equal(changed, true);
    assert.equal(runs.length, 1);
    const done = runs[0];
    assert.equal(done.id, live.id);
    assert.equal(done.status, 'finished');
    assert.equal(done.detail, 'schedule complete');
    assert.deepEqual(
      done.cycles.map((c) => c.phases.map((p) => `${p.kind}:${p.status}`)),
      [['weight:done', 'harness:done']],
    );
    const [w, h] = done.cycles[0].phases;
    assert.equal(w.steps, 2, '16 weight tasks, B 8, one epoch');
    assert.equal(w.rollouts, 32, 'two steps of 8 × 2');
    assert.ok(w.validation && w.validation.k === 1);
    assert.equal(h.rounds, 1);
    assert.equal(h.roundsPlanned, 1);
    assert.ok(h.scored! >= 1 && h.accepted);
    assert.deepEqual(
      h.sessions?.map((x) => [x.round, x.proposer, x.dollars]),
      [[1, 'knob', 0]],
      "the round's proposer session, browsable under its phase",
    );
    assert.ok(h.sessions![0].candidates >= 1 && h.sessions![0].report.length > 0, 'with its candidates and report');
    // The phase as rounds → candidates, the accepted one marked by its rule (the real engine's journal).
    assert.deepEqual(
      h.roundsDetail!.map((r) => r.round),
      [0, 1],
    );
    assert.ok(
      h
        .roundsDetail!.flatMap((r) => r.candidates)
        .filter((c) => c.accepted)
        .every((c) => c.treeHash === h.accepted),
    );
    assert.ok(
      h.roundsDetail!.some((r) => r.candidates.some((c) => c.accepted)),
      'the accepted harness is marked in its round',
    );
    assert.equal(h.acceptance?.rule, 'archive-best');
    assert.equal(h.acceptance?.chosen, h.accepted);
    assert.equal(done.policies.get(done.state!.version), 'policy after phase 0', 'the trained policy is named by its phase');
    assert.match(describePhase(h), /^round 1\/1, \d+ scored.* · val mean@1 \d+\.\d% ± \d+\.\d · \d+ rollouts$/);
    assert.equal(h.rollouts + w.rollouts, done.state!.ledger.trainingRollouts + done.state!.ledger.searchRollouts, 'the phases add up to the ledger');
    assert.equal(feed.refresh().changed, false, 'a finished run is not re-read');

    // The archive model on the same store.
    const archive = await HarnessArchive.open(join(dir, '.whale', 'archive.git'));
    const candidates = await archive.list();
    const model = archiveModel(candidates, new Map([[done.id, feed.entries(done.id)]]));
    assert.equal(model.roots.length, 1, 'h0 is the only root; every proposal hangs below its parent');
    const root = model.nodes.get(model.roots[0])!;
    assert.equal(root.origin, 'seed');
    assert.equal(model.nodes.size, candidates.length);
    assert.ok(root.children.length >= 1);
    const accepted = [...model.nodes.values()].filter((n) => n.accepted.length > 0);
    assert.deepEqual(
      accepted.map((n) => n.treeHash),
      [h.accepted],
    );
    assert.deepEqual(model.nodes.get(h.accepted!)!.incumbentOf, [done.id]);
    for (const n of model.nodes.values()) {
      if (n.scores.length) assert.match(describeCandidate(n, model.policies), /^\d+\.\d% ± \d+\.\d under (base|policy after phase 0)( · |$)/);
      for (const i of n.invalid) assert.ok(i.reasons.length > 0 && candidateTooltip(n).includes(i.reasons[0]));
    }
    assert.match(describeCandidate(model.nodes.get(h.accepted!)!), /✓ accepted ×1/);
    const derived = model.nodes.get(root.children[0])!;
    const table = compareTable(root, derived).split('\n');
    assert.equal(table[0], `# ${root.treeHash.slice(0, 8)} ↔ ${derived.treeHash.slice(0, 8)}`);
    assert.ok(table.includes(`| origin | seed | proposer | |`));
    const rows = table.filter((l) => l.startsWith('| mean on the harness split under'));
    assert.ok(
      rows.length >= 1 && rows.every((l) => /\| (\d+\.\d% ± \d+\.\d|—) \| (\d+\.\d% ± \d+\.\d|—) \| ([+−]\d+\.\d \(± \d+\.\d\))? \|$/.test(l)),
      table.join('\n'),
    );
  },
);
