// The researcher's views (vscode-free models): evaluations read back from a real result store and
// attached to archived candidates; comparisons that say which figures are like with like and which
// are one-sided; the candidate picker's order and marks; a phase's candidates and an evaluation's
// rollouts in the order a person wants them; a proposer session rendered as a document.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HarnessArchive } from '../../src/archive/harnessArchive.js';
import { ResultStore, type EvalKey, type EvalSummary } from '../../src/archive/resultStore.js';
import type { JournalEntry } from '../../src/archive/journal.js';
import type { LineEntry } from '../../src/archive/jsonlIndex.js';
import { getDomain } from '../../src/domains/index.js';
import { archiveModel, compareTable, pickerItems, sharedFigures } from '../../src/extension/model/archiveModel.js';
import { storedEvaluations } from '../../src/extension/model/evaluations.js';
import { evaluationRollouts, phaseCandidates } from '../../src/extension/model/evaluationRollouts.js';
import { parseSessionLog, renderProposerTranscript, toolCallLine } from '../../src/extension/model/proposerTranscript.js';
import { runModel } from '../../src/extension/model/runsModel.js';
import { shortHash } from '../../src/extension/model/identity.js';

const root = mkdtempSync(join(tmpdir(), 'whale-research-'));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
function candidate(topk: number): string {
  const dir = join(root, `c${n++}`);
  cpSync(getDomain('kbqa').h0Dir, dir, { recursive: true });
  const f = join(dir, 'harness.json');
  writeFileSync(f, JSON.stringify({ ...JSON.parse(readFileSync(f, 'utf8')), topk }));
  return dir;
}
const V0 = 'a1b2c3d4e5f60718';
const V1 = 'ffee00112233aabb';
const at = 't';

/** A finished evaluation written through the real result store (with its digest), as `whale eval` leaves it. */
function storeEvaluation(store: ResultStore, harnessHash: string, policyVersion: string, split: string, mean: number, se: number, k = 1): string {
  const key: EvalKey = { domain: 'kbqa', taskSet: 'ts', split, harnessHash, policyVersion, sampling: {}, limits: {}, k, seed: 0 };
  const keyHash = store.begin(key);
  const summary: EvalSummary = {
    key,
    keyHash,
    meanAtK: mean,
    standardError: se,
    tasks: 4,
    k,
    rollouts: 4 * k,
    terminations: { answered: 4 * k },
    meanTurns: 2,
    completedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n++)).toISOString(),
    wallMs: 10,
  };
  store.complete(keyHash, [{ taskId: 't0', passes: 1, samples: 1, mean: 1, terminations: { answered: 1 } }], summary);
  return keyHash;
}

