// The offline knob proposer over a real git archive seeded with the shipped kbqa h0: determinism per
// seed, knob domains, no repeated candidates, FST mode (prompt strings only), and that it searches.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HarnessArchive } from '../../src/archive/harnessArchive.js';
import { HarnessManifest } from '../../src/core/manifest.js';
import { gitTreeHash } from '../../src/core/treeHash.js';
import { getDomain } from '../../src/domains/index.js';
import { KBQA_INSTRUCTIONS } from '../../src/domains/text.js';
import { KnobProposer } from '../../src/search/knobProposer.js';
import type { ArchiveView, CandidateRecord, Proposal, SearchMode } from '../../src/search/proposer.js';
import { fstDifferences } from '../../src/search/validate.js';

const root = mkdtempSync(join(tmpdir(), 'whale-knob-'));
after(() => rmSync(root, { recursive: true, force: true }));
const domain = getDomain('kbqa');
const H0 = HarnessManifest.parse(JSON.parse(readFileSync(join(domain.h0Dir, 'harness.json'), 'utf8')));
let n = 0;
const POLICY = 'v1';

type Settings = Record<string, string | number | boolean>;

/** A synthetic objective with the shape of kbqa's (more facts, more searches, an instruction, lenient parsing help). */
function fitness(m: HarnessManifest): number {
  const s: Settings = { ...Object.fromEntries(Object.entries(m.knobs).map(([k, v]) => [k, v.default])), ...m.settings };
  const instructed = s.instruction === 'full' || (s.instruction === 'prompt' && m.prompts.system === KBQA_INSTRUCTIONS.full);
  const short = s.instruction === 'short' || (s.instruction === 'prompt' && m.prompts.system === KBQA_INSTRUCTIONS.short);
  return (
    0.05 +
    0.06 * Math.min(Number(s.topk), 3) +
    0.08 * Math.min(Number(s.maxSearches), 2) +
    (instructed ? 0.15 : short ? 0.08 : 0) +
    (s.parse === 'lenient' ? 0.04 : 0) +
    (s.requireSearch ? 0.03 : 0)
  );
}

/** The harness phase in miniature: archive, scores under one policy version, the view. */
class MiniSearch {
  archive!: HarnessArchive;
  records = new Map<string, CandidateRecord>();
  incumbent = '';
  private views = new Map<string, string>();
  constructor(readonly mode: SearchMode) {}

  async init(): Promise<this> {
    this.archive = await HarnessArchive.open(join(root, `archive-${n++}.git`));
    const r = await this.archive.add(domain.h0Dir, { parents: [], message: 'h0', meta: { origin: 'seed', round: 0 } });
    this.incumbent = r.treeHash;
    return this;
  }

  private manifestOf(dir: string): HarnessManifest {
    return HarnessManifest.parse(JSON.parse(readFileSync(join(dir, 'harness.json'), 'utf8')));
  }

  record(treeHash: string, parents: string[], round: number, origin: CandidateRecord['origin'], hypothesis: string, mean?: number): void {
    const dir = this.viewDirSync(treeHash);
    const m = mean ?? fitness(this.manifestOf(dir));
    this.records.set(treeHash, {
      treeHash,
      parents,
      round,
      origin,
      hypothesis,
      valid: true,
      invalidReasons: [],
      scores: [{ policyVersion: POLICY, split: 'harness', mean: m, se: 0.03, meanTurns: 2, keyHash: `k-${treeHash.slice(0, 8)}` }],
    });
  }

  private viewDirSync(treeHash: string): string {
    return this.views.get(treeHash) ?? '';
  }

  view(): ArchiveView {
    return {
      domain: { id: domain.id, searchSpace: domain.searchSpace },
      mode: this.mode,
      candidates: [...this.records.values()],
      incumbent: this.incumbent,
      policyVersion: POLICY,
      materialize: async (h) => {
        const have = this.views.get(h);
        if (have) return have;
        const dir = await this.archive.materialize(h, join(root, `view-${n++}`), { readOnly: true });
        this.views.set(h, dir);
        return dir;
      },
      taskResults: () => [{ taskId: 't1', passes: 0, samples: 1, mean: 0, terminations: { no_answer: 1 } }],
      trajectoriesFile: (k) => join(root, `${k}.jsonl`),
      annotations: [],
      pastReports: [],
    };
  }

  async propose(proposer: KnobProposer, round: number, seed: number, count = 3): Promise<Proposal> {
    return proposer.propose({ round, count, view: this.view(), outDir: join(root, `out-${n++}`), seed });
  }

