// vscode-free: the Harness Archive view's model — candidates with parent links, scores under each
// policy version, accepted and invalid marks with reasons — from the archive and the runs' journals.
import type { ArchivedCandidate } from '../../archive/harnessArchive.js';
import type { JournalEntry } from '../../archive/journal.js';
import { foldRun } from '../../archive/runState.js';
import type { EvaluationRow } from './evaluations.js';
import { policyHover, policyLabel, policyNames, shortHash } from './identity.js';

export interface CandidateScoreRow {
  run: string;
  phase: number;
  round: number;
  version: string;
  mean: number;
  se: number;
}

export interface CandidateNode {
  treeHash: string;
  message: string;
  /** What the candidate tries (the proposer's hypothesis, else the commit message), in full. */
  hypothesis: string;
  origin: string;
  addedAt: string;
  parents: string[];
  /** Candidates whose first parent is this one (the tree's children). */
  children: string[];
  scores: CandidateScoreRow[];
  accepted: { run: string; phase: number }[];
  invalid: { run: string; phase: number; reasons: string[] }[];
  /** Runs whose current harness this is. */
  incumbentOf: string[];
  /** Runs whose best pair on validation has this harness. */
  bestPairOf: string[];
  submitted: boolean;
  /** Evaluations of it in the run store other than search scoring (validations, WHALE: Evaluate, `whale eval`). */
  evaluations: EvaluationRow[];
}

export interface ArchiveModel {
  roots: string[];
  nodes: Map<string, CandidateNode>;
  /** Policy version → its name ("base", "policy after phase 2"), from every run's journal. */
  policies: Map<string, string>;
}

const num = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x : 0);

export function archiveModel(
  candidates: readonly ArchivedCandidate[],
  journals: ReadonlyMap<string, readonly JournalEntry[]>,
  opts: { submitted?: ReadonlySet<string>; evaluations?: readonly EvaluationRow[] } = {},
): ArchiveModel {
  const nodes = new Map<string, CandidateNode>();
  for (const c of candidates) {
    nodes.set(c.treeHash, {
      treeHash: c.treeHash,
      message: c.message,
      hypothesis: typeof c.meta.hypothesis === 'string' && c.meta.hypothesis.trim() ? c.meta.hypothesis : c.message,
      origin: String(c.meta.origin ?? 'proposer'),
      addedAt: c.addedAt,
      parents: c.parents,
      children: [],
      scores: [],
      accepted: [],
      invalid: [],
      incumbentOf: [],
      bestPairOf: [],
      submitted: opts.submitted?.has(c.treeHash) ?? false,
      evaluations: [],
    });
  }
  const policies = new Map<string, string>();
  const searchKeys = new Set<string>();
  for (const [run, entries] of journals) {
    policyNames(entries, policies);
    if (entries.some((e) => e.type === 'run_started')) {
      const best = foldRun(entries).best;
      if (best) nodes.get(best.harness)?.bestPairOf.push(run);
    }
    let incumbent: string | undefined;
    for (const e of entries) {
      const n = typeof e.treeHash === 'string' ? nodes.get(e.treeHash) : undefined;
      if (e.type === 'run_started') incumbent = String(e.harness);
      if (e.type === 'phase_completed') incumbent = String(e.harness);
      if (e.type === 'candidate_scored' && typeof e.keyHash === 'string') searchKeys.add(e.keyHash);
      if (e.type === 'candidate_scored' && n)
        n.scores.push({ run, phase: num(e.phase), round: num(e.round), version: String(e.version), mean: num(e.mean), se: num(e.se) });
      if (e.type === 'candidate_invalid' && n) n.invalid.push({ run, phase: num(e.phase), reasons: Array.isArray(e.reasons) ? e.reasons.map(String) : [] });
      if (e.type === 'acceptance') nodes.get(String(e.chosen))?.accepted.push({ run, phase: num(e.phase) });
    }
    if (incumbent) nodes.get(incumbent)?.incumbentOf.push(run);
  }
  for (const ev of opts.evaluations ?? []) if (!searchKeys.has(ev.keyHash)) nodes.get(ev.harness)?.evaluations.push(ev);
  const roots: string[] = [];
  for (const n of nodes.values()) {
    const parent = n.parents.find((p) => nodes.has(p));
    if (parent) nodes.get(parent)!.children.push(n.treeHash);
    else roots.push(n.treeHash);
  }
  return { roots, nodes, policies };
}

