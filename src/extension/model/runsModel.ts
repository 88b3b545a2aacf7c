// vscode-free: the Runs view's model (run → cycle → phase), folded from the engine's journal with
// the engine's own fold (foldRun, ledgerOf), so the view and `whale status` never disagree.
import { existsSync, readdirSync } from 'node:fs';
import { RunStore } from '../../archive/runStore.js';
import { processAlive } from '../../core/processAlive.js';
import type { JournalEntry } from '../../archive/journal.js';
import { foldRun, ledgerOf, type Ledger, type RunState } from '../../archive/runState.js';
import { JournalTail } from './journalTail.js';
import { policyHover, policyLabel, policyNames, shortHash } from './identity.js';

export type RunStatus = 'running' | 'finished' | 'stopped' | 'paused' | 'interrupted' | 'not started';
export type PhaseStatus = 'done' | 'running' | 'interrupted';

export interface PhaseNode {
  index: number;
  kind: 'weight' | 'harness';
  cycle: number;
  status: PhaseStatus;
  version: string;
  harness: string;
  /** Rollouts this phase consumed (training or search) and its validation after it. */
  rollouts: number;
  validation?: { mean: number; se: number; k: number; keyHash?: string };
  /** Weight phase: optimizer steps so far and the last step's training reward. */
  steps?: number;
  lastReward?: number;
  /** Harness phase: proposal rounds done (of `roundsPlanned` when the schedule is fixed), candidates scored and invalid. */
  rounds?: number;
  roundsPlanned?: number;
  scored?: number;
  invalid?: number;
  accepted?: string;
  /** The policy and harness the phase started from (`version`/`harness` are what it ended with). */
  started: { version: string; harness: string };
  /** Harness phase: how the harness it ended with was chosen (journal `acceptance`). */
  acceptance?: AcceptanceNode;
  /** Harness phase: each round's candidates as scored or rejected (round 0 re-scores the incumbent and submissions). */
  roundsDetail?: RoundNode[];
  /** Harness phase: one proposer session per round (its report, cost and log, relative to the run folder). */
  sessions?: ProposerSessionNode[];
}

export interface RoundCandidate {
  treeHash: string;
  /** Harness-split score under the phase's policy; absent when the candidate was invalid. */
  mean?: number;
  se?: number;
  meanTurns?: number;
  cacheHit?: boolean;
  /** The validator's reasons, when the candidate was rejected before scoring. */
  invalid?: string[];
  /** The folder a proposer reported that did not exist (no tree hash then). */
  dir?: string;
  origin?: string;
  /** The candidate this phase accepted. */
  accepted: boolean;
}

export interface RoundNode {
  round: number;
  candidates: RoundCandidate[];
  /** The archive-wide best under the phase's policy after this round. */
  best?: { treeHash: string; mean: number };
  done: boolean;
}

export interface AcceptanceNode {
  rule: string;
  chosen: string;
  archiveBest: string;
  incumbent: string;
  /** Paired acceptance: the paired re-evaluation's verdict (advantage and its se) and whether it overturned the archive-best. */
  paired?: { diff?: number; seDiff?: number; changedChoice: boolean; note?: string };
  /** The chosen harness was scored in an earlier round or phase than this phase's proposals (the search returned to an older candidate). */
  olderWon: boolean;
}

export interface ProposerSessionNode {
  round: number;
  proposer: string;
  dollars: number;
  candidates: number;
  report: string;
  sessionLog?: string;
  stopped?: string;
}

export interface CycleNode {
  cycle: number;
  phases: PhaseNode[];
}

