import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parquetWriteFile } from 'hyparquet-writer';
import { InputError } from '../../src/core/errors.js';
import { readTableFile } from '../../src/domains/data/tableFile.js';

const dir = mkdtempSync(join(tmpdir(), 'whale-table-'));

test('reads Parquet written by an independent writer, with list columns and int64 ids', async () => {
  const f = join(dir, 't.parquet');
  parquetWriteFile({
    filename: f,
    columnData: [
      { name: 'id', data: [BigInt(7), BigInt(8)], type: 'INT64' },
      { name: 'question', data: ['who wrote hamlet?', 'capital of peru?'], type: 'STRING' },
      { name: 'golden_answers', data: [['Shakespeare', 'William Shakespeare'], ['Lima']] },
    ],
  });
  const t = await readTableFile(f);
  assert.equal(t.format, 'parquet');
  assert.deepEqual(
    t.rows.map((r) => r.row),
    [
      { id: 7, question: 'who wrote hamlet?', golden_answers: ['Shakespeare', 'William Shakespeare'] },
      { id: 8, question: 'capital of peru?', golden_answers: ['Lima'] },
    ],
  );
  assert.equal((await readTableFile(f, { limit: 1 })).rows.length, 1);
});

test('reads CSV with a header and JSON lines, naming the line of each row', async () => {
  const c = join(dir, 'p.csv');
  writeFileSync(
    c,
    'PuzzleId,FEN,Moves\n00008,r6k/pp2r2p/4Rp1Q/3p4/8/1N1P2R1/PqP2bPP/7K b - - 0 24,f2g3 e6e7\n\n0000D,5rk1/1p3ppp/pq3b2/8/8/1P1Q1N2/P4PPP/3R2K1 w - - 2 27,d3d6 f8d8\n',
  );
  const t = await readTableFile(c);
  assert.deepEqual(
    t.rows.map((r) => [r.row.PuzzleId, r.line]),
    [
      ['00008', 2],
      ['0000D', 4],
    ],
  );
  const j = join(dir, 't.jsonl');
  writeFileSync(j, '{"q":"a"}\n\n{"q":"b"}\n');
  assert.deepEqual(
    (await readTableFile(j)).rows.map((r) => [r.row.q, r.line]),
    [
      ['a', 1],
      ['b', 3],
    ],
  );
});

test('bad input names the file and line', async () => {
  const j = join(dir, 'bad.jsonl');
  writeFileSync(j, '{"q":"a"}\n{"q": nope}\n');
  await assert.rejects(readTableFile(j), (e: unknown) => e instanceof InputError && e.message.startsWith(`${j}:2:`));
  const c = join(dir, 'bad.csv');
  writeFileSync(c, 'a,b\n1,2\n3,4,5\n');
  await assert.rejects(readTableFile(c), (e: unknown) => e instanceof InputError && e.message.startsWith(`${c}:3:`));
  const p = join(dir, 'bad.parquet');
  writeFileSync(p, 'PAR1 not really');
  await assert.rejects(readTableFile(p), (e: unknown) => e instanceof InputError && /Parquet/.test(e.message));
  await assert.rejects(readTableFile(join(dir, 'missing.csv')), (e: unknown) => e instanceof InputError && /ENOENT/.test(e.message));
});