  /** Archives and scores a proposal; the incumbent becomes the archive-wide best. */
  async accept(p: Proposal, round: number): Promise<string[]> {
    const added: string[] = [];
    for (const c of p.candidates) {
      const r = await this.archive.add(c.dir, { parents: c.parents, message: c.hypothesis, meta: { round, origin: 'proposer', hypothesis: c.hypothesis } });
      assert.equal(r.created, true, 'a proposed candidate is new to the archive');
      await this.view().materialize(r.treeHash);
      this.record(r.treeHash, c.parents, round, 'proposer', c.hypothesis);
      added.push(r.treeHash);
    }
    this.incumbent = [...this.records.values()].sort((a, b) => b.scores[0].mean - a.scores[0].mean || (a.treeHash < b.treeHash ? -1 : 1))[0].treeHash;
    return added;
  }
}

async function started(mode: SearchMode): Promise<MiniSearch> {
  const s = await new MiniSearch(mode).init();
  await s.view().materialize(s.incumbent);
  s.record(s.incumbent, [], 0, 'seed', 'h0');
  return s;
}

function manifestAt(dir: string): HarnessManifest {
  return HarnessManifest.parse(JSON.parse(readFileSync(join(dir, 'harness.json'), 'utf8')));
}

function summary(p: Proposal): { hash: string; parents: string[]; hypothesis: string; manifest: string }[] {
  return p.candidates.map((c) => ({
    hash: gitTreeHash(c.dir),
    parents: c.parents,
    hypothesis: c.hypothesis,
    manifest: readFileSync(join(c.dir, 'harness.json'), 'utf8'),
  }));
}

test('deterministic: the same archive and seed give the same proposals; another seed gives others', async () => {
  const s = await started('full');
  const proposer = new KnobProposer();
  // Two rounds of history first, so parent choice, crossover and credit all come into play.
  await s.accept(await s.propose(proposer, 1, 11), 1);
  await s.accept(await s.propose(proposer, 2, 12), 2);
  const a = summary(await s.propose(proposer, 3, 99, 4));
  const b = summary(await s.propose(new KnobProposer(), 3, 99, 4));
  assert.equal(a.length, 4);
  assert.deepEqual(a, b);
  // The view's candidate order does not matter.
  const shuffled = await new KnobProposer().propose({
    round: 3,
    count: 4,
    view: { ...s.view(), candidates: [...s.records.values()].reverse() },
    outDir: join(root, `out-${n++}`),
    seed: 99,
  });
  assert.deepEqual(summary(shuffled), a);
  const other = summary(await s.propose(proposer, 3, 100, 4));
  assert.notDeepEqual(
    other.map((c) => c.hash),
    a.map((c) => c.hash),
  );
});

test('children stay inside the declared knob domains, edit one or two knobs of a parent, never repeat an archived candidate, and keep the code', async () => {
  const s = await started('full');
  const proposer = new KnobProposer();
  const h0Code = readFileSync(join(domain.h0Dir, 'harness.ts'));
  let crossovers = 0;
  for (let round = 1; round <= 8; round++) {
    const before = new Set(s.records.keys());
    const p = await s.propose(proposer, round, 1000 + round);
    assert.equal(p.dollars, 0);
    assert.equal(p.candidates.length, 3, p.report);
    assert.match(p.report, new RegExp(`Round ${round}`));
    const hashes = p.candidates.map((c) => gitTreeHash(c.dir));
    assert.equal(new Set(hashes).size, hashes.length, 'no duplicates within a round');
    for (const [i, c] of p.candidates.entries()) {
      assert.ok(!before.has(hashes[i]), 'never an archived candidate');
      assert.ok(
        c.parents.every((x) => before.has(x)),
        'parents come from the archive',
      );
      assert.deepEqual(readFileSync(join(c.dir, 'harness.ts')), h0Code, 'code untouched');
      assert.deepEqual(readdirSync(c.dir).sort(), ['harness.json', 'harness.ts']);
      const m = manifestAt(c.dir); // parses = every setting inside its knob's domain
      assert.deepEqual(m.knobs, H0.knobs);
      assert.deepEqual(Object.keys(m.settings).sort(), Object.keys(H0.knobs).sort());
      for (const [name, v] of Object.entries(m.prompts)) assert.ok(H0.promptVariants[name].includes(v), `prompt ${name} is a declared variant`);
      assert.ok(c.hypothesis.length > 10);
      if (c.parents.length === 2) {
        crossovers++;
        continue;
      }
      assert.equal(c.parents.length, 1);
      const parent = manifestAt(await s.view().materialize(c.parents[0]));
      const changed = [
        ...Object.keys(m.settings).filter((k) => m.settings[k] !== parent.settings[k]),
        ...Object.keys(m.prompts)
          .filter((k) => m.prompts[k] !== parent.prompts[k])
          .map((k) => `prompt ${k}`),
      ];
      assert.ok(changed.length >= 1 && changed.length <= 2, `one or two edits, got ${changed.join(', ')}`);
      for (const k of changed) {
        assert.ok(c.hypothesis.includes(k), `hypothesis names the edit ${k}: ${c.hypothesis}`);
        const spec = m.knobs[k];
        if (spec?.type === 'int') assert.ok(Math.abs(Number(m.settings[k]) - Number(parent.settings[k])) <= 2, `int steps of 1 or 2 (${k})`);
      }
    }
    await s.accept(p, round);
  }
  assert.ok(crossovers >= 1, 'some children recombine two parents');
  const h0 = s.records.get([...s.records.values()].find((r) => r.origin === 'seed')!.treeHash)!;
  const best = s.records.get(s.incumbent)!;
  assert.ok(best.scores[0].mean > h0.scores[0].mean + 0.2, `the search climbs: h0 ${h0.scores[0].mean.toFixed(3)} → best ${best.scores[0].mean.toFixed(3)}`);
});

