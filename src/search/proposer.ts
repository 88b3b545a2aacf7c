/**
 * The proposer interface: what the harness phase calls once per round to get new candidates.
 * Two kinds implement it: `knob` (offline, seeded mutation of declared knobs and prompt variants;
 * knobProposer.ts) and `llm` (a model with file-system tools over the archive; llm/llmProposer.ts).
 *
 * The harness phase builds an ArchiveView (read-only: sources through `materialize`, scores per
 * policy version, per-task results, trajectories, annotations, past round reports), hands it to
 * `propose` with an empty `outDir`, and gets back folders under `outDir` — one per new candidate —
 * with their parents and hypotheses. The phase (not the proposer) validates, archives and evaluates
 * them; a proposer never writes into the archive or the run store, and never sees the test split.
 */
import type { Annotation } from '../archive/annotationStore.js';
import type { TaskResult } from '../archive/resultStore.js';

/** One evaluation of a candidate under one policy version (a row of the run store). */
export interface CandidateScore {
  policyVersion: string;
  /** The task split it was evaluated on (the harness split during search). */
  split: string;
  mean: number;
  /** Standard error of `mean` across tasks. */
  se: number;
  meanTurns: number;
  /** Run-store key hash: `view.taskResults(keyHash)`, `view.trajectoriesFile(keyHash)`. */
  keyHash: string;
}

/** A candidate as a proposer sees it. */
export interface CandidateRecord {
  treeHash: string;
  /** Tree hashes of the candidates it was derived from. */
  parents: string[];
  /** The round it was proposed in (0 = the phase's seed). */
  round: number;
  origin: 'seed' | 'proposer' | 'human';
  hypothesis: string;
  /** False when validation rejected it (it is archived all the same, with its reasons). */
  valid: boolean;
  invalidReasons: string[];
  /** Every evaluation of it known to the run store, under any policy version. */
  scores: CandidateScore[];
}

export type SearchMode = 'full' | 'fst';

/** A read-only view of the archive for one round. */
export interface ArchiveView {
  domain: { id: string; searchSpace: string };
  /** 'fst': only the declared prompt strings of h0 may change (validate.ts enforces it). */
  mode: SearchMode;
  candidates: CandidateRecord[];
  /** Tree hash of the currently accepted candidate. */
  incumbent: string;
  /** The policy version the round's candidates will be evaluated under (compare scores under it). */
  policyVersion: string;
  /** The candidate's folder, written out read-only; the same path for repeated calls. */
  materialize(treeHash: string): Promise<string>;
  /** Per-task results of an evaluation (empty when unknown). */
  taskResults(keyHash: string): TaskResult[];
  /** Path of the evaluation's trajectories (JSON lines, one Trajectory each). */
  trajectoriesFile(keyHash: string): string;
  annotations: Annotation[];
  /** Reports the proposer returned in earlier rounds of this phase (and earlier phases of the run). */
  pastReports: { round: number; text: string }[];
  /** A person asked that this round's candidates derive from this candidate rather than the incumbent (archive/proposalSeed.ts). */
  seed?: { treeHash: string; direction: string };
}

export interface ProposeRequest {
  round: number;
  /** M: how many candidates to write (a proposer may return fewer, e.g. when its space is exhausted). */
  count: number;
  view: ArchiveView;
  /** An empty folder; write each new candidate as a folder under it. */
  outDir: string;
  /** Seed for everything random in the proposer: the same view + seed gives the same proposals. */
  seed: number;
  signal?: AbortSignal;
  /**
   * Validates a candidate folder the way the harness phase will (FST rules, manifest, bundle, smoke
   * run), so a proposer can hand a failing candidate back to its author once. Results are cached by
   * tree hash: the phase does not pay for the smoke run twice.
   */
  validate?(dir: string): Promise<{ ok: boolean; reasons: string[]; warnings?: string[] }>;
  /**
   * A JSON-lines file the proposer appends its session log to as it goes (each model call with its
   * tokens and cost, each tool call): written durably, so money spent by a session that crashes is
   * still on record (the harness phase charges it to the ledger on resume).
   */
  logFile?: string;
  /** Dollars the run may still spend on proposals (the budget's remainder); undefined = no run cap. */
  dollarsLeft?: number;
}

export interface ProposedCandidate {
  /** Absolute path of the candidate folder (under outDir). */
  dir: string;
  /** Tree hashes of the archive candidates it was derived from. */
  parents: string[];
  /** What it changes and why it should help (one or two sentences). */
  hypothesis: string;
}

export interface Proposal {
  candidates: ProposedCandidate[];
  /** A short Markdown report of the round (what was tried and why), fed back as pastReports. */
  report: string;
  /** Money the round cost (0 for offline proposers). */
  dollars: number;
  /** Proposer session log (tool calls, costs) for the run store. */
  log?: unknown[];
  /** Why the session ended before writing all candidates (a dollar cap, a tool-call cap, a timeout). */
  stopped?: string;
}

export interface Proposer {
  readonly kind: string;
  propose(req: ProposeRequest): Promise<Proposal>;
}

/** The score of a candidate under a policy version on a split (the latest row if several), or undefined. */
export function scoreUnder(c: CandidateRecord, policyVersion: string, split?: string): CandidateScore | undefined {
  const rows = c.scores.filter((s) => s.policyVersion === policyVersion && (split === undefined || s.split === split));
  return rows.length > 0 ? rows[rows.length - 1] : undefined;
}
