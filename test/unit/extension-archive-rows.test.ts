// The Harness Archive rows (vscode-free model) on a real git archive: a label short enough for a
// side-bar row (a long hypothesis as the label made VS Code draw the selected row blank), the score
// as the description, everything else in the hover; incumbent and best-pair marks; a crossover's
// second parent; policies named by what made them; sorting by score or lineage.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HarnessArchive } from '../../src/archive/harnessArchive.js';
import { getDomain } from '../../src/domains/index.js';
import type { JournalEntry } from '../../src/archive/journal.js';
import {
  LABEL_CHANGE_CHARS,
  archiveModel,
  candidateLabel,
  candidateTooltip,
  compareTable,
  describeCandidate,
  sortCandidates,
} from '../../src/extension/model/archiveModel.js';
import { policyLabel, policyNames, shortHash } from '../../src/extension/model/identity.js';

const root = mkdtempSync(join(tmpdir(), 'whale-rows-'));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
function candidate(topk: number): string {
  const dir = join(root, `c${n++}`);
  cpSync(getDomain('kbqa').h0Dir, dir, { recursive: true });
  const f = join(dir, 'harness.json');
  writeFileSync(f, JSON.stringify({ ...JSON.parse(readFileSync(f, 'utf8')), topk }));
  return dir;
}

const LONG =
  'Retrieve three passages instead of one and ask the model to quote the sentence that answers the question before it answers, because the failing trajectories show the single passage often misses the entity the question names and the model then guesses from memory';
const V0 = 'a1b2c3d4e5f60718';
const V1 = 'ffee00112233aabb';
const at = 't';

test('archive rows: short labels, score ± se as the description, marks, crossover parents, named policies, sorting', async () => {
  const archive = await HarnessArchive.open(join(root, 'archive.git'));
  const h0 = (await archive.add(candidate(1), { parents: [], message: 'h0', meta: { origin: 'seed' } })).treeHash;
  const a = (await archive.add(candidate(3), { parents: [h0], message: LONG, meta: { origin: 'proposer', hypothesis: LONG } })).treeHash;
  const b = (await archive.add(candidate(5), { parents: [h0], message: 'topk 5', meta: { origin: 'proposer' } })).treeHash;
  const x = (
    await archive.add(candidate(4), {
      parents: [a, b],
      message: 'crossover: topk 4\nwith the quoting prompt of the first parent',
      meta: { origin: 'proposer' },
    })
  ).treeHash;
  const journal: JournalEntry[] = [
    { type: 'run_started', at, runId: 'r1', method: 'whale', version: V0, harness: h0 },
    { type: 'phase_started', at, phase: 0, kind: 'weight', cycle: 0, version: V0, harness: h0 },
    { type: 'weight_step', at, phase: 0, globalStep: 0, versionAfter: 'midstep000000000' },
    { type: 'weight_step', at, phase: 0, globalStep: 1, versionAfter: V1 },
    { type: 'phase_completed', at, phase: 0, kind: 'weight', version: V1, harness: h0 },
    { type: 'validation', at, phase: 0, version: V1, harness: h0, mean: 0.4, se: 0.05, k: 1 },
    { type: 'phase_started', at, phase: 1, kind: 'harness', cycle: 0, version: V1, harness: h0 },
    { type: 'candidate_scored', at, phase: 1, round: 0, treeHash: h0, version: V1, mean: 0.4, se: 0.05 },
    { type: 'candidate_scored', at, phase: 1, round: 1, treeHash: a, version: V1, mean: 0.625, se: 0.041 },
    { type: 'candidate_scored', at, phase: 1, round: 1, treeHash: b, version: V1, mean: 0.5, se: 0.04 },
    { type: 'candidate_invalid', at, phase: 1, round: 2, treeHash: x, reasons: ['harness.json: topk must be ≤ 3'] },
    { type: 'acceptance', at, phase: 1, rule: 'archive-best', chosen: a },
    { type: 'phase_completed', at, phase: 1, kind: 'harness', version: V1, harness: a },
    { type: 'validation', at, phase: 1, version: V1, harness: a, mean: 0.55, se: 0.05, k: 1 },
  ];
  const model = archiveModel(await archive.list(), new Map([['r1', journal]]));

  // Policies by name, hashes in one length.
  const names = policyNames(journal);
  assert.equal(policyLabel(V0, names), 'base');
  assert.equal(policyLabel(V1, names), 'policy after phase 0', "a weight phase's last step is named by the phase");
  assert.equal(policyLabel('midstep000000000', names), 'policy after step 1 (phase 0)');
  assert.equal(policyLabel('0123456789abcdef', names), '01234567', 'an unknown policy: its 8-hex short hash');
  assert.equal(shortHash(a), a.slice(0, 8));

  const na = model.nodes.get(a)!;
  // The label: short id and one clipped line — never the whole hypothesis (the blank-row bug).
  const label = candidateLabel(na);
  assert.ok(label.length <= 8 + 1 + LABEL_CHANGE_CHARS, `label too long for a row (${label.length}): ${label}`);
  assert.ok(label.startsWith(`${shortHash(a)} Retrieve three passages`) && label.endsWith('…'), label);
  assert.equal(candidateLabel(model.nodes.get(x)!), `${shortHash(x)} crossover: topk 4`, 'the first line only');
  // The description: score ± se under a named policy, then marks.
  assert.equal(describeCandidate(na, model.policies), '62.5% ± 4.1 under policy after phase 0 · ★ incumbent · ◆ best pair · ✓ accepted ×1');
  assert.equal(describeCandidate(model.nodes.get(h0)!, model.policies), '40.0% ± 5.0 under policy after phase 0');
  const nx = model.nodes.get(x)!;
  assert.equal(describeCandidate(nx, model.policies), `✗ invalid · ⨯ ${shortHash(b)}`, "a crossover's second parent is on its row");
  // The hover: full hash, whole hypothesis, both parents, policy name with its full version, reasons.
  const tip = candidateTooltip(na, model.policies);
  assert.ok(tip.includes(a) && tip.includes(LONG), tip);
  assert.ok(tip.includes(`policy after phase 0 (\`${V1}\`): 62.5% ± 4.1 on the harness split`), tip);
  assert.ok(tip.includes('★ incumbent') && tip.includes('◆ harness of the best pair on validation in r1'), tip);
  const tipX = candidateTooltip(nx, model.policies);
  assert.ok(tipX.includes(`crossover of \`${shortHash(a)}\` and \`${shortHash(b)}\``) && tipX.includes('topk must be ≤ 3'), tipX);
  assert.ok(
    compareTable(na, model.nodes.get(b)!, model.policies).includes(
      `| mean on the harness split under policy after phase 0 (\`${shortHash(V1)}\`) | 62.5% ± 4.1 | 50.0% ± 4.0 | −12.5 (± 5.7) |`,
    ),
  );

  // Sorting siblings: by score (best first, unscored last) or by lineage (as added).
  const kids = model.nodes.get(h0)!.children;
  assert.deepEqual(sortCandidates(kids, model, 'lineage'), [a, b]);
  assert.deepEqual(sortCandidates([b, x, a], model, 'score'), [a, b, x]);
  assert.deepEqual(sortCandidates([x, b, a], model, 'lineage'), [a, b, x]);
});
