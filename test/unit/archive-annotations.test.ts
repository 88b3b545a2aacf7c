// Annotations in the run store, and what the editor's trajectory features read from a real run:
// a note saved before a harness phase reaches the proposer's ArchiveView (a deleted one does not);
// the failing-trajectories model and the dashboard snapshot come from the run's own journal and
// results; a real failing trajectory renders.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { addAnnotation, annotationsFile, annotationsFor, deleteAnnotation, readAnnotations } from '../../src/archive/annotationStore.js';
import { failingCandidates, failingRollouts, failingTasks } from '../../src/archive/failingTrajectories.js';
import { indexJsonl, readTrajectoryAt } from '../../src/archive/jsonlIndex.js';
import { ResultStore } from '../../src/archive/resultStore.js';
import { DashboardSnapshot } from '../../src/core/dashboardContract.js';
import { Engine } from '../../src/engine/engine.js';
import type { JournalEntry } from '../../src/archive/journal.js';
import { loadDashboard } from '../../src/report/dashboardData.js';
import { renderTranscript } from '../../src/report/transcript.js';
import { KnobProposer } from '../../src/search/knobProposer.js';
import type { Annotation } from '../../src/archive/annotationStore.js';
import type { Proposer } from '../../src/search/proposer.js';
import { smallProject } from '../support/smallProject.js';

test('store: add, read back, delete; a torn line and hand-edited garbage hide nothing; bad input says what', () => {
  const run = mkdtempSync(join(tmpdir(), 'whale-notes-'));
  const a = addAnnotation(run, {
    text: 'turn 2 ignores the tool output',
    trajectoryId: 't1',
    turn: 1,
    harnessHash: 'h',
    taskId: 'task-1',
    keyHash: 'k',
    author: 'ana',
  });
  appendFileSync(annotationsFile(run), '{"op":"add","text":"torn'); // a crash mid-write
  const b = addAnnotation(run, { text: 'whole trajectory: loops', trajectoryId: 't1' });
  appendFileSync(annotationsFile(run), 'not json at all\n{"text":"an older note without id"}\n');
  const notes = readAnnotations(run);
  assert.deepEqual(
    notes.map((n) => n.text),
    ['turn 2 ignores the tool output', 'whole trajectory: loops', 'an older note without id'],
  );
  assert.equal(notes[0].author, 'ana');
  assert.equal(notes[0].turn, 1);
  assert.match(notes[0].createdAt, /^\d{4}-\d\d-\d\dT/);
  assert.deepEqual(
    annotationsFor(notes, 't1').map((n) => n.id),
    [b.id, a.id],
    'whole-trajectory notes first, then by turn',
  );
  assert.equal(deleteAnnotation(run, a.id), true);
  assert.equal(deleteAnnotation(run, a.id), false, 'already deleted');
  assert.deepEqual(
    readAnnotations(run).map((n) => n.id),
    [b.id, 'line-5'],
  );
  assert.throws(() => addAnnotation(run, { text: '   ' }), /annotation text: an annotation needs some text/);
  assert.throws(() => addAnnotation(run, { text: 'x', turn: -1 } as never), /annotation turn: /);
});

function project() {
  return smallProject('notes-run', {
    name: 'notes',
    domain: { id: 'ramble', options: { sizes: { weight: 16, harness: 8, val: 8, test: 8 } } },
    method: 'harness-only',
    evaluation: { k: 1, concurrency: 8 },
    search: { candidatesPerRound: 1 },
    schedule: { iterations: 2, cycles: 1 },
  }).engineProject();
}

