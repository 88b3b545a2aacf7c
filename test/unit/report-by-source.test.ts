import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sourceTable, sourceTableBlock } from '../../src/report/bySource.js';
import type { Trajectory } from '../../src/core/trajectory.js';
import { synthetic } from '../support/syntheticTrajectory.js';

const traj = (
  i: number,
  source: string | undefined,
  pass: boolean,
  hit: boolean,
  calls: number,
  termination: Trajectory['termination'] = 'answered',
): Trajectory => ({
  ...synthetic(i),
  termination,
  verdict: { pass, score: pass ? 1 : 0, extracted: 'x', reason: pass ? 'exact match' : 'wrong' },
  ...(source === undefined ? {} : { diagnostics: { data_source: source, retrieval_hit: hit, search_calls: calls, note: 'text is ignored' } }),
});

test('by-source table: pass rate and diagnostic means per data_source; booleans as rates; infrastructure failures left out', () => {
  const t = sourceTable([
    traj(1, 'nq', true, true, 1),
    traj(2, 'nq', false, true, 3),
    traj(3, 'musique', false, false, 2),
    traj(4, 'musique', false, true, 2, 'infra_error'),
  ])!;
  assert.equal(t.infra, 1);
  assert.deepEqual(
    t.rows.map((r) => [r.source, r.rollouts, r.passRate, r.means]),
    [
      ['musique', 1, 0, { retrieval_hit: 0, search_calls: 2 }],
      ['nq', 2, 0.5, { retrieval_hit: 1, search_calls: 2 }],
    ],
  );
  const block = sourceTableBlock({ split: 'test', keyHash: 'k', ...t });
  assert.deepEqual(block.header, ['source', 'rollouts', 'pass (%)', 'retrieval_hit (%)', 'search_calls (mean)']);
  assert.deepEqual(block.rows[1], ['nq', '2', '50.0', '100.0', '2.00']);
  // A domain without data_source in its diagnostics gets no table.
  assert.equal(sourceTable([traj(5, undefined, true, true, 1)]), undefined);
});

test('by-rating-band table (chess): solved rate per ratingBand, bands in numeric order, the column named for the key', () => {
  const chess = (i: number, band: string, pass: boolean, legal: number): Trajectory => ({
    ...synthetic(i),
    termination: 'answered',
    verdict: { pass, score: pass ? 1 : 0, extracted: 'e2e4', reason: pass ? 'solved' : 'wrong' },
    diagnostics: { ratingBand: band, solved: pass, legalMoveRate: legal },
  });
  const t = sourceTable(
    [chess(1, '1000-1200', true, 1), chess(2, '800-1000', false, 0.5), chess(3, '800-1000', true, 1), chess(4, '1000-1200', false, 0)],
    'ratingBand',
  )!;
  assert.equal(t.key, 'ratingBand');
  assert.deepEqual(
    t.rows.map((r) => [r.source, r.rollouts, r.passRate, r.means.legalMoveRate]),
    [
      ['800-1000', 2, 0.5, 0.75],
      ['1000-1200', 2, 0.5, 0.5],
    ],
  );
  const block = sourceTableBlock({ split: 'val', keyHash: 'k', ...t });
  assert.deepEqual(block.header, ['rating band', 'rollouts', 'pass (%)', 'legalMoveRate (mean)', 'solved (%)']);
  // Chess trajectories carry no data_source: only the rating-band table is made for them.
  assert.equal(sourceTable([chess(5, '800-1000', true, 1)]), undefined);
});