/** The best score of a candidate under each policy version it was scored under (latest version last). */
export function scoresByVersion(n: CandidateNode): { version: string; mean: number; se: number; runs: string[] }[] {
  const out = new Map<string, { version: string; mean: number; se: number; runs: string[] }>();
  for (const s of n.scores) {
    const cur = out.get(s.version);
    if (!cur) out.set(s.version, { version: s.version, mean: s.mean, se: s.se, runs: [s.run] });
    else if (!cur.runs.includes(s.run)) cur.runs.push(s.run);
  }
  return [...out.values()];
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const pm = (s: { mean: number; se: number }) => `${pct(s.mean)} ± ${(100 * s.se).toFixed(1)}`;

/** Characters of the hypothesis a tree label keeps: the row must fit a side bar, or VS Code draws a selected row blank. */
export const LABEL_CHANGE_CHARS = 48;

/** The first line of a text, whitespace collapsed, clipped to `max` characters with an ellipsis. */
export function clipLine(text: string, max: number): string {
  const line = (text.split('\n').find((l) => l.trim()) ?? '').replace(/\s+/g, ' ').trim();
  return line.length <= max ? line : `${line.slice(0, max - 1).trimEnd()}…`;
}

/** The tree label: the candidate's short id and a one-line change, clipped. */
export function candidateLabel(n: CandidateNode): string {
  return `${shortHash(n.treeHash)} ${clipLine(n.hypothesis, LABEL_CHANGE_CHARS)}`;
}

/** The latest policy's score (the last version the candidate was scored under). */
function latestScore(n: CandidateNode) {
  const byVersion = scoresByVersion(n);
  return byVersion[byVersion.length - 1];
}

/** The row's description: latest score ± se under a named policy, then marks (incumbent, best pair, accepted, invalid, second parent). */
export function describeCandidate(n: CandidateNode, policies: ReadonlyMap<string, string> = new Map()): string {
  const parts: string[] = [];
  const last = latestScore(n);
  if (last) parts.push(`${pm(last)} under ${policyLabel(last.version, policies)}`);
  if (n.incumbentOf.length) parts.push('★ incumbent');
  if (n.bestPairOf.length) parts.push('◆ best pair');
  if (n.accepted.length) parts.push(`✓ accepted ×${n.accepted.length}`);
  if (n.invalid.length) parts.push(`✗ invalid`);
  if (n.parents.length > 1) parts.push(`⨯ ${n.parents.slice(1).map(shortHash).join(', ')}`);
  if (n.submitted && n.scores.length === 0 && n.invalid.length === 0) parts.push('submitted, awaiting a harness phase');
  return parts.join(' · ');
}

/** A Markdown hover: full hash, the whole hypothesis, parents (both of a crossover), every score with its policy, marks and reasons. */
export function candidateTooltip(n: CandidateNode, policies: ReadonlyMap<string, string> = new Map()): string {
  const lines = [`**${shortHash(n.treeHash)}** (${n.origin}) \`${n.treeHash}\``, '', n.hypothesis, ''];
  if (n.parents.length > 1) lines.push(`crossover of ${n.parents.map((p) => '`' + shortHash(p) + '`').join(' and ')}`, '');
  else if (n.parents.length) lines.push(`derived from \`${shortHash(n.parents[0])}\``, '');
  for (const s of scoresByVersion(n))
    lines.push(`- ${policyHover(s.version, policies)}: ${pm(s)} on the harness split (${s.runs.length} run${s.runs.length > 1 ? 's' : ''})`);
  if (n.incumbentOf.length) lines.push(`- ★ incumbent (current harness) of ${n.incumbentOf.join(', ')}`);
  if (n.bestPairOf.length) lines.push(`- ◆ harness of the best pair on validation in ${n.bestPairOf.join(', ')}`);
  for (const a of n.accepted) lines.push(`- ✓ accepted in run ${a.run}, phase ${a.phase}`);
  for (const i of n.invalid) lines.push(`- ✗ invalid in run ${i.run}, phase ${i.phase}: ${i.reasons.join('; ')}`);
  return lines.join('\n');
}

export type CandidateOrder = 'score' | 'lineage';

/**
 * Siblings in the order the view shows them: 'lineage' keeps the archive's order (oldest first, as
 * they were derived); 'score' puts the best latest score first, unscored ones last in archive order.
 */
export function sortCandidates(hashes: readonly string[], model: ArchiveModel, order: CandidateOrder): string[] {
  const at = (h: string) => model.nodes.get(h)?.addedAt ?? '';
  const lineage = [...hashes].sort((a, b) => at(a).localeCompare(at(b)));
  if (order === 'lineage') return lineage;
  const score = (h: string) => {
    const n = model.nodes.get(h);
    return n ? (latestScore(n)?.mean ?? -Infinity) : -Infinity;
  };
  return lineage.sort((a, b) => score(b) - score(a));
}

/** One figure of a comparison: the split, the policy and (for evaluations) k it was measured with. */
interface Figure {
  key: string;
  label: (policies: ReadonlyMap<string, string>) => string;
  version: string;
  split: string;
  mean: number;
  se: number;
}

/** Every figure of a candidate: its harness-split scores per policy, and its latest evaluation per (split, policy, k). */
function figures(n: CandidateNode): Map<string, Figure> {
  const out = new Map<string, Figure>();
  for (const s of scoresByVersion(n))
    out.set(`search|${s.version}`, {
      key: `search|${s.version}`,
      label: (p) => `mean on the harness split under ${policyLabel(s.version, p)} (\`${shortHash(s.version)}\`)`,
      version: s.version,
      split: 'harness',
      mean: s.mean,
      se: s.se,
    });
  for (const e of n.evaluations) {
    const key = `eval|${e.split}|${e.version}|${e.k}`;
    out.set(key, {
      key,
      label: (p) => `mean@${e.k} on the ${e.split} split under ${policyLabel(e.version, p)} (\`${shortHash(e.version)}\`)`,
      version: e.version,
      split: e.split,
      mean: e.mean,
      se: e.se,
    });
  }
  return out;
}

/** The figures both candidates have: the only ones a comparison can rest on. */
export function sharedFigures(a: CandidateNode, b: CandidateNode): string[] {
  const fb = figures(b);
  return [...figures(a).keys()].filter((k) => fb.has(k));
}

/** Two candidates' figures side by side (one row per split and policy either was measured under; shared rows first), as Markdown. */
export function compareTable(a: CandidateNode, b: CandidateNode, policies: ReadonlyMap<string, string> = new Map()): string {
  const fa = figures(a);
  const fb = figures(b);
  const shared = new Set(sharedFigures(a, b));
  const keys = [...new Set([...fa.keys(), ...fb.keys()])].sort((x, y) => Number(shared.has(y)) - Number(shared.has(x)));
  const cell = (s?: { mean: number; se: number }) => (s ? `${pct(s.mean)} ± ${(100 * s.se).toFixed(1)}` : '—');
  const delta = (k: string) => {
    const [x, y] = [fa.get(k), fb.get(k)];
    if (!x || !y) return '';
    const d = y.mean - x.mean;
    return `${d >= 0 ? '+' : '−'}${(100 * Math.abs(d)).toFixed(1)} (± ${(100 * Math.hypot(x.se, y.se)).toFixed(1)})`;
  };
  const marks = (n: CandidateNode) =>
    [n.accepted.length ? `✓ accepted ×${n.accepted.length}` : '', n.invalid.length ? `✗ invalid: ${n.invalid[0].reasons.join('; ')}` : '']
      .filter(Boolean)
      .join(', ') || '—';
  const lines = [
    `# ${shortHash(a.treeHash)} ↔ ${shortHash(b.treeHash)}`,
    '',
    shared.size
      ? `Compared like with like on ${shared.size} figure(s) both were measured with (same split and policy); the other rows are one-sided.`
      : `**Not comparable yet:** these two were never measured on the same split under the same policy (a \`—\` is a figure one of them lacks). Run **WHALE: Score Both Under One Policy…** to measure both the same way.`,
    '',
    // What each tries, above the table: a long hypothesis in a cell squeezes the figures out of sight.
    ...[a, b].map((n) => `- **${shortHash(n.treeHash)}** (${n.origin}): ${n.hypothesis.replace(/\n+/g, ' ')}`),
    '',
    `| | ${shortHash(a.treeHash)} | ${shortHash(b.treeHash)} | difference |`,
    '|---|---|---|---|',
    `| origin | ${a.origin} | ${b.origin} | |`,
    ...keys.map((k) => `| ${(fa.get(k) ?? fb.get(k))!.label(policies)} | ${cell(fa.get(k))} | ${cell(fb.get(k))} |${delta(k) ? ` ${delta(k)} ` : ' '}|`),
    `| marks | ${marks(a)} | ${marks(b)} | |`,
    '',
  ];
  return lines.join('\n');
}

/** The picker's order: best latest score first (unscored last), accepted candidates marked. */
export function pickerItems(model: ArchiveModel, exclude?: string): { node: CandidateNode; label: string; description: string; detail: string }[] {
  const hashes = sortCandidates(
    [...model.nodes.keys()].filter((h) => h !== exclude),
    model,
    'score',
  );
  return hashes.map((h) => {
    const n = model.nodes.get(h)!;
    const marks = [n.accepted.length ? '✓ accepted' : '', n.incumbentOf.length ? '★ incumbent' : '', n.invalid.length ? '✗ invalid' : ''].filter(Boolean);
    const last = latestScore(n);
    // Marks in the description (short, beside the label); the score and lineage on the full-width detail line.
    return {
      node: n,
      label: candidateLabel(n),
      description: marks.join(' '),
      detail: [
        last ? `${pm(last)} under ${policyLabel(last.version, model.policies)}` : 'not scored yet',
        `${n.origin}${n.parents.length ? `, from ${n.parents.map(shortHash).join(' + ')}` : ''}`,
      ].join(' · '),
    };
  });
}
