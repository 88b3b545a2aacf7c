// The configured backend's health in the extension: a HealthPoller (model/backendHealth.ts) over
// the URLs in whale.config.json's backend section, re-read when the config changes. Cheap checks
// (one GET per server) every `whale.backend.healthIntervalSeconds`, backing off while unreachable.
import * as vscode from 'vscode';
import { existsSync, readFileSync } from 'node:fs';
import { parse } from 'jsonc-parser';
import { HealthPoller, describeHealth, healthTargets, type HealthState } from './model/backendHealth.js';
import { currentProject } from './workspaceProject.js';

export interface BackendHealthView {
  kind: string;
  /** Empty for a backend with nothing to probe (embedded). */
  targets: string[];
  state: HealthState;
  mark: string;
  text: string;
}

export class BackendHealthMonitor implements vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<BackendHealthView>();
  readonly onDidChange = this.emitter.event;
  private section: unknown;
  private readonly poller: HealthPoller;

  constructor() {
    this.section = readBackendSection();
    this.poller = new HealthPoller(
      // An untrusted folder's config does not make this window send requests anywhere.
      () => (vscode.workspace.isTrusted ? healthTargets(this.section) : []),
      () => this.emitter.fire(this.view()),
      () => {
        const secs = vscode.workspace.getConfiguration('whale').get<number>('backend.healthIntervalSeconds', 60);
        const okMs = Math.max(1, secs) * 1000;
        return { okMs, retryMs: Math.max(1000, okMs / 6), maxRetryMs: Math.max(okMs, 300_000) };
      },
    );
    this.poller.start();
    this.trustListener = vscode.workspace.onDidGrantWorkspaceTrust(() => this.poller.reset());
  }

  private readonly trustListener: vscode.Disposable;

  view(): BackendHealthView {
    const kind = kindOf(this.section);
    const targets = healthTargets(this.section).map((t) => t.url);
    const state = this.poller.current();
    if (targets.length && !vscode.workspace.isTrusted) return { kind, targets, state, mark: '', text: `${kind}: not checked (untrusted workspace)` };
    return { kind, targets, state, ...(targets.length ? describeHealth(kind, state) : { mark: '', text: `${kind}: in this process (nothing to probe)` }) };
  }

  /** The config may name other URLs now. */
  configChanged(): void {
    const next = readBackendSection();
    if (JSON.stringify(next) === JSON.stringify(this.section)) return;
    this.section = next;
    this.poller.reset();
    this.emitter.fire(this.view());
  }

  async checkNow(): Promise<BackendHealthView> {
    await this.poller.checkNow();
    return this.view();
  }

  dispose(): void {
    this.trustListener.dispose();
    this.poller.stop();
    this.emitter.dispose();
  }
}

function readBackendSection(): unknown {
  const p = currentProject();
  if (!p?.hasConfig || !existsSync(p.configFile)) return undefined;
  try {
    return (parse(readFileSync(p.configFile, 'utf8')) as { backend?: unknown } | undefined)?.backend ?? { kind: 'embedded' };
  } catch {
    return undefined;
  }
}

function kindOf(section: unknown): string {
  const k = (section as { kind?: unknown } | undefined)?.kind;
  return typeof k === 'string' ? k : 'embedded';
}
