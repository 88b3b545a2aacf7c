// "Edit a Copy…" makes a copy that type-checks in the editor: the real TypeScript compiler, run on a
// real h0 copied out of a real archive, fails with "Cannot find module 'whale-harness'" without the
// tsconfig beside the copies and passes with it; the candidate's own folder gains no file.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HarnessArchive } from '../../src/archive/harnessArchive.js';
import { getDomain } from '../../src/domains/index.js';
import { prepareProposalTypes } from '../../src/extension/model/proposalTypes.js';

const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));
const sdk = fileURLToPath(new URL('../../src/harness/sdk.ts', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'whale-proposal-'));
after(() => rmSync(root, { recursive: true, force: true }));

test('Edit a Copy: the copy type-checks with the tsconfig beside it, and not without', { timeout: 120_000 }, async () => {
  const archive = await HarnessArchive.open(join(root, 'archive.git'));
  const h0 = (await archive.add(getDomain('kbqa').h0Dir, { parents: [], message: 'h0' })).treeHash;
  const proposals = join(root, 'harnesses', 'proposals');
  const dest = join(proposals, 'mine');
  await archive.materialize(h0, dest);
  const before = readdirSync(dest).sort();
  const check = (args: string[]) => spawnSync(process.execPath, [tsc, ...args], { cwd: proposals, encoding: 'utf8', timeout: 100_000 });

  const bare = check(['--noEmit', '--strict', '--target', 'ES2022', '--module', 'ESNext', '--moduleResolution', 'Bundler', join(dest, 'harness.ts')]);
  assert.notEqual(bare.status, 0);
  assert.match(bare.stdout, /Cannot find module 'whale-harness'/);

  const r = prepareProposalTypes(proposals, sdk);
  assert.equal(r.written, true);
  const typed = check(['-p', '.']);
  assert.equal(typed.status, 0, typed.stdout + typed.stderr);
  assert.deepEqual(readdirSync(dest).sort(), before, "nothing is written inside the copy (its tree hash stays the candidate's)");

  // A real type error in the copy is reported (the check is not vacuous), and a user's own tsconfig is kept.
  writeFileSync(join(dest, 'broken.ts'), "import { defineHarness } from 'whale-harness';\nconst n: number = defineHarness;\nexport { n };\n");
  assert.match(check(['-p', '.']).stdout, /broken\.ts.*TS2322/);
  writeFileSync(r.tsconfig, '{}');
  assert.equal(prepareProposalTypes(proposals, sdk).written, false);
  assert.ok(existsSync(join(proposals, '.whale-sdk', 'whale-harness.ts')));
});
