// The Failing Trajectories tree: runs (newest first, the current one open) → each run's candidates
// under its latest policy version → failing tasks → failing rollouts, each level computed when
// expanded (archive/failingTrajectories.ts is the model; this is only the provider). A click on a
// rollout opens its transcript.
import * as vscode from 'vscode';
import { validationLabel } from '../../core/phaseLabels.js';
import {
  failingCandidates,
  failingRollouts,
  failingTasks,
  type FailingCandidate,
  type FailingRollout,
  type FailingTask,
} from '../../archive/failingTrajectories.js';
import { ResultStore } from '../../archive/resultStore.js';
import { RunStore } from '../../archive/runStore.js';
import { Journal } from '../../archive/journal.js';
import type { TrajectoryRef } from './ref.js';
import { policyHover, policyLabel, policyNames, shortHash } from '../model/identity.js';

type Node =
  | { kind: 'run'; store: string; run: string; current: boolean; candidates: FailingCandidate[]; policies: ReadonlyMap<string, string> }
  | { kind: 'candidate'; store: string; c: FailingCandidate; policies: ReadonlyMap<string, string> }
  | { kind: 'task'; store: string; c: FailingCandidate; t: FailingTask }
  | { kind: 'rollout'; store: string; c: FailingCandidate; r: FailingRollout };

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

export class FailingTrajectoriesProvider implements vscode.TreeDataProvider<Node> {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(private readonly storeDir: () => string | undefined) {}

  /** What the tree showed the last time VS Code asked: its runs, and the current run's candidates (diagnostics and tests). */
  lastRoots: { runs: number; run?: string; candidates: number } = { runs: 0, candidates: 0 };

  refresh(): void {
    this.changed.fire(undefined);
  }

  /** VS Code's entry point: records what the top level showed. */
  async getChildren(node?: Node): Promise<Node[]> {
    const out = await this.children(node);
    if (!node) this.lastRoots = { runs: out.length, candidates: 0 };
    if (node?.kind === 'run' && node.current) this.lastRoots = { ...this.lastRoots, run: node.run, candidates: out.length };
    return out;
  }

  /** The children of a node (top level: every run, newest first), without recording anything. */
  async children(node?: Node): Promise<Node[]> {
    const store = this.storeDir();
    if (!store) return [];
    if (!node) {
      const runs = new RunStore(store);
      const current = runs.current();
      return runs
        .list()
        .reverse()
        .map(({ id }) => {
          let entries: ReturnType<typeof Journal.read> = [];
          try {
            entries = Journal.read(runs.journalFile(id));
          } catch {
            // a run folder without a readable journal: listed, with nothing under it
          }
          return { kind: 'run' as const, store, run: id, current: id === current, candidates: failingCandidates(entries), policies: policyNames(entries) };
        });
    }
    if (node.kind === 'run') return node.candidates.map((c) => ({ kind: 'candidate', store, c, policies: node.policies }));
    if (node.kind === 'candidate') {
      return failingTasks(new ResultStore(store).taskResults(node.c.keyHash) ?? []).map((t) => ({ kind: 'task', store, c: node.c, t }));
    }
    if (node.kind === 'task') {
      const rollouts = await failingRollouts(new ResultStore(store).trajectoriesFile(node.c.keyHash), node.t.taskId);
      return rollouts.map((r) => ({ kind: 'rollout', store, c: node.c, r }));
    }
    return [];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    switch (node.kind) {
      case 'run': {
        const n = node.candidates.length;
        const state =
          n === 0 ? vscode.TreeItemCollapsibleState.None : node.current ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed;
        const item = new vscode.TreeItem(node.run, state);
        item.id = `failing-run:${node.run}`;
        item.description = `${node.current ? 'current run · ' : ''}${n ? `${n} evaluated candidate(s) under its latest policy` : 'no evaluations yet'}`;
        item.iconPath = new vscode.ThemeIcon(node.current ? 'debug-start' : 'history');
        item.contextValue = 'whale.failing.run';
        return item;
      }
      case 'candidate': {
        const item = new vscode.TreeItem(shortHash(node.c.treeHash), vscode.TreeItemCollapsibleState.Collapsed);
        const where =
          node.c.source === 'search'
            ? `harness split, phase ${node.c.phase} round ${node.c.round ?? 0}`
            : node.c.phase < 0
              ? `val split, ${validationLabel(node.c.phase)}`
              : `val split after phase ${node.c.phase}`;
        item.description = `${pct(node.c.mean)} · ${where} · ${policyLabel(node.c.policyVersion, node.policies)}`;
        item.tooltip = new vscode.MarkdownString(
          `candidate \`${node.c.treeHash}\`\n\npolicy ${policyHover(node.c.policyVersion, node.policies)}\n\nevaluation \`${node.c.keyHash}\``,
        );
        item.iconPath = new vscode.ThemeIcon(node.c.source === 'search' ? 'beaker' : 'checklist');
        item.contextValue = 'whale.failing.candidate';
        return item;
      }
      case 'task': {
        const item = new vscode.TreeItem(node.t.taskId, vscode.TreeItemCollapsibleState.Collapsed);
        const terms = Object.entries(node.t.terminations)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ');
        item.description = `${node.t.passes}/${node.t.samples} passed${terms ? ` · ${terms}` : ''}`;
        item.iconPath = new vscode.ThemeIcon('error');
        item.contextValue = 'whale.failing.task';
        return item;
      }
      case 'rollout': {
        const item = new vscode.TreeItem(`sample ${node.r.sampleIndex}`, vscode.TreeItemCollapsibleState.None);
        item.description = node.r.termination;
        item.tooltip = node.r.id;
        item.iconPath = new vscode.ThemeIcon('debug-stackframe');
        const ref: TrajectoryRef = {
          store: node.store,
          keyHash: node.c.keyHash,
          index: node.r.line,
          id: node.r.id,
          taskId: node.r.taskId,
          sample: node.r.sampleIndex,
        };
        item.command = { command: 'whale.openTrajectory', title: 'Open Transcript', arguments: [ref] };
        item.contextValue = 'whale.failing.rollout';
        return item;
      }
    }
  }
}
