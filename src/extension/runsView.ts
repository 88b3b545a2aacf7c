import * as vscode from 'vscode';
import { chosenWhere } from '../core/phaseLabels.js';
import {
  describeAcceptance,
  describeLedger,
  describePhase,
  describeRoundCandidate,
  describeRun,
  type CycleNode,
  type PhaseNode,
  type ProposerSessionNode,
  type RoundCandidate,
  type RoundNode,
  type RunNode,
} from './model/runsModel.js';
import type { StoreMonitor } from './storeMonitor.js';
import type { BackendHealthMonitor } from './backendHealth.js';
import { backendRowDetail } from './model/backendHealth.js';
import { policyLabel, shortHash } from './model/identity.js';
import { phaseTooltip } from './model/runsModel.js';
import { toUri } from './archiveFs.js';
import { clipLine, LABEL_CHANGE_CHARS } from './model/archiveModel.js';

export type RunsItem =
  | { kind: 'run'; run: RunNode }
  | { kind: 'cycle'; run: RunNode; cycle: CycleNode }
  | { kind: 'phase'; run: RunNode; phase: PhaseNode }
  | { kind: 'session'; run: RunNode; phase: PhaseNode; session: ProposerSessionNode }
  | { kind: 'round'; run: RunNode; phase: PhaseNode; round: RoundNode }
  | { kind: 'candidate'; run: RunNode; phase: PhaseNode; round: RoundNode; candidate: RoundCandidate }
  | { kind: 'info'; label: string; detail: string; icon?: string; command?: vscode.Command };

const RUN_ICON: Record<RunNode['status'], string> = {
  running: 'sync~spin',
  finished: 'pass',
  stopped: 'debug-stop',
  paused: 'debug-pause',
  interrupted: 'warning',
  'not started': 'circle-outline',
};
const PHASE_ICON: Record<PhaseNode['status'], string> = { done: 'check', running: 'loading~spin', interrupted: 'warning' };
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

/** The best pair's row opens its harness's diff against the run's starting harness (with both scores), or the harness itself when it is the starting one. */
function bestPairDiff(run: RunNode): { command?: vscode.Command } {
  const start = run.cycles[0]?.phases[0]?.started.harness;
  const best = run.state?.best?.harness;
  if (!best) return {};
  return start && start !== best
    ? { command: { command: 'whale.compareCandidates', title: 'Compare with the Starting Harness', arguments: [start, best] } }
    : { command: { command: 'whale.openCandidate', title: 'Open the Best Pair’s Harness', arguments: [best] } };
}

/** What a phase's row opens: a harness phase its candidates, a weight phase its validation's transcripts. */
function phaseCommand(run: RunNode, p: PhaseNode): vscode.Command | undefined {
  if (p.kind === 'harness' && p.roundsDetail?.some((r) => r.candidates.some((c) => c.treeHash)))
    return { command: 'whale.showPhaseCandidates', title: "Show the Phase's Candidates", arguments: [run.id, p.index] };
  if (p.validation?.keyHash)
    return {
      command: 'whale.openEvaluationTranscripts',
      title: 'Open Validation Transcripts',
      arguments: [p.validation.keyHash, `validation after phase ${p.index}`],
    };
  return undefined;
}

/** The Runs view: a provider over the vscode-free runs model (model/runsModel.ts). */
export class RunsTreeProvider implements vscode.TreeDataProvider<RunsItem> {
  private readonly emitter = new vscode.EventEmitter<RunsItem | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;

  /** A candidate's hypothesis (from the Harness Archive view, which reads the archive); see useArchive. */
  private hypothesisOf: (treeHash: string) => string | undefined = () => undefined;

  constructor(
    private readonly monitor: StoreMonitor,
    private readonly health?: BackendHealthMonitor,
  ) {
    monitor.onDidChange(() => this.emitter.fire(undefined));
    health?.onDidChange(() => this.emitter.fire(undefined));
  }

  /** Round candidates show their hypotheses from the archive view's model, refreshed when it reloads. */
  useArchive(archive: { current(): { nodes: ReadonlyMap<string, { hypothesis: string }> }; onDidChangeTreeData: vscode.Event<unknown> }): void {
    this.hypothesisOf = (h) => archive.current().nodes.get(h)?.hypothesis;
    archive.onDidChangeTreeData(() => this.emitter.fire(undefined));
  }

