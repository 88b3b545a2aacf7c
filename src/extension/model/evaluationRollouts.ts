// vscode-free: what the cockpit offers to open for one evaluation (a phase's validation, the sealed
// test): its rollouts from the byte-offset index of its trajectories file, failures first, and a
// harness phase's candidates in one list, best first.
import type { LineEntry } from '../../archive/jsonlIndex.js';
import { clipLine } from './archiveModel.js';
import { shortHash } from './identity.js';
import { describeRoundCandidate, type PhaseNode, type RoundCandidate } from './runsModel.js';

export interface RolloutPick {
  /** 0-based line among the file's trajectories (for opening it). */
  line: number;
  id: string;
  taskId: string;
  sample: number;
  pass?: boolean;
  termination: string;
  label: string;
  description: string;
}

/** Every rollout of an evaluation: failures first (then unknown verdicts, then passes), by task and sample. */
export function evaluationRollouts(lines: readonly LineEntry[]): RolloutPick[] {
  const rank = (p?: boolean) => (p === false ? 0 : p === undefined ? 1 : 2);
  return lines
    .map((l, line) => ({
      line,
      id: l.id ?? `line ${line + 1}`,
      taskId: l.taskId ?? '?',
      sample: l.sampleIndex ?? -1,
      ...(l.pass !== undefined ? { pass: l.pass } : {}),
      termination: l.termination ?? 'unknown',
    }))
    .sort((a, b) => rank(a.pass) - rank(b.pass) || a.taskId.localeCompare(b.taskId) || a.sample - b.sample || a.line - b.line)
    .map((r) => ({
      ...r,
      label: `${r.pass === true ? '✓' : r.pass === false ? '✗' : '?'} ${r.taskId} · sample ${r.sample}`,
      description: `${r.pass === true ? 'pass' : r.pass === false ? 'fail' : 'verdict not indexed'} · ${r.termination}`,
    }));
}

export interface PhaseCandidatePick {
  treeHash: string;
  round: number;
  candidate: RoundCandidate;
  label: string;
  description: string;
}

/** A harness phase's candidates across its rounds, each once (its latest row): accepted first, then by score, invalid last. */
export function phaseCandidates(phase: PhaseNode, hypothesisOf: (treeHash: string) => string | undefined = () => undefined): PhaseCandidatePick[] {
  const latest = new Map<string, { round: number; candidate: RoundCandidate }>();
  for (const r of phase.roundsDetail ?? []) for (const c of r.candidates) if (c.treeHash) latest.set(c.treeHash, { round: r.round, candidate: c });
  const rank = (c: RoundCandidate) => (c.accepted ? 2 : c.invalid ? -1 : 0);
  return [...latest.entries()]
    .sort(([, a], [, b]) => rank(b.candidate) - rank(a.candidate) || (b.candidate.mean ?? -1) - (a.candidate.mean ?? -1))
    .map(([treeHash, { round, candidate }]) => {
      const hyp = hypothesisOf(treeHash);
      return {
        treeHash,
        round,
        candidate,
        label: `${shortHash(treeHash)}${hyp ? ` ${clipLine(hyp, 60)}` : ''}`,
        description: `round ${round} · ${describeRoundCandidate(candidate)}`,
      };
    });
}