test('evaluations from the result store join their candidates; a comparison says what is like with like', async () => {
  const storeDir = join(root, 'store');
  const archive = await HarnessArchive.open(join(storeDir, 'archive.git'));
  const h0 = (await archive.add(candidate(1), { parents: [], message: 'h0', meta: { origin: 'seed', hypothesis: 'the initial harness h0' } })).treeHash;
  const a = (await archive.add(candidate(3), { parents: [h0], message: 'topk 3', meta: { origin: 'proposer' } })).treeHash;
  const b = (await archive.add(candidate(5), { parents: [h0], message: 'topk 5', meta: { origin: 'human' } })).treeHash;
  const results = new ResultStore(storeDir);
  const searchKey = storeEvaluation(results, a, V1, 'harness', 0.625, 0.041);
  const valA = storeEvaluation(results, a, V1, 'val', 0.55, 0.05);
  const journal: JournalEntry[] = [
    { type: 'run_started', at, runId: 'r1', version: V0, harness: h0 },
    { type: 'phase_started', at, phase: 0, kind: 'weight', cycle: 0, version: V0, harness: h0 },
    { type: 'phase_completed', at, phase: 0, kind: 'weight', version: V1, harness: h0 },
    { type: 'phase_started', at, phase: 1, kind: 'harness', cycle: 0, version: V1, harness: h0 },
    { type: 'candidate_scored', at, phase: 1, round: 0, treeHash: h0, version: V0, mean: 0.4, se: 0.05, keyHash: 'x0' },
    { type: 'candidate_scored', at, phase: 1, round: 1, treeHash: a, version: V1, mean: 0.625, se: 0.041, keyHash: searchKey },
    { type: 'acceptance', at, phase: 1, rule: 'archive-best', chosen: a },
    { type: 'phase_completed', at, phase: 1, kind: 'harness', version: V1, harness: a },
  ];
  const rows = storedEvaluations(storeDir);
  assert.deepEqual(
    rows.map((r) => [r.harness, r.split, r.version]),
    [
      [a, 'harness', V1],
      [a, 'val', V1],
    ],
  );
  // A summary edited by hand fails its digest and is not shown.
  const tampered = storeEvaluation(results, b, V1, 'val', 0.3, 0.05);
  const f = join(results.dirFor(tampered), 'summary.json');
  const edited = readFileSync(f, 'utf8').replace(/"meanAtK": ?0\.3/, '"meanAtK": 0.9');
  assert.match(edited, /"meanAtK": ?0\.9/);
  writeFileSync(f, edited);
  assert.equal(storedEvaluations(storeDir).length, 2, 'the edited summary is not read back');

  let model = archiveModel(await archive.list(), new Map([['r1', journal]]), { evaluations: storedEvaluations(storeDir) });
  const na = model.nodes.get(a)!;
  assert.deepEqual(
    na.evaluations.map((e) => e.keyHash),
    [valA],
    "the search scoring is already a score row; the val evaluation is the candidate's own",
  );
  // h0 (scored under base only) and b (never scored): nothing in common.
  assert.deepEqual(sharedFigures(model.nodes.get(h0)!, na), []);
  const before = compareTable(model.nodes.get(h0)!, na, model.policies);
  assert.match(before, /\*\*Not comparable yet:\*\*/);
  assert.match(before, /\| mean on the harness split under base \(`a1b2c3d4`\) \| 40\.0% ± 5\.0 \| — \| \|/);

  // b evaluated on val under the same policy as a: the shared row comes first, with the difference.
  storeEvaluation(results, b, V1, 'val', 0.45, 0.06);
  model = archiveModel(await archive.list(), new Map([['r1', journal]]), { evaluations: storedEvaluations(storeDir) });
  assert.deepEqual(sharedFigures(model.nodes.get(a)!, model.nodes.get(b)!), [`eval|val|${V1}|1`]);
  const table = compareTable(model.nodes.get(a)!, model.nodes.get(b)!, model.policies).split('\n');
  assert.match(table[2], /^Compared like with like on 1 figure/);
  const firstFigure = table.findIndex((l) => l.startsWith('| mean'));
  assert.equal(table[firstFigure], `| mean@1 on the val split under policy after phase 0 (\`${shortHash(V1)}\`) | 55.0% ± 5.0 | 45.0% ± 6.0 | −10.0 (± 7.8) |`);
  assert.match(table[firstFigure + 1], /^\| mean on the harness split under policy after phase 0 .* \| 62\.5% ± 4\.1 \| — \| \|$/);

  // The picker: best latest score first, unscored last; accepted and incumbent marked.
  const items = pickerItems(model);
  assert.deepEqual(
    items.map((i) => i.node.treeHash),
    [a, h0, b],
  );
  assert.equal(items[0].description, '✓ accepted ★ incumbent');
  assert.equal(items[0].detail, `62.5% ± 4.1 under policy after phase 0 · proposer, from ${shortHash(h0)}`);
  assert.equal(items[2].detail, `not scored yet · human, from ${shortHash(h0)}`);
  assert.deepEqual(
    pickerItems(model, a).map((i) => i.node.treeHash),
    [h0, b],
    'the first pick is left out of the second',
  );
});

test("a harness phase's candidates: accepted first, then by score, invalid last; an evaluation's rollouts: failures first", () => {
  const [h0, a, b, x] = ['0'.repeat(40), 'a'.repeat(40), 'b'.repeat(40), 'c'.repeat(40)];
  const journal: JournalEntry[] = [
    { type: 'run_started', at, runId: 'r1', version: V0, harness: h0 },
    { type: 'session_started', at, pid: 1 },
    { type: 'phase_started', at, phase: 0, kind: 'harness', cycle: 0, version: V0, harness: h0 },
    { type: 'candidate_scored', at, phase: 0, round: 0, treeHash: h0, version: V0, mean: 0.4, se: 0.05 },
    { type: 'proposal', at, phase: 0, round: 1, proposer: 'knob', dollars: 0, candidates: [{}, {}], report: 'two knobs' },
    { type: 'candidate_scored', at, phase: 0, round: 1, treeHash: a, version: V0, mean: 0.5, se: 0.05 },
    { type: 'candidate_scored', at, phase: 0, round: 1, treeHash: b, version: V0, mean: 0.7, se: 0.05 },
    { type: 'candidate_invalid', at, phase: 0, round: 1, treeHash: x, reasons: ['no harness.ts'] },
    { type: 'round_done', at, phase: 0, round: 1, bestTreeHash: b, bestMean: 0.7 },
    { type: 'acceptance', at, phase: 0, rule: 'paired', chosen: a, archiveBest: b, incumbent: h0, changedChoice: true },
    { type: 'phase_completed', at, phase: 0, kind: 'harness', version: V0, harness: a },
    { type: 'validation', at, phase: 0, version: V0, harness: a, mean: 0.5, se: 0.05, k: 1, keyHash: 'vk' },
    { type: 'test_evaluation', at, version: V0, harness: a, mean: 0.45, se: 0.05, k: 1, keyHash: 'tk' },
  ];
  const run = runModel('r1', journal, { isAlive: () => false });
  const phase = run.cycles[0].phases[0];
  assert.equal(phase.validation?.keyHash, 'vk');
  assert.equal(run.testKeyHash, 'tk');
  const picks = phaseCandidates(phase, (h) => (h === a ? 'topk 3: more passages' : undefined));
  assert.deepEqual(
    picks.map((p) => p.treeHash),
    [a, b, h0, x],
  );
  assert.equal(picks[0].label, `${shortHash(a)} topk 3: more passages`);
  assert.equal(picks[0].description, 'round 1 · 50.0% ± 5.0 · ✓ accepted');
  assert.equal(picks[3].description, 'round 1 · ✗ invalid: no harness.ts');

  const line = (taskId: string, sampleIndex: number, pass?: boolean): LineEntry => ({
    offset: 0,
    length: 1,
    id: `${taskId}#${sampleIndex}`,
    taskId,
    sampleIndex,
    ...(pass !== undefined ? { pass } : {}),
    termination: pass ? 'answered' : 'turn_limit',
  });
  const rollouts = evaluationRollouts([line('t2', 0, true), line('t1', 1, false), line('t1', 0, false), line('t3', 0)]);
  assert.deepEqual(
    rollouts.map((r) => [r.label, r.line]),
    [
      ['✗ t1 · sample 0', 2],
      ['✗ t1 · sample 1', 1],
      ['? t3 · sample 0', 3],
      ['✓ t2 · sample 0', 0],
    ],
  );
  assert.equal(rollouts[0].description, 'fail · turn_limit');
});

