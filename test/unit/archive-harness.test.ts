// The git-backed harness archive on real git: identity, parents, dedupe, refs, notes, materialize, diff, locking.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ArchiveError, HarnessArchive, derivationIn } from '../../src/archive/harnessArchive.js';
import { Journal } from '../../src/archive/journal.js';
import { gitTreeHash } from '../../src/core/treeHash.js';
import type { RunContext } from '../../src/engine/context.js';
import { candidateRecords } from '../../src/engine/harnessPhase.js';
import { getDomain } from '../../src/domains/index.js';

const tsxLoader = fileURLToPath(new URL('../../node_modules/tsx/dist/esm/index.mjs', import.meta.url));
const fileLockModule = new URL('../../src/archive/fileLock.ts', import.meta.url).href;

const root = mkdtempSync(join(tmpdir(), 'whale-archive-'));
after(() => rmSync(root, { recursive: true, force: true }));
const h0 = getDomain('kbqa').h0Dir;
let n = 0;

function git(dir: string, ...args: string[]): string {
  return execFileSync('git', ['--git-dir', dir, ...args], { encoding: 'utf8' }).trim();
}

/** A copy of the kbqa h0 harness, edited by `edit`. */
function candidate(edit: (dir: string) => void = () => undefined): string {
  const dir = join(root, `cand-${n++}`);
  cpSync(h0, dir, { recursive: true });
  edit(dir);
  return dir;
}

function setTopk(dir: string, topk: number): void {
  const f = join(dir, 'harness.json');
  const j = JSON.parse(readFileSync(f, 'utf8'));
  j.settings.topk = topk;
  writeFileSync(f, JSON.stringify(j, null, 2) + '\n');
}

async function fresh(): Promise<HarnessArchive> {
  return HarnessArchive.open(join(root, `archive-${n++}.git`));
}

test('a candidate commit has the folder as its tree: tree hash = gitTreeHash = git rev-parse <commit>^{tree}', async () => {
  const a = await fresh();
  // Subfolders, an executable file, an empty folder, ignored names and a .gitignore that must not apply.
  const dir = candidate((d) => {
    mkdirSync(join(d, 'lib', 'deep'), { recursive: true });
    writeFileSync(join(d, 'lib', 'deep', 'util.ts'), 'export const x = 1;\n');
    writeFileSync(join(d, 'run.sh'), '#!/bin/sh\necho hi\n');
    chmodSync(join(d, 'run.sh'), 0o755);
    mkdirSync(join(d, 'empty'));
    mkdirSync(join(d, 'node_modules', 'x'), { recursive: true });
    writeFileSync(join(d, 'node_modules', 'x', 'index.js'), '');
    writeFileSync(join(d, '.gitignore'), '*.txt\n');
    writeFileSync(join(d, 'notes.txt'), 'kept although .gitignore names it\n');
  });
  const r = await a.add(dir, { parents: [], message: 'h0', meta: { origin: 'seed', round: 0 } });
  assert.equal(r.created, true);
  assert.equal(r.treeHash, gitTreeHash(dir));
  assert.equal(git(a.dir, 'rev-parse', `${r.commit}^{tree}`), r.treeHash);
  assert.equal(git(a.dir, 'rev-parse', `refs/whale/candidates/${r.treeHash}`), r.commit);
  assert.equal(git(a.dir, 'cat-file', '-t', r.commit), 'commit');
  const files = await a.listFiles(r.treeHash);
  assert.deepEqual(files, ['.gitignore', 'harness.json', 'harness.ts', 'lib/deep/util.ts', 'notes.txt', 'run.sh']);
  assert.match(git(a.dir, 'ls-tree', r.treeHash, 'run.sh'), /^100755 blob/);
  assert.equal(await a.has(r.treeHash), true);
  assert.equal(await a.has('0'.repeat(40)), false);
  assert.equal(await a.has('not a hash'), false);
});