export interface RunNode {
  id: string;
  status: RunStatus;
  /** Why the run finished or stopped, or what a dead engine left behind. */
  detail?: string;
  state?: RunState;
  cycles: CycleNode[];
  /** The phase in progress (running or interrupted). */
  current?: PhaseNode;
  /** pid of the run's latest engine session (alive only when the status is 'running'). */
  pid?: number;
  /** The backend the run was started on and what it could do then (journal `run_started.backend`). */
  backend?: string;
  /** Policy version → "base" / "policy after phase N" (identity.ts). */
  policies: Map<string, string>;
  /** The sealed test evaluation's run-store key (its transcripts), once the run has one. */
  testKeyHash?: string;
}

/** "embedded · training full · token ids yes · logprobs yes" from `run_started.backend`. */
export function describeBackend(b: unknown): string | undefined {
  if (!b || typeof b !== 'object') return undefined;
  const { kind, capabilities: c } = b as { kind?: unknown; capabilities?: Record<string, unknown> };
  if (typeof kind !== 'string') return undefined;
  if (!c) return kind;
  const yn = (x: unknown) => (x ? 'yes' : 'no');
  return `${kind} · training ${String(c.update ?? 'none')} · token ids ${yn(c.tokenIds)} · logprobs ${yn(c.logprobs)}${c.loraLoading !== undefined ? ` · LoRA loading ${yn(c.loraLoading)}` : ''}`;
}

export interface RunModelOptions {
  /** Whether an engine process is alive (default: a signal-0 probe of the pid). */
  isAlive?: (pid: number) => boolean;
  /** The run's config snapshot (for the planned rounds of a fixed schedule). */
  config?: { method?: string; schedule?: { iterations?: number } };
}

const num = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x : 0);

/** A harness phase's rounds from its journal entries: every scored or rejected candidate under its round, in journal order. */
export function roundsOf(mine: readonly JournalEntry[], accepted?: string): RoundNode[] {
  const rounds = new Map<number, RoundNode>();
  const round = (r: number) => {
    let x = rounds.get(r);
    if (!x) rounds.set(r, (x = { round: r, candidates: [], done: false }));
    return x;
  };
  for (const e of mine) {
    if (e.type === 'candidate_scored' || e.type === 'candidate_invalid') {
      const treeHash = typeof e.treeHash === 'string' ? e.treeHash : '';
      const c: RoundCandidate = { treeHash, accepted: !!treeHash && treeHash === accepted };
      if (e.type === 'candidate_scored')
        Object.assign(c, {
          mean: num(e.mean),
          se: num(e.se),
          meanTurns: num(e.meanTurns),
          ...(typeof e.cacheHit === 'boolean' ? { cacheHit: e.cacheHit } : {}),
        });
      else c.invalid = Array.isArray(e.reasons) ? e.reasons.map(String) : [];
      if (typeof e.dir === 'string') c.dir = e.dir;
      if (typeof e.origin === 'string') c.origin = e.origin;
      round(num(e.round)).candidates.push(c);
    }
    if (e.type === 'round_done') {
      const x = round(num(e.round));
      x.done = true;
      if (typeof e.bestTreeHash === 'string') x.best = { treeHash: e.bestTreeHash, mean: num(e.bestMean) };
    }
    if (e.type === 'proposal') round(num(e.round));
  }
  return [...rounds.values()].sort((a, b) => a.round - b.round);
}

function acceptanceNode(acc: JournalEntry, mine: readonly JournalEntry[]): AcceptanceNode {
  const chosen = String(acc.chosen);
  const proposedHere = mine.some((e) => e.type === 'candidate_scored' && e.treeHash === chosen && num(e.round) > 0);
  return {
    rule: String(acc.rule ?? 'archive-best'),
    chosen,
    archiveBest: String(acc.archiveBest ?? chosen),
    incumbent: String(acc.incumbent ?? ''),
    ...(acc.pairedChoice !== undefined || acc.note !== undefined
      ? {
          paired: {
            ...(typeof acc.diff === 'number' ? { diff: acc.diff } : {}),
            ...(typeof acc.seDiff === 'number' ? { seDiff: acc.seDiff } : {}),
            changedChoice: acc.changedChoice === true,
            ...(typeof acc.note === 'string' ? { note: acc.note } : {}),
          },
        }
      : {}),
    olderWon: !proposedHere,
  };
}

