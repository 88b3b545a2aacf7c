// vscode-free: the Harness Archive view's model — candidates with parent links, scores under each
// policy version, accepted and invalid marks with reasons — from the archive and the runs' journals.
import type { ArchivedCandidate } from '../../archive/harnessArchive.js';
import type { JournalEntry } from '../../engine/journal.js';

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
  submitted: boolean;
}

export interface ArchiveModel {
  roots: string[];
  nodes: Map<string, CandidateNode>;
}

const num = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x : 0);

export function archiveModel(candidates: readonly ArchivedCandidate[], journals: ReadonlyMap<string, readonly JournalEntry[]>, opts: { submitted?: ReadonlySet<string> } = {}): ArchiveModel {
  const nodes = new Map<string, CandidateNode>();
  for (const c of candidates) {
    nodes.set(c.treeHash, {
      treeHash: c.treeHash,
      message: c.message,
      origin: String(c.meta.origin ?? 'proposer'),
      addedAt: c.addedAt,
      parents: c.parents,
      children: [],
      scores: [],
      accepted: [],
      invalid: [],
      incumbentOf: [],
      submitted: opts.submitted?.has(c.treeHash) ?? false,
    });
  }
  for (const [run, entries] of journals) {
    let incumbent: string | undefined;
    for (const e of entries) {
      const n = typeof e.treeHash === 'string' ? nodes.get(e.treeHash) : undefined;
      if (e.type === 'run_started') incumbent = String(e.harness);
      if (e.type === 'phase_completed') incumbent = String(e.harness);
      if (e.type === 'candidate_scored' && n) n.scores.push({ run, phase: num(e.phase), round: num(e.round), version: String(e.version), mean: num(e.mean), se: num(e.se) });
      if (e.type === 'candidate_invalid' && n) n.invalid.push({ run, phase: num(e.phase), reasons: Array.isArray(e.reasons) ? e.reasons.map(String) : [] });
      if (e.type === 'acceptance') nodes.get(String(e.chosen))?.accepted.push({ run, phase: num(e.phase) });
    }
    if (incumbent) nodes.get(incumbent)?.incumbentOf.push(run);
  }
  const roots: string[] = [];
  for (const n of nodes.values()) {
    const parent = n.parents.find((p) => nodes.has(p));
    if (parent) nodes.get(parent)!.children.push(n.treeHash);
    else roots.push(n.treeHash);
  }
  return { roots, nodes };
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

/** One line for the tree: origin, latest score, marks. */
export function describeCandidate(n: CandidateNode): string {
  const parts: string[] = [n.origin];
  const byVersion = scoresByVersion(n);
  const last = byVersion[byVersion.length - 1];
  if (last) parts.push(`${pct(last.mean)} under ${last.version}`);
  if (n.accepted.length) parts.push(`✓ accepted ×${n.accepted.length}`);
  if (n.invalid.length) parts.push(`✗ invalid`);
  if (n.submitted && n.scores.length === 0 && n.invalid.length === 0) parts.push('submitted, awaiting a harness phase');
  return parts.join(' · ');
}

/** A Markdown tooltip: the hypothesis, parents, every score, marks and reasons. */
export function candidateTooltip(n: CandidateNode): string {
  const lines = [`**${n.treeHash.slice(0, 12)}** (${n.origin}) — ${n.message}`, ''];
  if (n.parents.length) lines.push(`derived from ${n.parents.map((p) => '`' + p.slice(0, 12) + '`').join(', ')}`, '');
  for (const s of scoresByVersion(n)) lines.push(`- ${s.version}: ${pct(s.mean)} ± ${(100 * s.se).toFixed(1)} (${s.runs.length} run${s.runs.length > 1 ? 's' : ''})`);
  for (const a of n.accepted) lines.push(`- ✓ accepted in run ${a.run}, phase ${a.phase}`);
  for (const i of n.invalid) lines.push(`- ✗ invalid in run ${i.run}, phase ${i.phase}: ${i.reasons.join('; ')}`);
  return lines.join('\n');
}

/** Two candidates' scores side by side (one row per policy version either was scored under), as Markdown. */
export function compareTable(a: CandidateNode, b: CandidateNode): string {
  const sa = new Map(scoresByVersion(a).map((s) => [s.version, s]));
  const sb = new Map(scoresByVersion(b).map((s) => [s.version, s]));
  const versions = [...new Set([...sa.keys(), ...sb.keys()])];
  const cell = (s?: { mean: number; se: number }) => (s ? `${pct(s.mean)} ± ${(100 * s.se).toFixed(1)}` : '—');
  const marks = (n: CandidateNode) => [n.accepted.length ? `✓ accepted ×${n.accepted.length}` : '', n.invalid.length ? `✗ invalid: ${n.invalid[0].reasons.join('; ')}` : ''].filter(Boolean).join(', ') || '—';
  return [
    `# ${a.treeHash.slice(0, 8)} ↔ ${b.treeHash.slice(0, 8)}`,
    '',
    `| | ${a.treeHash.slice(0, 8)} | ${b.treeHash.slice(0, 8)} |`,
    '|---|---|---|',
    `| origin | ${a.origin} | ${b.origin} |`,
    `| hypothesis | ${a.message.replace(/\|/g, '\\|')} | ${b.message.replace(/\|/g, '\\|')} |`,
    ...versions.map((v) => `| mean on the harness split under \`${v}\` | ${cell(sa.get(v))} | ${cell(sb.get(v))} |`),
    `| marks | ${marks(a)} | ${marks(b)} |`,
    '',
  ].join('\n');
}
