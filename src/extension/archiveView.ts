import * as vscode from 'vscode';
import {
  archiveModel,
  candidateLabel,
  candidateTooltip,
  describeCandidate,
  scoresByVersion,
  sortCandidates,
  type ArchiveModel,
  type CandidateNode,
  type CandidateOrder,
} from './model/archiveModel.js';
import { policyHover, policyLabel } from './model/identity.js';
import { submittedCandidates } from '../archive/submissions.js';
import { archiveOf, toUri } from './archiveFs.js';
import { storedEvaluations } from './model/evaluations.js';
import type { StoreMonitor } from './storeMonitor.js';

export type ArchiveItem = { kind: 'candidate'; node: CandidateNode } | { kind: 'info'; label: string; detail: string; hover?: string; icon?: string };

const ORDER_KEY = 'whale.archive.sortBy';

const ORIGIN_ICON: Record<string, string> = { seed: 'symbol-namespace', proposer: 'lightbulb', human: 'person' };
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

/** The Harness Archive view: a provider over the vscode-free archive model (model/archiveModel.ts). */
export class ArchiveTreeProvider implements vscode.TreeDataProvider<ArchiveItem> {
  private readonly emitter = new vscode.EventEmitter<ArchiveItem | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private model: ArchiveModel = { roots: [], nodes: new Map(), policies: new Map() };
  private order: CandidateOrder;
  private loading: Promise<void> | undefined;
  private again = false;

  constructor(
    private readonly monitor: StoreMonitor,
    private readonly log: vscode.LogOutputChannel,
    private readonly memento?: vscode.Memento,
  ) {
    this.order = memento?.get<CandidateOrder>(ORDER_KEY) ?? 'score';
    // reload() reports its own failures to the log and never rejects.
    monitor.onDidChange(() => void this.reload());
    void this.reload();
  }

  sortOrder(): CandidateOrder {
    return this.order;
  }

  /** Siblings by best latest score or in lineage order (remembered per workspace). */
  async toggleSort(): Promise<CandidateOrder> {
    this.order = this.order === 'score' ? 'lineage' : 'score';
    await this.memento?.update(ORDER_KEY, this.order);
    this.emitter.fire(undefined);
    return this.order;
  }

  current(): ArchiveModel {
    return this.model;
  }

  /** Re-reads the archive (one git call for every candidate) and folds the runs' journals over it. */
  reload(): Promise<void> {
    if (this.loading) {
      this.again = true;
      return this.loading;
    }
    this.loading = (async () => {
      try {
        const { project, runs } = this.monitor.current();
        if (!project) {
          this.model = { roots: [], nodes: new Map(), policies: new Map() };
          return;
        }
        const archive = await archiveOf(project.storeDir);
        const [candidates, submitted] = await Promise.all([archive.list(), submittedCandidates(archive)]);
        this.model = archiveModel(candidates, new Map(runs.map((r) => [r.id, this.monitor.entries(r.id)])), {
          submitted: new Set(submitted),
          evaluations: storedEvaluations(project.storeDir),
        });
        // The getting-started walkthrough checks its steps from the project's state, not only from clicks.
        const nodes = [...this.model.nodes.values()];
        void vscode.commands.executeCommand(
          'setContext',
          'whale.archive.hasDerived',
          nodes.some((n) => n.parents.length > 0),
        );
        void vscode.commands.executeCommand(
          'setContext',
          'whale.archive.hasHandMade',
          nodes.some((n) => n.origin === 'human'),
        );
      } catch (e) {
        this.log.warn(`archive view: ${(e as Error).message}`);
      } finally {
        this.loading = undefined;
        this.emitter.fire(undefined);
        if (this.again) {
          this.again = false;
          void this.reload();
        }
      }
    })();
    return this.loading;
  }

  getChildren(item?: ArchiveItem): ArchiveItem[] {
    const node = (h: string): ArchiveItem => ({ kind: 'candidate', node: this.model.nodes.get(h)! });
    const sorted = (hs: readonly string[]) => sortCandidates(hs, this.model, this.order).map(node);
    if (!item) return sorted(this.model.roots);
    if (item.kind === 'info') return [];
    const n = item.node;
    const info: ArchiveItem[] = scoresByVersion(n).map((s) => ({
      kind: 'info',
      label: policyLabel(s.version, this.model.policies),
      detail: `${pct(s.mean)} ± ${(100 * s.se).toFixed(1)} on the harness split`,
      hover: `${policyHover(s.version, this.model.policies)}: ${pct(s.mean)} ± ${(100 * s.se).toFixed(1)} on the harness split`,
      icon: 'graph',
    }));
    for (const e of n.evaluations)
      info.push({
        kind: 'info',
        label: `mean@${e.k} on ${e.split}`,
        detail: `${pct(e.mean)} ± ${(100 * e.se).toFixed(1)} under ${policyLabel(e.version, this.model.policies)}`,
        hover: `mean@${e.k} on the ${e.split} split (${e.tasks} tasks) under ${policyHover(e.version, this.model.policies)}: ${pct(e.mean)} ± ${(100 * e.se).toFixed(1)}, ${e.completedAt}`,
        icon: 'checklist',
      });
    for (const a of n.accepted) info.push({ kind: 'info', label: 'accepted', detail: `run ${a.run}, phase ${a.phase}`, icon: 'check' });
    for (const i of n.invalid) info.push({ kind: 'info', label: 'invalid', detail: i.reasons.join('; '), icon: 'error' });
    return [...info, ...sorted(n.children)];
  }

  getTreeItem(item: ArchiveItem): vscode.TreeItem {
    if (item.kind === 'info') {
      const t = new vscode.TreeItem(item.label, vscode.TreeItemCollapsibleState.None);
      t.description = item.detail;
      t.tooltip = item.hover ? new vscode.MarkdownString(item.hover) : item.detail;
      if (item.icon) t.iconPath = new vscode.ThemeIcon(item.icon);
      return t;
    }
    const n = item.node;
    const hasChildren = n.children.length > 0 || n.scores.length > 0 || n.evaluations.length > 0 || n.invalid.length > 0 || n.accepted.length > 0;
    const t = new vscode.TreeItem(candidateLabel(n), hasChildren ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
    t.id = `candidate:${n.treeHash}`;
    t.description = describeCandidate(n, this.model.policies);
    t.tooltip = new vscode.MarkdownString(candidateTooltip(n, this.model.policies));
    t.iconPath = new vscode.ThemeIcon(n.invalid.length ? 'error' : n.accepted.length ? 'pass-filled' : (ORIGIN_ICON[n.origin] ?? 'circle-outline'));
    t.contextValue = n.parents.length ? 'whale.candidate.derived' : 'whale.candidate.root';
    t.resourceUri = toUri(n.treeHash);
    t.command = { command: 'whale.openCandidate', title: 'Open Candidate', arguments: [item] };
    return t;
  }
}

export function registerArchiveView(context: vscode.ExtensionContext, deps: { monitor: StoreMonitor; log: vscode.LogOutputChannel }): ArchiveTreeProvider {
  const provider = new ArchiveTreeProvider(deps.monitor, deps.log, context.workspaceState);
  const view = vscode.window.createTreeView('whale.archive', { treeDataProvider: provider, showCollapseAll: true });
  const say = (o: CandidateOrder) => (view.description = o === 'score' ? 'by score' : 'by lineage');
  say(provider.sortOrder());
  context.subscriptions.push(
    view,
    vscode.commands.registerCommand('whale.archive.toggleSort', async () => say(await provider.toggleSort())),
  );
  return provider;
}