test('hypotheses say what changes and why; the first child mutates the incumbent', async () => {
  const s = await started('full');
  const p = await s.propose(new KnobProposer(), 1, 5);
  assert.deepEqual(p.candidates[0].parents, [s.incumbent]);
  for (const c of p.candidates) assert.match(c.hypothesis, /\S+ \S+→\S+/, c.hypothesis);
  assert.match(p.candidates[0].hypothesis, /parent 0\.\d{3} ± 0\.030/);
  assert.match(p.candidates[0].hypothesis, /ended no_answer/);
  assert.match(p.report, /Incumbent `[0-9a-f]{12}`/);
});

test('FST mode changes only the declared prompt strings (never settings or code) and stops when the variants run out', async () => {
  const s = await started('fst');
  const proposer = new KnobProposer();
  const seen = new Set<string>();
  let total = 0;
  for (let round = 1; round <= 3; round++) {
    const p = await s.propose(proposer, round, round);
    for (const c of p.candidates) {
      assert.deepEqual(fstDifferences(domain.h0Dir, c.dir), [], 'a legal FST candidate');
      const m = manifestAt(c.dir);
      assert.deepEqual(m.settings, H0.settings);
      const raw = JSON.parse(readFileSync(join(c.dir, 'harness.json'), 'utf8'));
      const h0raw = JSON.parse(readFileSync(join(domain.h0Dir, 'harness.json'), 'utf8'));
      assert.deepEqual({ ...raw, prompts: null }, { ...h0raw, prompts: null }, 'every field but prompts is h0’s');
      assert.ok(H0.promptVariants.system.includes(m.prompts.system));
      assert.notEqual(m.prompts.system, '', 'the only new texts are the instructions');
      seen.add(m.prompts.system);
    }
    total += p.candidates.length;
    await s.accept(p, round);
  }
  // kbqa h0 declares 3 system variants (one is h0's own) and 1 user variant: 2 new candidates in all.
  assert.equal(total, 2);
  assert.deepEqual([...seen].sort(), [KBQA_INSTRUCTIONS.full, KBQA_INSTRUCTIONS.short].sort());
  const last = await s.propose(proposer, 4, 4);
  assert.equal(last.candidates.length, 0);
  assert.match(last.report, /no new candidate/);
});

test('FST mode never derives from a candidate of a full-mode run (the archive is shared), however good', async () => {
  const s = await started('fst');
  const other = await s.archive.add(
    (() => {
      const d = join(root, `full-${n++}`);
      cpSync(domain.h0Dir, d, { recursive: true });
      const j = JSON.parse(readFileSync(join(d, 'harness.json'), 'utf8'));
      j.settings.topk = 3;
      j.prompts.system = KBQA_INSTRUCTIONS.short;
      writeFileSync(join(d, 'harness.json'), JSON.stringify(j, null, 2) + '\n');
      return d;
    })(),
    { parents: [s.incumbent], message: 'full-mode child', meta: { round: 1 } },
  );
  await s.view().materialize(other.treeHash);
  s.record(other.treeHash, [s.incumbent], 1, 'proposer', 'full-mode child', 0.9);
  const p = await s.propose(new KnobProposer(), 2, 7, 3);
  assert.equal(p.candidates.length, 2);
  for (const c of p.candidates) {
    assert.deepEqual(c.parents, [s.incumbent]);
    assert.deepEqual(fstDifferences(domain.h0Dir, c.dir), []);
  }
});

test('invalid candidates are never parents; an archive without a valid candidate gives no proposals', async () => {
  const s = await started('full');
  const rec = s.records.get(s.incumbent)!;
  s.records.set(s.incumbent, { ...rec, valid: false, invalidReasons: ['smoke run: crash'] });
  const p = await s.propose(new KnobProposer(), 1, 1);
  assert.equal(p.candidates.length, 0);
  assert.match(p.report, /No valid candidate/);
});