test('parents: a child commit points at its parent candidates; list() gives parents, message and meta', async () => {
  const a = await fresh();
  const p = await a.add(candidate(), { parents: [], message: 'h0', meta: { origin: 'seed', round: 0 } });
  const c1 = await a.add(
    candidate((d) => setTopk(d, 3)),
    { parents: [p.treeHash], message: 'topk 1→3', meta: { origin: 'proposer', round: 1, hypothesis: 'the fact is below rank 1', valid: true } },
  );
  const c2 = await a.add(
    candidate((d) => setTopk(d, 2)),
    { parents: [p.treeHash], message: 'topk 1→2', meta: { round: 1 } },
  );
  const x = await a.add(
    candidate((d) => {
      setTopk(d, 4);
    }),
    { parents: [c1.treeHash, c2.treeHash], message: 'crossover', meta: { round: 2 } },
  );
  assert.deepEqual(git(a.dir, 'rev-list', '--parents', '-n', '1', x.commit).split(' ').slice(1), [c1.commit, c2.commit]);
  assert.deepEqual(git(a.dir, 'rev-list', '--parents', '-n', '1', c1.commit).split(' ').slice(1), [p.commit]);
  assert.equal(git(a.dir, 'rev-list', '--parents', '-n', '1', p.commit), p.commit, 'the seed has no parent');
  const list = await a.list();
  assert.deepEqual(
    list.map((c) => c.treeHash),
    [p.treeHash, c1.treeHash, c2.treeHash, x.treeHash],
    'in the order added',
  );
  const byHash = new Map(list.map((c) => [c.treeHash, c]));
  assert.deepEqual(byHash.get(x.treeHash)!.parents, [c1.treeHash, c2.treeHash]);
  assert.deepEqual(byHash.get(c1.treeHash)!.parents, [p.treeHash]);
  assert.equal(byHash.get(c1.treeHash)!.message, 'topk 1→3');
  assert.deepEqual(byHash.get(c1.treeHash)!.meta, { origin: 'proposer', round: 1, hypothesis: 'the fact is below rank 1', valid: true });
  assert.ok(!Number.isNaN(Date.parse(byHash.get(c1.treeHash)!.addedAt)));
  // The metadata is in the commit body (git log shows it), so it survives a plain clone.
  assert.match(git(a.dir, 'log', '-1', '--format=%B', c1.commit), /whale-meta:\n\{"origin":"proposer"/);
  // Unknown parents are refused; nothing is written.
  await assert.rejects(
    a.add(
      candidate((d) => setTopk(d, 5)),
      { parents: ['f'.repeat(40)], message: 'orphan' },
    ),
    ArchiveError,
  );
  await assert.rejects(a.add(candidate(), { parents: ['nope'], message: 'bad' }), /not a parent tree hash/);
  assert.equal((await a.list()).length, 4);
});

test('identical candidates are one candidate: a second add returns the same commit and records the new derivation', async () => {
  const a = await fresh();
  const p = await a.add(candidate(), { parents: [], message: 'h0' });
  const q = await a.add(
    candidate((d) => setTopk(d, 2)),
    { parents: [p.treeHash], message: 'topk 1→2', meta: { round: 1, run: 'r1' } },
  );
  const again = await a.add(
    candidate((d) => setTopk(d, 2)),
    { parents: [p.treeHash], message: 'topk 1→2 again', meta: { round: 4, run: 'r2' } },
  );
  assert.equal(again.created, false);
  assert.equal(again.commit, q.commit);
  assert.equal(again.treeHash, q.treeHash);
  const same = await a.add(candidate(), { parents: [], message: 'h0 once more' });
  assert.equal(same.commit, p.commit);
  const list = await a.list();
  assert.equal(list.length, 2);
  const c = list.find((x) => x.treeHash === q.treeHash)!;
  assert.deepEqual(c.meta, { round: 1, run: 'r1' }, 'the first add’s meta stays');
  assert.equal(c.links.length, 1);
  assert.deepEqual(c.links[0].parents, [p.treeHash]);
  assert.equal(c.links[0].message, 'topk 1→2 again');
  assert.deepEqual(c.links[0].meta, { round: 4, run: 'r2' });
  // setMeta overlays (validity learnt after the add) without changing the commit.
  await a.setMeta(q.treeHash, { valid: false, invalidReasons: ['smoke run: crash'] });
  await a.setMeta(q.treeHash, { proposer: 'knob' });
  const g = (await a.get(q.treeHash))!;
  assert.equal(g.commit, q.commit);
  assert.deepEqual(g.meta, { round: 1, run: 'r1', valid: false, invalidReasons: ['smoke run: crash'], proposer: 'knob' });
  assert.equal(g.links.length, 1, 'links survive a meta update');
  assert.equal(await a.get('e'.repeat(40)), undefined);
  await assert.rejects(a.setMeta('e'.repeat(40), { valid: true }), /not in the archive/);
});

test('refs: setRef/getRef under refs/whale/, listRefs, deleteRef; bad names and unknown candidates refused', async () => {
  const a = await fresh();
  const p = await a.add(candidate(), { parents: [], message: 'h0' });
  const q = await a.add(
    candidate((d) => setTopk(d, 4)),
    { parents: [p.treeHash], message: 'topk 1→4' },
  );
  assert.equal(await a.getRef('runs/r1/accepted/1'), undefined);
  await a.setRef('runs/r1/accepted/1', p.treeHash);
  await a.setRef('refs/whale/runs/r1/accepted/2', q.treeHash);
  assert.equal(await a.getRef('runs/r1/accepted/1'), p.treeHash);
  assert.equal(await a.getRef('refs/whale/runs/r1/accepted/2'), q.treeHash);
  assert.equal(git(a.dir, 'rev-parse', 'refs/whale/runs/r1/accepted/2'), q.commit, 'a ref points at the candidate commit');
  await a.setRef('runs/r1/accepted/1', q.treeHash); // moves
  assert.equal(await a.getRef('runs/r1/accepted/1'), q.treeHash);
  assert.deepEqual(await a.listRefs('runs/r1'), [
    { ref: 'refs/whale/runs/r1/accepted/1', treeHash: q.treeHash },
    { ref: 'refs/whale/runs/r1/accepted/2', treeHash: q.treeHash },
  ]);
  assert.equal((await a.listRefs()).length, 2, 'candidate refs are not listed as run refs');
  await a.deleteRef('runs/r1/accepted/2');
  assert.equal(await a.getRef('runs/r1/accepted/2'), undefined);
  await assert.rejects(a.setRef('runs/bad..name', p.treeHash), /not a valid ref name/);
  await assert.rejects(a.setRef('refs/heads/main', p.treeHash), /refs\/whale/);
  await assert.rejects(a.setRef('runs/r1/x', 'a'.repeat(40)), /not in the archive/);
  await assert.rejects(a.deleteRef(`candidates/${p.treeHash}`), /never removed/);
});

test('materialize round-trips (tree hash, bytes, executable bit); readOnly views; readFile and diff', async () => {
  const a = await fresh();
  const dir = candidate((d) => {
    mkdirSync(join(d, 'lib'));
    writeFileSync(join(d, 'lib', 'x.ts'), 'export const x = 1;\n');
    writeFileSync(join(d, 'tool.sh'), '#!/bin/sh\n');
    chmodSync(join(d, 'tool.sh'), 0o755);
  });
  const p = await a.add(dir, { parents: [], message: 'h0' });
  const out = await a.materialize(p.treeHash, join(root, `mat-${n++}`));
  assert.equal(gitTreeHash(out), p.treeHash);
  for (const f of ['harness.json', 'harness.ts', 'lib/x.ts', 'tool.sh']) assert.deepEqual(readFileSync(join(out, f)), readFileSync(join(dir, f)), f);
  assert.ok(statSync(join(out, 'tool.sh')).mode & 0o100);
  const ro = await a.materialize(p.treeHash, join(root, `mat-${n++}`), { readOnly: true });
  assert.equal(gitTreeHash(ro), p.treeHash, 'read-only files keep the identity');
  assert.equal(statSync(join(ro, 'harness.ts')).mode & 0o222, 0);
  await assert.rejects(a.materialize(p.treeHash, out), /not empty/);
  assert.deepEqual(
    readdirSync(root).filter((x) => x.includes('.tmp-')),
    [],
    'no temporary folder left behind',
  );
  const empty = join(root, `mat-${n++}`);
  mkdirSync(empty);
  assert.equal(gitTreeHash(await a.materialize(p.treeHash, empty)), p.treeHash, 'an empty folder may be the destination');
  await assert.rejects(a.materialize('d'.repeat(40), join(root, `mat-${n++}`)), /not in the archive/);

  assert.equal(await a.readFile(p.treeHash, 'lib/x.ts'), 'export const x = 1;\n');
  assert.equal(JSON.parse(await a.readFile(p.treeHash, 'harness.json')).name, 'kbqa-h0');
  await assert.rejects(a.readFile(p.treeHash, 'missing.ts'), /no file 'missing.ts'/);

  const child = candidate((d) => {
    cpSync(join(dir, 'lib'), join(d, 'lib'), { recursive: true });
    cpSync(join(dir, 'tool.sh'), join(d, 'tool.sh'));
    setTopk(d, 3);
    const f = join(d, 'harness.ts');
    writeFileSync(f, readFileSync(f, 'utf8').replace("const NO_FACTS = 'no facts';", "const NO_FACTS = 'nothing found';"));
  });
  const c = await a.add(child, { parents: [p.treeHash], message: 'edit' });
  const d = await a.diff(p.treeHash, c.treeHash);
  assert.match(d, /^diff --git a\/harness\.json b\/harness\.json$/m);
  assert.match(d, /^-\s+"topk": 1,$/m);
  assert.match(d, /^\+\s+"topk": 3,$/m);
  assert.match(d, /^-const NO_FACTS = 'no facts';$/m);
  assert.match(d, /^\+const NO_FACTS = 'nothing found';$/m);
  assert.doesNotMatch(d, /lib\/x\.ts/);
  assert.equal(await a.diff(p.treeHash, p.treeHash), '');
});

test('writers are serialised: concurrent adds from two archive objects, and a dead writer’s lock is taken over', async () => {
  const dir = join(root, `archive-${n++}.git`);
  const [a, b] = await Promise.all([HarnessArchive.open(dir), HarnessArchive.open(dir)]);
  const p = await a.add(candidate(), { parents: [], message: 'h0' });
  const dirs = [1, 2, 3, 4, 5].map((k) => candidate((d) => setTopk(d, k)));
  const results = await Promise.all(dirs.map((d, i) => (i % 2 ? a : b).add(d, { parents: [p.treeHash], message: `topk ${i + 1}`, meta: { i } })));
  // topk 1 is h0 itself: one of the adds is a duplicate.
  assert.equal(results.filter((r) => r.created).length, 4);
  assert.equal((await a.list()).length, 5);
  await Promise.all(results.map((r, i) => (i % 2 ? b : a).setMeta(r.treeHash, { [`touched${i}`]: true })));
  const hMeta = (await a.get(p.treeHash))!;
  assert.equal(hMeta.links.length, 1, 'the duplicate add is recorded on h0');
  assert.equal(Object.keys(hMeta.meta).filter((k) => k.startsWith('touched')).length, 1);
  assert.equal(existsSync(join(dir, 'whale-archive.lock')), false, 'the lock is released');

  // A lock left by a process that no longer exists (on this machine, so its pid can be checked) is taken over.
  const dead = spawnSync(process.execPath, [
    '--import',
    tsxLoader,
    '-e',
    `import { acquireLock } from ${JSON.stringify(fileLockModule)}; acquireLock(${JSON.stringify(join(dir, 'whale-archive.lock'))}, 'x'); process.exit(0);`,
  ]);
  assert.equal(dead.status, 0, String(dead.stderr));
  assert.ok(existsSync(join(dir, 'whale-archive.lock')), 'the dead writer left its lock');
  await a.setRef('runs/x/accepted/1', p.treeHash);
  assert.equal(await a.getRef('runs/x/accepted/1'), p.treeHash);
  assert.equal(existsSync(join(dir, 'whale-archive.lock')), false);
});

test('engines that start at once on a fresh store all open the one archive (six processes, their git inits held to start together)', async () => {
  const archiveModule = new URL('../../src/archive/harnessArchive.ts', import.meta.url).href;
  const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  const engines = 6;
  // Real git, but each `git init` first waits until every engine has reached its own: without that,
  // the overlap this test is about (a comparison's first two jobs on a new store) comes 1 time in 8.
  for (let round = 0; round < 3; round++) {
    const dir = join(root, `race-${n++}`, 'archive.git');
    const barrier = join(root, `barrier-${n++}`);
    const bin = join(root, `bin-${n++}`);
    mkdirSync(barrier);
    mkdirSync(bin);
    writeFileSync(
      join(bin, 'git'),
      `#!/bin/sh\ncase " $* " in *" init "*) touch "${barrier}/$$"; i=0; while [ "$(ls "${barrier}" | wc -l)" -lt ${engines} ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done;; esac\nexec "${realGit}" "$@"\n`,
    );
    chmodSync(join(bin, 'git'), 0o755);
    const script =
      `import { HarnessArchive } from ${JSON.stringify(archiveModule)};` +
      `try { const a = await HarnessArchive.open(${JSON.stringify(dir)}); await a.list(); process.exit(0) } catch (e) { console.error(e.message); process.exit(1) }`;
    const exits = Array.from({ length: engines }, () => {
      const c = spawn(process.execPath, ['--import', tsxLoader, '--input-type=module', '-e', script], {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
      });
      let err = '';
      c.stderr.on('data', (d: Buffer) => (err += d.toString()));
      return new Promise<{ code: number | null; err: string }>((res) => c.on('close', (code) => res({ code, err })));
    });
    for (const { code, err } of await Promise.all(exits)) assert.equal(code, 0, err);
    assert.equal(readdirSync(barrier).length, engines, 'every engine ran git init');
    assert.equal(git(dir, 'rev-parse', '--is-bare-repository'), 'true');
    assert.deepEqual(readdirSync(join(dir, '..')), ['archive.git'], 'no half-made repository is left beside it');
    const a = await HarnessArchive.open(dir);
    const c = await a.add(candidate(), { parents: [], message: 'h0' });
    assert.equal(await a.has(c.treeHash), true);
  }
});

test('open refuses a folder that is not a git repository; reopening keeps the candidates', async () => {
  const bad = join(root, `not-git-${n++}`);
  mkdirSync(bad);
  writeFileSync(join(bad, 'HEAD'), 'garbage');
  await assert.rejects(HarnessArchive.open(bad), /not a git repository/);
  const notEmpty = join(root, `not-git-${n++}`);
  mkdirSync(notEmpty);
  writeFileSync(join(notEmpty, 'notes.txt'), 'mine');
  await assert.rejects(HarnessArchive.open(notEmpty), /exists and is not a git repository/);
  assert.deepEqual(readdirSync(notEmpty), ['notes.txt'], 'the folder is left as it was');
  const emptyDir = join(root, `empty-${n++}`);
  mkdirSync(emptyDir);
  await HarnessArchive.open(emptyDir);
  assert.equal(git(emptyDir, 'rev-parse', '--is-bare-repository'), 'true', 'an empty folder made for it becomes the archive');
  const dir = join(root, `archive-${n++}.git`);
  const a = await HarnessArchive.open(dir);
  const p = await a.add(candidate(), { parents: [], message: 'h0' });
  const again = await HarnessArchive.open(dir);
  assert.equal(await again.has(p.treeHash), true);
  assert.equal((await again.list()).length, 1);
});

test("a run sees its own derivation of a candidate another run archived first: its parents, round and hypothesis, not the other run's", async () => {
  const a = await fresh();
  const base = await a.add(candidate(), { parents: [], message: 'h0', meta: { origin: 'seed', round: 0, run: 'A' } });
  await a.add(candidate(), { parents: [], message: 'h0', meta: { origin: 'seed', round: 0, run: 'B' } });
  const p2 = await a.add(
    candidate((d) => setTopk(d, 2)),
    { parents: [base.treeHash], message: 'topk 2', meta: { run: 'A', round: 1, origin: 'proposer', hypothesis: 'topk up' } },
  );
  // Run A reaches topk 3 from topk 2; run B from h0 directly, later, in another round.
  await a.add(
    candidate((d) => setTopk(d, 3)),
    { parents: [p2.treeHash], message: 'A: topk 3', meta: { run: 'A', round: 2, origin: 'proposer', hypothesis: 'from 2' } },
  );
  const b3 = await a.add(
    candidate((d) => setTopk(d, 3)),
    { parents: [base.treeHash], message: 'B: topk 3', meta: { run: 'B', round: 1, origin: 'proposer', hypothesis: 'from h0' } },
  );
  assert.equal(b3.created, false);
  const c = (await a.list()).find((x) => x.treeHash === b3.treeHash);
  assert.ok(c);
  const forA = derivationIn(c, 'A');
  const forB = derivationIn(c, 'B');
  assert.deepEqual([forA.parents, forA.meta.round, forA.meta.hypothesis, forA.message], [[p2.treeHash], 2, 'from 2', 'A: topk 3']);
  assert.deepEqual([forB.parents, forB.meta.round, forB.meta.hypothesis, forB.message], [[base.treeHash], 1, 'from h0', 'B: topk 3']);
  assert.equal(forB.meta.run, 'B');
  // A run that never derived it sees the first derivation.
  assert.deepEqual(derivationIn(c, 'C').parents, [p2.treeHash]);
  // What run B's proposer is shown (the engine's view of its candidates).
  const journal = new Journal(join(root, `journal-${n++}.jsonl`));
  const records = await candidateRecords({ archive: a, journal, runId: 'B' } as unknown as RunContext);
  const seen = records.find((r) => r.treeHash === b3.treeHash);
  assert.deepEqual([seen?.parents, seen?.round, seen?.hypothesis], [[base.treeHash], 1, 'from h0']);
  assert.equal(
    records.some((r) => r.treeHash === p2.treeHash),
    false,
    "run A's own candidate is not run B's",
  );
});
