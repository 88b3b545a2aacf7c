// The `whale-trajectory:` address: what toUri writes, fromUri reads back, with a readable title,
// and a clear error for anything else.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { refFromParts, refToParts } from '../../src/extension/trajectories/ref.js';

test('a trajectory address round-trips: store, key hash, line, id, task and sample', () => {
  const ref = {
    store: '/home/ana/my project/.whale',
    keyHash: '1cb556ad479e5212e0df70b3',
    index: 1234,
    id: 'h-kbqa-0200-3-ab&c',
    taskId: 'kbqa-weight-0200',
    sample: 3,
  };
  const parts = refToParts(ref);
  assert.equal(parts.path, '/1cb556ad479e5212e0df70b3/1234/kbqa-weight-0200-s3.whale-transcript');
  assert.deepEqual(refFromParts(parts.path, parts.query), ref);
  const bare = refToParts({ store: '/s', keyHash: 'abcdef0123', index: 0 });
  assert.equal(bare.path, '/abcdef0123/0/trajectory.whale-transcript');
  assert.deepEqual(refFromParts(bare.path, bare.query), { store: '/s', keyHash: 'abcdef0123', index: 0, taskId: 'trajectory' });
  assert.match(refToParts({ ...ref, taskId: 'a/b c' }).path, /\/a_b_c-s3\.whale-transcript$/, 'a task id never adds path segments');
});

test('an address that is not a trajectory says what is wrong', () => {
  assert.throws(
    () => refFromParts('/etc/passwd', 'store=/s'),
    /not a trajectory address: \/etc\/passwd \(expected \/<key hash>\/<line>\/<title>\.whale-transcript\)/,
  );
  assert.throws(() => refFromParts('/abcdef0123/4/t.whale-transcript', ''), /names no run store/);
});