  getChildren(item?: RunsItem): RunsItem[] {
    if (!item) return this.monitor.current().runs.map((run) => ({ kind: 'run', run }));
    if (item.kind === 'run') {
      const s = item.run.state;
      const info: RunsItem[] = [];
      if (item.run.detail) info.push({ kind: 'info', label: item.run.status, detail: item.run.detail });
      if (item.run.backend) info.push({ kind: 'info', label: 'backend', detail: backendRowDetail(item.run.backend, this.health?.view()) });
      if (s) info.push({ kind: 'info', label: 'ledger', detail: describeLedger(s.ledger) });
      if (s?.best)
        info.push({
          kind: 'info',
          label: 'best pair',
          detail: `val ${pct(s.best.mean)} ± ${(100 * s.best.se).toFixed(1)} on the val split (${policyLabel(s.best.version, item.run.policies)}, harness ${shortHash(s.best.harness)}, ${chosenWhere(s.best.phase)})`,
          ...bestPairDiff(item.run),
        });
      if (s?.test)
        info.push({
          kind: 'info',
          label: 'sealed test',
          detail: `mean@${s.test.k} ${pct(s.test.mean)} ± ${(100 * s.test.se).toFixed(1)} on the test split, of the best pair`,
          ...(item.run.testKeyHash
            ? {
                command: {
                  command: 'whale.openEvaluationTranscripts',
                  title: 'Open the Test Transcripts',
                  arguments: [item.run.testKeyHash, `sealed test of ${item.run.id}`],
                },
              }
            : {}),
        });
      return [...info, ...item.run.cycles.map((cycle) => ({ kind: 'cycle' as const, run: item.run, cycle }))];
    }
    if (item.kind === 'cycle') return item.cycle.phases.map((phase) => ({ kind: 'phase', run: item.run, phase }));
    if (item.kind === 'phase') {
      const { run, phase } = item;
      const out: RunsItem[] = [];
      if (phase.acceptance) out.push({ kind: 'info', label: 'accepted', detail: describeAcceptance(phase.acceptance), icon: 'pass-filled' });
      for (const round of phase.roundsDetail ?? []) out.push({ kind: 'round', run, phase, round });
      return out;
    }
    if (item.kind === 'round') {
      const { run, phase, round } = item;
      const session = phase.sessions?.find((x) => x.round === round.round);
      return [
        ...(session ? [{ kind: 'session' as const, run, phase, session }] : []),
        ...round.candidates.map((candidate) => ({ kind: 'candidate' as const, run, phase, round, candidate })),
      ];
    }
    return [];
  }