function phaseNode(start: JournalEntry, entries: readonly JournalEntry[], opts: RunModelOptions): PhaseNode {
  const index = num(start.phase);
  const mine = entries.filter((e) => e.phase === index);
  const completed = mine.find((e) => e.type === 'phase_completed');
  const l: Ledger = ledgerOf(mine.filter((e) => e.type !== 'validation'));
  const v = mine.find((e) => e.type === 'validation');
  const node: PhaseNode = {
    index,
    kind: start.kind === 'weight' ? 'weight' : 'harness',
    cycle: num(start.cycle),
    status: completed ? 'done' : 'running',
    version: String(completed?.version ?? start.version),
    harness: String(completed?.harness ?? start.harness),
    started: { version: String(start.version), harness: String(start.harness) },
    rollouts: l.trainingRollouts + l.searchRollouts,
    ...(v ? { validation: { mean: num(v.mean), se: num(v.se), k: num(v.k), ...(typeof v.keyHash === 'string' ? { keyHash: v.keyHash } : {}) } } : {}),
  };
  if (node.kind === 'weight') {
    const steps = mine.filter((e) => e.type === 'weight_step');
    node.steps = steps.length;
    if (steps.length) node.lastReward = num(steps[steps.length - 1].meanReward);
  } else {
    node.rounds = mine.filter((e) => e.type === 'round_done').length;
    const iterations = opts.config?.schedule?.iterations;
    if (!start.adaptive && iterations !== undefined) node.roundsPlanned = Math.max(0, iterations - 1);
    node.scored = new Set(mine.filter((e) => e.type === 'candidate_scored').map((e) => e.treeHash)).size;
    node.invalid = mine.filter((e) => e.type === 'candidate_invalid').length;
    const acc = mine.find((e) => e.type === 'acceptance');
    if (acc) {
      node.accepted = String(acc.chosen);
      node.acceptance = acceptanceNode(acc, mine);
    }
    node.roundsDetail = roundsOf(mine, node.accepted);
    node.sessions = mine
      .filter((e) => e.type === 'proposal')
      .map((e) => ({
        round: num(e.round),
        proposer: String(e.proposer ?? 'proposer'),
        dollars: num(e.dollars),
        candidates: Array.isArray(e.candidates) ? e.candidates.length : 0,
        report: typeof e.report === 'string' ? e.report : '',
        ...(typeof e.sessionLog === 'string' ? { sessionLog: e.sessionLog } : {}),
        ...(typeof e.stopped === 'string' ? { stopped: e.stopped } : {}),
      }));
  }
  return node;
}

