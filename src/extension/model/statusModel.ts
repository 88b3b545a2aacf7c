// vscode-free: the status bar's state machine, from the project and the runs model.
import type { RunNode } from './runsModel.js';

export type StatusState =
  | { kind: 'no-project' }
  | { kind: 'idle'; run?: string; runStatus?: string }
  | { kind: 'running'; run: string; phase?: number; phaseKind?: string; cycle?: number }
  | { kind: 'stopped'; run: string; reason: string }
  | { kind: 'error'; run?: string; message: string };

/** Which state the status bar is in. An engine error this window saw wins until the next start. */
export function statusState(hasProject: boolean, runs: readonly RunNode[], engineError?: string): StatusState {
  if (!hasProject && runs.length === 0) return { kind: 'no-project' };
  const running = runs.find((r) => r.status === 'running');
  if (running)
    return {
      kind: 'running',
      run: running.id,
      ...(running.current ? { phase: running.current.index, phaseKind: running.current.kind, cycle: running.current.cycle } : {}),
    };
  if (engineError) return { kind: 'error', message: engineError };
  const latest = runs[0];
  if (latest?.status === 'interrupted') return { kind: 'error', run: latest.id, message: latest.detail ?? 'the engine ended mid-phase' };
  if (latest?.status === 'stopped') return { kind: 'stopped', run: latest.id, reason: latest.detail ?? 'stop requested' };
  return { kind: 'idle', ...(latest ? { run: latest.id, runStatus: latest.status } : {}) };
}

export interface StatusView {
  text: string;
  /** Markdown with command links (trusted for our commands only). */
  tooltip: string;
  error: boolean;
}

const link = (title: string, command: string) => `[${title}](command:${command})`;

/**
 * The state's view, with the latest run's backend (and a health check link) in the tooltip. With
 * the configured remote backend's health: its mark in the text (ok / unreachable) and since when
 * in the tooltip.
 */
export function statusView(s: StatusState, backend?: string, health?: { mark: string; text: string }): StatusView {
  const v = stateView(s);
  if (s.kind === 'no-project') return v;
  const links = `${link('Check Backend Health', 'whale.backend.checkHealth')} · ${link('Connect Backend', 'whale.backend.connect')}`;
  const healthLine = health?.mark ? `\n\nConfigured backend ${health.text}` : '';
  return {
    ...v,
    text: health?.mark ? `${v.text} ${health.mark}` : v.text,
    tooltip: `${v.tooltip}\n\nBackend: ${backend ?? 'as configured'} · ${links}${healthLine}`,
  };
}

function stateView(s: StatusState): StatusView {
  switch (s.kind) {
    case 'no-project':
      return { text: '$(circle-outline) WHALE', tooltip: `No WHALE project in this folder.\n\n${link('New Project', 'whale.newProject')}`, error: false };
    case 'idle':
      // Resume is offered only for a run that can go on (a finished one has nothing to resume).
      return {
        text: '$(circle-large-outline) WHALE: idle',
        tooltip: `${s.run ? `Latest run: \`${s.run}\`${s.runStatus ? ` (${s.runStatus})` : ''}\n\n` : ''}${link('Next Phase', 'whale.nextPhase')} · ${link('Run', 'whale.run')}${s.run && s.runStatus === 'paused' ? ' · ' + link('Resume Run', 'whale.resumeRun') : ''} · ${link('Show Logs', 'whale.showLogs')}`,
        error: false,
      };
    case 'running':
      return {
        text: `$(sync~spin) WHALE: ${s.phase !== undefined ? `${s.phaseKind} phase ${s.phase} of cycle ${s.cycle}` : 'starting'}`,
        tooltip: `Run \`${s.run}\` is running.\n\n${link('Stop', 'whale.stop')} · ${link('Show Logs', 'whale.showLogs')}`,
        error: false,
      };
    case 'stopped':
      return {
        text: '$(debug-stop) WHALE: stopped',
        tooltip: `Run \`${s.run}\` stopped: ${s.reason}.\n\n${link('Resume Run', 'whale.resumeRun')} · ${link('Next Phase', 'whale.nextPhase')}`,
        error: false,
      };
    case 'error':
      return {
        text: '$(error) WHALE: engine error',
        tooltip: `${s.run ? `Run \`${s.run}\`: ` : ''}${s.message}\n\n${link('Resume Run', 'whale.resumeRun')} · ${link('Show Logs', 'whale.showLogs')}`,
        error: true,
      };
  }
}
