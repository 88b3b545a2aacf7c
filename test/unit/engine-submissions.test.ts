// A person as the proposer: `whale candidate submit` archives a hand-made folder (origin 'human'),
// and the next harness phase validates and scores it like a proposal (real CLI, engine, archive).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HarnessArchive } from '../../src/archive/harnessArchive.js';
import { gitTreeHash } from '../../src/core/treeHash.js';
import { Engine } from '../../src/engine/engine.js';
import type { JournalEntry } from '../../src/archive/journal.js';
import { smallProject } from '../support/smallProject.js';

const dev = fileURLToPath(new URL('../../src/cli/dev.ts', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/tsx/dist/esm/index.mjs', import.meta.url));

function whale(args: string[], cwd: string) {
  const r = spawnSync(process.execPath, ['--import', tsx, dev, ...args], { cwd, encoding: 'utf8', timeout: 240_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const acceptedIn = (entries: JournalEntry[], phase: number) => entries.find((e) => e.type === 'acceptance' && e.phase === phase)?.chosen;

function project() {
  const made = smallProject('submit', {
    name: 'submit',
    domain: { id: 'ramble', options: { sizes: { weight: 16, harness: 8, val: 8, test: 8 } } },
    method: 'harness-only',
    evaluation: { k: 1, concurrency: 8 },
    search: { candidatesPerRound: 1 },
    schedule: { iterations: 1, cycles: 1 },
  });
  return { dir: made.dir, engineProject: made.engineProject() };
}

test('whale candidate submit: bad folders are input errors naming the file; nothing is archived', { timeout: 300_000 }, () => {
  const { dir } = project();
  const noManifest = mkdtempSync(join(tmpdir(), 'whale-nomanifest-'));
  const r = whale(['candidate', 'submit', noManifest], dir);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /harness\.json: a candidate folder needs a harness\.json/);
  const bad = join(dir, 'bad');
  cpSync(join(dir, 'h0'), bad, { recursive: true });
  writeFileSync(join(bad, 'harness.json'), '{\n  "name": "x",\n  "runtime": "node"\n}\n');
  const r2 = whale(['candidate', 'submit', bad], dir);
  assert.equal(r2.code, 2, r2.stderr);
  assert.match(r2.stderr, /bad\/harness\.json:\d+(:\d+)?: entry: runtime 'node' needs an entry file/);
  const listed = whale(['candidate', 'submitted', '--json'], dir);
  assert.equal(listed.code, 0, listed.stderr);
  assert.deepEqual(JSON.parse(listed.stdout), []);
});

test(
  'a hand-made candidate submitted with the CLI is validated and scored by the next harness phase; a broken one is recorded invalid',
  { timeout: 300_000 },
  async () => {
    const { dir, engineProject } = project();
    const h0Hash = gitTreeHash(join(dir, 'h0'));
    // The edited copy a person would make with "Edit a Copy…": lenient parsing, brief instruction.
    const good = join(dir, 'harnesses', 'proposals', 'lenient');
    cpSync(join(dir, 'h0'), good, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(good, 'harness.json'), 'utf8'));
    manifest.settings = { ...manifest.settings, parse: 'lenient', instruction: 'brief' };
    writeFileSync(join(good, 'harness.json'), JSON.stringify(manifest, null, 2));
    const broken = join(dir, 'harnesses', 'proposals', 'broken');
    cpSync(join(dir, 'h0'), broken, { recursive: true });
    writeFileSync(join(broken, 'harness.ts'), "throw new Error('a person made a mistake');\n");

    // h0 is not archived yet: a parent must be in the archive.
    const orphan = whale(['candidate', 'submit', good, '--parents', h0Hash], dir);
    assert.notEqual(orphan.code, 0);
    assert.match(orphan.stderr, /parent candidate [0-9a-f]{40} is not in the archive/);

    // A first run archives h0; its harness phase has no submissions yet.
    const first = await Engine.create(engineProject, { log: () => {} });
    try {
      await first.run();
    } finally {
      await first.close();
    }

    const s = whale(['candidate', 'submit', good, '--parents', h0Hash, '--message', 'lenient parsing, brief instruction', '--json'], dir);
    assert.equal(s.code, 0, s.stderr);
    const submitted = JSON.parse(s.stdout) as { treeHash: string; created: boolean };
    assert.equal(submitted.treeHash, gitTreeHash(good));
    assert.equal(submitted.created, true);
    const b = whale(['candidate', 'submit', broken, '--parents', h0Hash, '--json'], dir);
    assert.equal(b.code, 0, b.stderr);
    const brokenHash = (JSON.parse(b.stdout) as { treeHash: string }).treeHash;

    const archive = await HarnessArchive.open(join(dir, '.whale', 'archive.git'));
    const c = await archive.get(submitted.treeHash);
    assert.equal(c?.meta.origin, 'human');
    assert.deepEqual(c?.parents, [h0Hash]);
    assert.equal(c?.message, 'lenient parsing, brief instruction');

    const second = await Engine.create(engineProject, { log: () => {} });
    let entries: JournalEntry[];
    try {
      await second.run();
      entries = (second as unknown as { ctx: { journal: { all(): JournalEntry[] } } }).ctx.journal.all();
    } finally {
      await second.close();
    }
    const scored = entries.filter((e) => e.type === 'candidate_scored');
    assert.deepEqual(
      [...new Set(scored.map((e) => e.treeHash))].sort(),
      [h0Hash, submitted.treeHash].sort(),
      'the seed and the hand-made candidate were scored',
    );
    // Phase 1 re-scores it only as its seed, when phase 0 accepted it; as a submission it is scored once.
    const asSubmission = scored.filter((e) => e.treeHash === submitted.treeHash && !(e.phase === 1 && acceptedIn(entries, 0) === submitted.treeHash));
    assert.equal(asSubmission.length, 1);
    assert.equal(asSubmission[0].phase, 0, 'scored by the first harness phase after it was submitted');
    const invalid = entries.filter((e) => e.type === 'candidate_invalid');
    assert.equal(invalid.length, 1);
    assert.equal(invalid[0].treeHash, brokenHash);
    assert.equal(invalid[0].origin, 'human');
    assert.ok((invalid[0].reasons as string[]).length > 0);
    const acceptance = entries.find((e) => e.type === 'acceptance')!;
    const best = scored.reduce((a, e) => ((e.mean as number) > (a.mean as number) ? e : a));
    assert.equal(acceptance.archiveBest, best.treeHash, 'the hand-made candidate competes in the archive-wide acceptance');
  },
);