  getTreeItem(item: RunsItem): vscode.TreeItem {
    switch (item.kind) {
      case 'run': {
        const t = new vscode.TreeItem(item.run.id, vscode.TreeItemCollapsibleState.Collapsed);
        t.id = `run:${item.run.id}`;
        t.description = describeRun(item.run);
        t.iconPath = new vscode.ThemeIcon(RUN_ICON[item.run.status]);
        t.contextValue = `whale.run.${item.run.status.replace(' ', '-')}`;
        t.tooltip = new vscode.MarkdownString(
          [`**${item.run.id}** — ${item.run.status}`, item.run.detail ?? '', item.run.state ? describeLedger(item.run.state.ledger) : '']
            .filter(Boolean)
            .join('\n\n'),
        );
        return t;
      }
      case 'cycle': {
        const t = new vscode.TreeItem(`cycle ${item.cycle.cycle}`, vscode.TreeItemCollapsibleState.Expanded);
        t.id = `cycle:${item.run.id}:${item.cycle.cycle}`;
        t.description = `${item.cycle.phases.length} phase(s)`;
        return t;
      }
      case 'phase': {
        const p = item.phase;
        const t = new vscode.TreeItem(
          `phase ${p.index}: ${p.kind}`,
          p.roundsDetail?.length || p.acceptance ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None,
        );
        t.id = `phase:${item.run.id}:${p.index}`;
        t.description = `${p.status === 'done' ? '' : p.status + ' · '}${describePhase(p)}`;
        t.iconPath = new vscode.ThemeIcon(PHASE_ICON[p.status]);
        t.tooltip = new vscode.MarkdownString(phaseTooltip(p, item.run.policies));
        t.contextValue = `whale.phase.${p.kind}`;
        const open = phaseCommand(item.run, p);
        if (open) t.command = open;
        return t;
      }
      case 'session': {
        // A round's proposer session: its log (every model and tool call, tokens, dollars) when the
        // proposer kept one, else the round's report.
        const x = item.session;
        const t = new vscode.TreeItem(`round ${x.round}: ${x.proposer} proposer`, vscode.TreeItemCollapsibleState.None);
        t.id = `session:${item.run.id}:${item.phase.index}:${x.round}`;
        t.description = `$${x.dollars.toFixed(2)} · ${x.candidates} candidate(s)${x.stopped ? ` · stopped: ${x.stopped}` : ''}`;
        t.iconPath = new vscode.ThemeIcon('hubot');
        t.tooltip = new vscode.MarkdownString(x.report || '(no report)');
        // A rendered document (candidates, conversation, tool calls folded, report), not the raw JSONL log.
        t.command = { command: 'whale.openProposerSession', title: 'Open Proposer Session', arguments: [item.run.id, item.phase.index, x.round] };
        return t;
      }
      case 'round': {
        const r = item.round;
        const scored = r.candidates.filter((c) => !c.invalid);
        const invalid = r.candidates.length - scored.length;
        const t = new vscode.TreeItem(r.round === 0 ? 'round 0: incumbent and submissions' : `round ${r.round}`, vscode.TreeItemCollapsibleState.Collapsed);
        t.id = `round:${item.run.id}:${item.phase.index}:${r.round}`;
        t.description = [
          `${scored.length} scored`,
          ...(invalid ? [`${invalid} invalid`] : []),
          ...(r.best ? [`best so far ${shortHash(r.best.treeHash)} ${pct(r.best.mean)}`] : []),
          ...(r.candidates.some((c) => c.accepted) ? ['✓ accepted one'] : []),
          // Round 0 (re-scoring the incumbent and submissions) has no round_done: a finished phase finished it.
          ...(r.done || item.phase.status === 'done' ? [] : ['in progress']),
        ].join(' · ');
        t.iconPath = new vscode.ThemeIcon('beaker');
        return t;
      }
      case 'candidate': {
        const c = item.candidate;
        const hypothesis = c.treeHash ? this.hypothesisOf(c.treeHash) : undefined;
        const name = c.treeHash ? shortHash(c.treeHash) : `(no folder: ${c.dir ?? '?'})`;
        const t = new vscode.TreeItem(hypothesis ? `${name} ${clipLine(hypothesis, LABEL_CHANGE_CHARS)}` : name, vscode.TreeItemCollapsibleState.None);
        t.id = `roundcand:${item.run.id}:${item.phase.index}:${item.round.round}:${c.treeHash || c.dir}`;
        t.description = describeRoundCandidate(c);
        t.iconPath = new vscode.ThemeIcon(c.invalid ? 'error' : c.accepted ? 'pass-filled' : 'circle-outline');
        const acc = c.accepted && item.phase.acceptance ? `\n\n✓ accepted by ${describeAcceptance(item.phase.acceptance)}` : '';
        t.tooltip = new vscode.MarkdownString(
          `**${name}**${c.treeHash ? ` \`${c.treeHash}\`` : ''}${c.origin ? ` (${c.origin})` : ''}\n\n${hypothesis ?? ''}\n\n${describeRoundCandidate(c)} on the harness split under ${policyLabel(item.phase.version, item.run.policies)}${acc}`,
        );
        if (c.treeHash) {
          t.resourceUri = toUri(c.treeHash);
          t.command = { command: 'whale.openCandidate', title: 'Open Candidate', arguments: [c.treeHash] };
        }
        return t;
      }
      case 'info': {
        const t = new vscode.TreeItem(item.label, vscode.TreeItemCollapsibleState.None);
        t.description = item.detail;
        t.tooltip = item.detail;
        if (item.icon) t.iconPath = new vscode.ThemeIcon(item.icon);
        if (item.command) t.command = item.command;
        return t;
      }
    }
  }
}

export function registerRunsView(context: vscode.ExtensionContext, deps: { monitor: StoreMonitor; health?: BackendHealthMonitor }): RunsTreeProvider {
  const provider = new RunsTreeProvider(deps.monitor, deps.health);
  context.subscriptions.push(vscode.window.createTreeView('whale.runs', { treeDataProvider: provider, showCollapseAll: true }));
  return provider;
}
