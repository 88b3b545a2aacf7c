// The byte-offset index that lets the editor open one trajectory out of thousands: offsets and
// summaries right (multi-byte text, long verdicts), extended when the file grows, rebuilt when it
// is rewritten, and never indexing a line still being written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findTrajectory, indexJsonl, readTrajectoryAt } from '../../src/archive/jsonlIndex.js';
import { failingRolloutsIn } from '../../src/archive/failingTrajectories.js';
import type { Trajectory } from '../../src/core/trajectory.js';
import { multiTurn } from './trajectory-fixtures.js';

function many(n: number, from = 0): Trajectory[] {
  return Array.from({ length: n }, (_, j) => {
    const i = from + j;
    return multiTurn({
      id: `traj-${i}`,
      taskId: `task-${i % 7}`,
      sampleIndex: Math.floor(i / 7),
      finalAnswer: i % 5 === 0 ? 'ünïcødé ✓ '.repeat(50) : 'Tokyo',
      verdict: { pass: i % 3 === 0, score: i % 3 === 0 ? 1 : 0, extracted: null, reason: i === 11 ? 'r'.repeat(10_000) : 'because' },
      termination: i % 4 === 0 ? 'turn_limit' : 'answered',
    });
  });
}
const lines = (ts: Trajectory[]) => ts.map((t) => JSON.stringify(t) + '\n').join('');

test('index: each line found by offset, with id, task, sample, verdict and termination from its head and tail', { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'whale-jsonl-'));
  const file = join(dir, 'trajectories.jsonl');
  const ts = many(300);
  writeFileSync(file, lines(ts));
  const idx = await indexJsonl(file);
  assert.equal(idx.lines.length, 300);
  for (const i of [0, 5, 11, 150, 299]) {
    assert.deepEqual(readTrajectoryAt(idx, i), JSON.parse(JSON.stringify(ts[i])), `line ${i} reads back whole`);
    const e = idx.lines[i];
    assert.equal(e.id, `traj-${i}`);
    assert.equal(e.taskId, `task-${i % 7}`);
    assert.equal(e.sampleIndex, Math.floor(i / 7));
    assert.equal(e.termination, i === 11 ? undefined : i % 4 === 0 ? 'turn_limit' : 'answered');
    assert.equal(e.pass, i === 11 ? undefined : i % 3 === 0, 'a verdict beyond the tail bytes is unknown, not guessed');
  }
  assert.equal(findTrajectory(idx, 'traj-150'), 150);
  assert.equal(findTrajectory(idx, 'nope'), -1);
  const failing = failingRolloutsIn(idx.lines, 'task-4');
  assert.deepEqual(
    failing.map((f) => f.id),
    ts.filter((t) => t.taskId === 'task-4' && !t.verdict.pass).map((t) => t.id),
  );
  assert.equal(await indexJsonl(file), idx, 'unchanged size and mtime: the cached index');
});

test('index: a growing file is extended from where it stopped; a half-written line waits; a rewritten file is re-read', { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'whale-jsonl-'));
  const file = join(dir, 'trajectories.jsonl');
  writeFileSync(file, lines(many(10)));
  const first = await indexJsonl(file);
  const torn = JSON.stringify(many(1, 10)[0]);
  appendFileSync(file, torn.slice(0, 200));
  const grown = await indexJsonl(file);
  assert.equal(grown.lines.length, 10, 'the unfinished line is not indexed');
  assert.equal(grown.indexedBytes, first.indexedBytes);
  appendFileSync(file, torn.slice(200) + '\n' + lines(many(5, 11)));
  const done = await indexJsonl(file);
  assert.equal(done.lines.length, 16);
  assert.equal(readTrajectoryAt(done, 10).id, 'traj-10');
  assert.equal(readTrajectoryAt(done, 15).id, 'traj-15');
  writeFileSync(file, lines(many(3, 100)) + '{"id":"bad"}\n');
  const rewritten = await indexJsonl(file);
  assert.deepEqual(
    rewritten.lines.map((l) => l.id),
    ['traj-100', 'traj-101', 'traj-102', 'bad'],
  );
  assert.throws(() => readTrajectoryAt(rewritten, 3), new RegExp(`${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:4: not a trajectory: runId|domain|`));
  assert.throws(() => readTrajectoryAt(rewritten, 9), /no trajectory 9 \(the file has 4\)/);
});