/** The Runs view's node for one run, from its journal entries. */
export function runModel(id: string, entries: readonly JournalEntry[], opts: RunModelOptions = {}): RunNode {
  const isAlive = opts.isAlive ?? processAlive;
  const sessions = entries.filter((e) => e.type === 'session_started');
  const lastSession = sessions[sessions.length - 1];
  const lastSessionAt = lastSession ? entries.lastIndexOf(lastSession) : -1;
  const pid = lastSession && typeof lastSession.pid === 'number' ? lastSession.pid : undefined;
  const after = entries.slice(lastSessionAt + 1);
  const sessionEnded = after.some((e) => e.type === 'run_completed' || e.type === 'run_stopped');
  const alive = pid !== undefined && !sessionEnded && isAlive(pid);

  if (!entries.some((e) => e.type === 'run_started')) {
    return { id, status: alive ? 'running' : 'not started', cycles: [], policies: new Map(), ...(pid !== undefined ? { pid } : {}) };
  }
  const state = foldRun(entries);
  const phases = entries.filter((e) => e.type === 'phase_started').map((s) => phaseNode(s, entries, opts));
  const cycles: CycleNode[] = [];
  for (const p of phases) {
    let c = cycles.find((x) => x.cycle === p.cycle);
    if (!c) cycles.push((c = { cycle: p.cycle, phases: [] }));
    c.phases.push(p);
  }
  const open = phases.find((p) => p.status === 'running');
  let status: RunStatus;
  let detail: string | undefined;
  if (state.finished) {
    status = 'finished';
    detail = state.finished.reason;
  } else if (alive) {
    status = 'running';
  } else if (after.some((e) => e.type === 'run_stopped')) {
    status = 'stopped';
    detail = String(after.find((e) => e.type === 'run_stopped')!.reason);
  } else if (open) {
    status = 'interrupted';
    detail = `the engine (pid ${pid ?? '?'}) ended during phase ${open.index}; resume continues it without repeating paid work`;
  } else {
    status = 'paused';
    detail = `${state.nextPhase} phase(s) completed; the next step continues the schedule`;
  }
  if (open && status === 'interrupted') open.status = 'interrupted';
  const backend = describeBackend(entries.find((e) => e.type === 'run_started')?.backend);
  const testKey = entries.filter((e) => e.type === 'test_evaluation').pop()?.keyHash;
  return {
    id,
    status,
    ...(detail ? { detail } : {}),
    state,
    cycles,
    policies: policyNames(entries),
    ...(open ? { current: open } : {}),
    ...(pid !== undefined ? { pid } : {}),
    ...(backend ? { backend } : {}),
    ...(typeof testKey === 'string' ? { testKeyHash: testKey } : {}),
  };
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

/** One line about a phase for the tree: what it did, its validation, its rollouts. */
export function describePhase(p: PhaseNode): string {
  const parts: string[] = [];
  if (p.kind === 'weight') parts.push(`${p.steps ?? 0} step(s)${p.lastReward !== undefined ? `, reward ${pct(p.lastReward)}` : ''}`);
  else
    parts.push(
      `round ${p.rounds ?? 0}${p.roundsPlanned !== undefined ? `/${p.roundsPlanned}` : ''}, ${p.scored ?? 0} scored${p.invalid ? `, ${p.invalid} invalid` : ''}`,
    );
  if (p.validation) parts.push(`val mean@${p.validation.k} ${pct(p.validation.mean)} ± ${(100 * p.validation.se).toFixed(1)}`);
  parts.push(`${p.rollouts} rollouts`);
  return parts.join(' · ');
}

/** How a phase's harness was chosen, in a line: "archive-best: 82fa96f4 (proposed this phase)". */
export function describeAcceptance(a: AcceptanceNode): string {
  const parts = [`${a.rule}: ${shortHash(a.chosen)}`];
  if (a.chosen === a.incumbent) parts.push('the incumbent stays');
  else parts.push(a.olderWon ? 'an older candidate won' : 'proposed this phase');
  if (a.paired) {
    if (a.paired.diff !== undefined) parts.push(`paired advantage ${(100 * a.paired.diff).toFixed(1)} ± ${(100 * (a.paired.seDiff ?? 0)).toFixed(1)}`);
    if (a.paired.changedChoice) parts.push(`overturned the archive-best ${shortHash(a.archiveBest)}`);
    if (a.paired.note) parts.push(a.paired.note);
  }
  return parts.join(' · ');
}

/** A round's candidate in a line: score ± se and turns, or why it was rejected. */
export function describeRoundCandidate(c: RoundCandidate): string {
  if (c.invalid) return `✗ invalid: ${c.invalid.join('; ') || 'no reason recorded'}`;
  const parts = [`${pct(c.mean ?? 0)} ± ${(100 * (c.se ?? 0)).toFixed(1)}`];
  if (c.meanTurns) parts.push(`${c.meanTurns.toFixed(1)} turns`);
  if (c.cacheHit) parts.push('cached');
  if (c.accepted) parts.push('✓ accepted');
  return parts.join(' · ');
}

/** A phase's hover: the policy and harness it started from and ended with (named, full hashes), and how its harness was accepted. */
export function phaseTooltip(p: PhaseNode, policies: ReadonlyMap<string, string>): string {
  const lines = [`**phase ${p.index}: ${p.kind}** (cycle ${p.cycle})`, ''];
  lines.push(`- started from ${policyHover(p.started.version, policies)} with harness \`${shortHash(p.started.harness)}\``);
  if (p.status === 'done') lines.push(`- ended with ${policyHover(p.version, policies)} and harness \`${shortHash(p.harness)}\` (\`${p.harness}\`)`);
  if (p.acceptance) lines.push(`- accepted harness \`${shortHash(p.acceptance.chosen)}\` by ${describeAcceptance(p.acceptance)}`);
  if (p.validation)
    lines.push(
      `- validation after the phase: mean@${p.validation.k} ${pct(p.validation.mean)} ± ${(100 * p.validation.se).toFixed(1)} on the val split, under ${policyLabel(p.version, policies)}`,
    );
  return lines.join('\n');
}

/** One line about a run: its status, best pair on validation, ledger. */
export function describeRun(r: RunNode): string {
  const parts: string[] = [r.status];
  if (r.current && r.status === 'running') parts.push(`phase ${r.current.index} (${r.current.kind}) of cycle ${r.current.cycle}`);
  const s = r.state;
  if (s?.best) parts.push(`best val ${pct(s.best.mean)}`);
  if (s) parts.push(`${s.ledger.trainingRollouts + s.ledger.searchRollouts} rollouts`);
  return parts.join(' · ');
}

export function describeLedger(l: Ledger): string {
  return `training ${l.trainingRollouts}, search ${l.searchRollouts}, evaluation ${l.evalRollouts} rollouts; proposer $${l.proposerDollars.toFixed(2)}; wall ${(l.wallMs / 1000).toFixed(0)} s`;
}

/**
 * Every run of a store, followed incrementally: `refresh()` reads only what each journal gained
 * since the last call and refolds only the runs that changed (or whose engine may have died).
 */
export class RunsFeed {
  private readonly tails = new Map<string, JournalTail>();
  private readonly nodes = new Map<string, RunNode>();
  private readonly runs: RunStore;

  constructor(
    readonly storeDir: string,
    private readonly opts: Omit<RunModelOptions, 'config'> = {},
  ) {
    this.runs = new RunStore(storeDir);
  }

  /** Runs newest first, and whether anything changed since the last refresh. */
  refresh(): { runs: RunNode[]; changed: boolean } {
    let changed = false;
    const ids = existsSync(this.runs.runsDir()) ? readdirSync(this.runs.runsDir()).filter((id) => existsSync(this.runs.journalFile(id))) : [];
    for (const id of [...this.nodes.keys()]) {
      if (!ids.includes(id)) {
        this.nodes.delete(id);
        this.tails.delete(id);
        changed = true;
      }
    }
    for (const id of ids) {
      let tail = this.tails.get(id);
      if (!tail) this.tails.set(id, (tail = new JournalTail(this.runs.journalFile(id))));
      const r = tail.read();
      const before = this.nodes.get(id);
      // A running node is refolded on every refresh: its engine may have died without writing a line.
      if (!r.changed && before && before.status !== 'running') continue;
      let config: RunModelOptions['config'];
      try {
        config = this.runs.config(id);
      } catch {
        config = undefined;
      }
      const node = runModel(id, r.entries, { ...this.opts, config });
      if (!before || r.changed || before.status !== node.status) changed = true;
      this.nodes.set(id, node);
    }
    return { runs: [...this.nodes.values()].sort((a, b) => b.id.localeCompare(a.id)), changed };
  }

  entries(id: string): readonly JournalEntry[] {
    return this.tails.get(id)?.read().entries ?? [];
  }
}