test('a proposer session renders as a document: candidates with their fate, model text, tool calls folded with arguments and answers', () => {
  const a = 'a'.repeat(40);
  const log = parseSessionLog(
    [
      { kind: 'session_start', at, provider: 'anthropic', model: 'claude-x', round: 1, count: 1, dollarCap: null },
      {
        kind: 'model_call',
        at,
        call: 1,
        inputTokens: 3000,
        outputTokens: 100,
        dollars: 0.05,
        totalDollars: 0.05,
        maxTokens: 4096,
        stop: 'tool_use',
        text: 'Looking first.',
        toolCalls: ['read_file'],
        ms: 1200,
      },
      {
        kind: 'tool_call',
        at,
        call: 1,
        tool: 'read_file',
        args: '{"candidate":"82fa96f4","path":"harness.ts"}',
        argsChars: 44,
        output: 'export default defineHarness(<x>)',
        outputChars: 5000,
        isError: false,
        ms: 3,
      },
      { kind: 'session_end', at, reason: 'finished', modelCalls: 1, toolCalls: 1, inputTokens: 3000, outputTokens: 100, dollars: 0.05, candidates: 1 },
    ]
      .map((e) => JSON.stringify(e))
      .join('\n') + '\n{"kind":"model_c', // a torn last line (a session killed mid-write) is skipped
  );
  assert.equal(log.length, 4);
  const md = renderProposerTranscript({
    run: 'r1',
    phase: 1,
    session: { round: 1, proposer: 'llm', dollars: 0.05, candidates: 1, report: 'Raised topk.' },
    log,
    candidates: [{ treeHash: a, mean: 0.6, se: 0.05, accepted: true }],
    hypothesisOf: () => 'raise topk | to 3',
    policy: 'base',
  });
  assert.match(md, /^# Proposer session — run r1, phase 1, round 1$/m);
  assert.match(
    md,
    /\*\*llm proposer · anthropic claude-x\*\* · 1 model call\(s\), 1 tool call\(s\), 3000 input \/ 100 output tokens · \$0\.0500 · ended: finished/,
  );
  assert.ok(md.includes(`| \`${shortHash(a)}\` | raise topk \\| to 3 | 60.0% ± 5.0 · ✓ accepted |`), md);
  assert.match(md, /^> Looking first\.$/m);
  assert.ok(md.includes('<details><summary>🔧 read_file(candidate: 82fa96f4, path: harness.ts) → 5,000 chars · 3 ms</summary>'), md);
  assert.ok(md.includes('"path": "harness.ts"'), 'the arguments, pretty-printed');
  assert.ok(md.includes('export default defineHarness(<x>)') && md.includes('_(answer: 5000 characters, the first 33 kept)_'), md);
  assert.match(md, /## Report\n\nRaised topk\./);
  assert.equal(toolCallLine('finish', 'not json'), 'finish(not json)');
  // A knob proposer keeps no conversation: its mutation and report are shown.
  const knob = renderProposerTranscript({
    run: 'r1',
    phase: 1,
    session: { round: 1, proposer: 'knob', dollars: 0, candidates: 1, report: 'topk 1 → 3' },
    log: [{ kind: 'knob', seed: 7, round: 1, proposed: [{ parents: [a], hypothesis: 'topk 1 → 3' }] }],
    candidates: [],
  });
  assert.match(knob, /## Knob mutation \(seed 7\)\n\n- from `aaaaaaaa`: topk 1 → 3/);
  assert.doesNotMatch(knob, /## Conversation/);
});