test(
  'a saved annotation reaches the ArchiveView of the next harness phase; the failing view and dashboard read the real run',
  { timeout: 600_000 },
  async () => {
    const p = project();
    const seen: Annotation[][] = [];
    const knob = new KnobProposer();
    const recording: Proposer = { kind: 'knob', propose: (req) => (seen.push(req.view.annotations), knob.propose(req)) };
    const engine = await Engine.create(p, { log: () => {}, proposer: recording });
    const runDir = (engine as unknown as { ctx: { runDir: string } }).ctx.runDir;
    const kept = addAnnotation(runDir, {
      text: 'the harness never retries after a parse error',
      harnessHash: 'h0hash',
      taskId: 'ramble-1',
      trajectoryId: 'x',
      turn: 0,
      author: 'tester',
    });
    const gone = addAnnotation(runDir, { text: 'deleted before the phase' });
    deleteAnnotation(runDir, gone.id);
    let entries: readonly JournalEntry[];
    try {
      const out = await engine.run();
      assert.equal(out.reason, 'schedule complete');
      entries = (engine as unknown as { ctx: { journal: { all(): JournalEntry[] } } }).ctx.journal.all();
    } finally {
      await engine.close();
    }
    assert.ok(seen.length >= 1, 'the proposer was asked');
    assert.deepEqual(
      seen[0].map((n) => n.text),
      ['the harness never retries after a parse error'],
    );
    assert.deepEqual({ ...seen[0][0] }, { ...kept });

    // The Failing Trajectories model over the same store.
    const candidates = failingCandidates(entries);
    assert.ok(candidates.length >= 2, 'the seed and at least one proposal (or validation) under the current version');
    const version = entries.filter((e) => e.type === 'candidate_scored').pop()!.version;
    assert.ok(candidates.every((c) => c.policyVersion === version));
    const results = new ResultStore(p.storeDir);
    const withFailures = candidates.find((c) => failingTasks(results.taskResults(c.keyHash) ?? []).length > 0);
    assert.ok(withFailures, 'the small untrained policy fails some tasks');
    const task = failingTasks(results.taskResults(withFailures.keyHash)!)[0];
    assert.ok(task.passes < task.samples);
    const file = results.trajectoriesFile(withFailures.keyHash);
    const rollouts = await failingRollouts(file, task.taskId);
    assert.equal(rollouts.length, task.samples - task.passes, 'one failing rollout per failed sample');
    const t = readTrajectoryAt(await indexJsonl(file), rollouts[0].line);
    assert.equal(t.id, rollouts[0].id);
    assert.equal(t.verdict.pass, false);
    assert.equal(t.harnessHash, withFailures.treeHash);
    assert.ok(
      t.modelCalls.every((c) => typeof c.t === 'number'),
      'the runtime records when each call was sent',
    );
    const tr = renderTranscript(t);
    assert.match(tr.text, new RegExp(`^verdict {5}FAIL .*${t.verdict.reason.slice(0, 20).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 'm'));
    assert.equal(tr.text.split('\n').filter((l) => l.startsWith('▶ model call')).length, t.modelCalls.length);

    // The dashboard's snapshot of the store: this run's curve and ledger, valid under the contract.
    const snap = loadDashboard(p.storeDir);
    assert.equal(DashboardSnapshot.safeParse(snap).success, true);
    assert.equal(snap.runs.length, 1);
    const r = snap.runs[0];
    assert.equal(r.method, 'harness-only');
    assert.equal(r.status, 'completed');
    assert.ok(r.curve.length >= 1 && r.curve.every((pt, i) => i === 0 || (pt.x >= r.curve[i - 1].x && pt.y >= r.curve[i - 1].y)), 'best-so-far never falls');
    assert.ok(r.ledger.searchRollouts > 0 && r.ledger.evalRollouts > 0 && r.ledger.trainingRollouts === 0);
    assert.deepEqual(
      snap.methods.map((m) => [m.method, m.runs]),
      [['harness-only', [r.id]]],
    );
    assert.match(readFileSync(join(runDir, 'journal.jsonl'), 'utf8'), /"type":"run_completed"/);

    // The same notes from a terminal: `whale annotate` on that real trajectory.
    const dev = fileURLToPath(new URL('../../src/cli/dev.ts', import.meta.url));
    const tsx = fileURLToPath(new URL('../../node_modules/tsx/dist/esm/index.mjs', import.meta.url));
    const whale = (...args: string[]) =>
      spawnSync(process.execPath, ['--import', tsx, dev, 'annotate', '--store', p.storeDir, ...args], { encoding: 'utf8', timeout: 120_000 });
    const added = whale('--key', withFailures.keyHash, '--trajectory', t.id, '--turn', '1', '--author', 'cli-user', 'answers', 'before', 'searching');
    assert.equal(added.status, 0, added.stderr);
    const id = added.stdout.trim();
    const listed = JSON.parse(whale('--list', '--json').stdout) as Annotation[];
    const mine = listed.find((n) => n.id === id)!;
    assert.deepEqual([mine.text, mine.turn, mine.taskId, mine.harnessHash, mine.author], ['answers before searching', 0, t.taskId, t.harnessHash, 'cli-user']);
    const badTurn = whale('--key', withFailures.keyHash, '--trajectory', t.id, '--turn', '99', 'x');
    assert.equal(badTurn.status, 2);
    assert.match(badTurn.stderr, new RegExp(`--turn: turns are numbered 1\\.\\.${t.modelCalls.length} in this trajectory, got 99`));
    assert.equal(whale('--key', withFailures.keyHash, '--trajectory', 'nope', 'x').status, 2);
    assert.equal(whale('--delete', id).status, 0);
    assert.ok(!readAnnotations(runDir).some((n) => n.id === id));
  },
);

test('dashboard: a store without runs is an empty snapshot, not an error', () => {
  const empty = loadDashboard(join(tmpdir(), 'whale-no-such-store-' + process.pid));
  assert.deepEqual([empty.runs.length, empty.error], [0, undefined]);
});
