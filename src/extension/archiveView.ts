import * as vscode from 'vscode';
import { archiveModel, candidateTooltip, describeCandidate, scoresByVersion, type ArchiveModel, type CandidateNode } from './model/archiveModel.js';
import { submittedCandidates } from '../engine/submissions.js';
import { archiveOf, toUri } from './archiveFs.js';
import type { StoreMonitor } from './storeMonitor.js';

export type ArchiveItem = { kind: 'candidate'; node: CandidateNode } | { kind: 'info'; label: string; detail: string; icon?: string };

const ORIGIN_ICON: Record<string, string> = { seed: 'symbol-namespace', proposer: 'lightbulb', human: 'person' };
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

/** The Harness Archive view: a provider over the vscode-free archive model (model/archiveModel.ts). */
export class ArchiveTreeProvider implements vscode.TreeDataProvider<ArchiveItem> {
  private readonly emitter = new vscode.EventEmitter<ArchiveItem | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private model: ArchiveModel = { roots: [], nodes: new Map() };
  private loading: Promise<void> | undefined;
  private again = false;

  constructor(
    private readonly monitor: StoreMonitor,
    private readonly log: vscode.LogOutputChannel,
  ) {
    // reload() reports its own failures to the log and never rejects.
    monitor.onDidChange(() => void this.reload());
    void this.reload();
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
          this.model = { roots: [], nodes: new Map() };
          return;
        }
        const archive = await archiveOf(project.storeDir);
        const [candidates, submitted] = await Promise.all([archive.list(), submittedCandidates(archive)]);
        this.model = archiveModel(candidates, new Map(runs.map((r) => [r.id, this.monitor.entries(r.id)])), { submitted: new Set(submitted) });
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
    if (!item) return this.model.roots.map(node);
    if (item.kind === 'info') return [];
    const n = item.node;
    const info: ArchiveItem[] = scoresByVersion(n).map((s) => ({ kind: 'info', label: s.version, detail: `${pct(s.mean)} ± ${(100 * s.se).toFixed(1)} on the harness split`, icon: 'graph' }));
    for (const a of n.accepted) info.push({ kind: 'info', label: 'accepted', detail: `run ${a.run}, phase ${a.phase}`, icon: 'check' });
    for (const i of n.invalid) info.push({ kind: 'info', label: 'invalid', detail: i.reasons.join('; '), icon: 'error' });
    return [...info, ...n.children.map(node)];
  }

  getTreeItem(item: ArchiveItem): vscode.TreeItem {
    if (item.kind === 'info') {
      const t = new vscode.TreeItem(item.label, vscode.TreeItemCollapsibleState.None);
      t.description = item.detail;
      t.tooltip = item.detail;
      if (item.icon) t.iconPath = new vscode.ThemeIcon(item.icon);
      return t;
    }
    const n = item.node;
    const hasChildren = n.children.length > 0 || n.scores.length > 0 || n.invalid.length > 0 || n.accepted.length > 0;
    const t = new vscode.TreeItem(`${n.treeHash.slice(0, 8)} ${n.message}`, hasChildren ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
    t.id = `candidate:${n.treeHash}`;
    t.description = describeCandidate(n);
    t.tooltip = new vscode.MarkdownString(candidateTooltip(n));
    t.iconPath = new vscode.ThemeIcon(n.invalid.length ? 'error' : n.accepted.length ? 'pass-filled' : (ORIGIN_ICON[n.origin] ?? 'circle-outline'));
    t.contextValue = n.parents.length ? 'whale.candidate.derived' : 'whale.candidate.root';
    t.resourceUri = toUri(n.treeHash);
    t.command = { command: 'whale.openCandidate', title: 'Open Candidate', arguments: [item] };
    return t;
  }
}

export function registerArchiveView(context: vscode.ExtensionContext, deps: { monitor: StoreMonitor; log: vscode.LogOutputChannel }): ArchiveTreeProvider {
  const provider = new ArchiveTreeProvider(deps.monitor, deps.log);
  context.subscriptions.push(vscode.window.createTreeView('whale.archive', { treeDataProvider: provider, showCollapseAll: true }));
  return provider;
}
