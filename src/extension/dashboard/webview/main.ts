// The dashboard's webview side: waits for snapshots (core/dashboardContract.ts), draws the
// best-so-far curves with uPlot and the ledger as a table, and reports what it drew. It keeps no
// history: each snapshot replaces the last, so memory stays flat however long a run goes.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import './dashboard.css';
import { ToWebview, type DashboardSnapshot, type FromWebview } from '../../../core/dashboardContract.js';

declare function acquireVsCodeApi(): { postMessage(msg: unknown): void; setState(s: unknown): void; getState(): unknown };
const vscode = acquireVsCodeApi();
const send = (m: FromWebview) => vscode.postMessage(m);

const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];
let plot: uPlot | undefined;

const $ = (id: string) => document.getElementById(id)!;

/** Best-so-far is a step function: its value at x is the last point at or before x. */
function stepAt(curve: { x: number; y: number }[], x: number): number | null {
  let v: number | null = null;
  for (const p of curve) {
    if (p.x > x) break;
    v = p.y;
  }
  return v;
}

interface Series {
  label: string;
  curve: { x: number; y: number }[];
  dashed: boolean;
}

function seriesOf(s: DashboardSnapshot): Series[] {
  const runs = s.runs
    .filter((r) => r.curve.length > 0)
    .map((r) => ({ label: `${r.method}${r.seed !== null ? ` seed ${r.seed}` : ''} · ${r.id}`, curve: r.curve, dashed: false }));
  const means = s.methods
    .filter((m) => m.runs.length > 1 && m.curve.length > 0)
    .map((m) => ({ label: `${m.method} mean of ${m.runs.length} (${m.domain})`, curve: m.curve, dashed: true }));
  return [...runs, ...means];
}

function drawChart(s: DashboardSnapshot): { series: number; points: number } {
  const el = $('chart');
  plot?.destroy();
  plot = undefined;
  el.textContent = '';
  const series = seriesOf(s);
  if (series.length === 0) {
    el.textContent = 'No validation results yet: the curves appear after a run evaluates its first harness.';
    return { series: 0, points: 0 };
  }
  const xs = [...new Set(series.flatMap((x) => x.curve.map((p) => p.x)))].sort((a, b) => a - b);
  const data: uPlot.AlignedData = [xs, ...series.map((x) => xs.map((v) => stepAt(x.curve, v)))];
  const points = data.slice(1).reduce((n, col) => n + (col as (number | null)[]).filter((v) => v !== null).length, 0);
  const opts: uPlot.Options = {
    width: Math.max(320, el.clientWidth || 800),
    height: 360,
    scales: { x: { time: false }, y: { range: [0, 1] } },
    axes: [
      { label: 'cumulative rollouts (training + search)', stroke: 'currentColor', grid: { stroke: 'rgba(128,128,128,0.2)' } },
      {
        label: 'best-so-far val mean@k',
        stroke: 'currentColor',
        values: (_u, ticks) => ticks.map((t) => `${Math.round(100 * t)}%`),
        grid: { stroke: 'rgba(128,128,128,0.2)' },
      },
    ],
    series: [
      { label: 'rollouts' },
      ...series.map((x, i) => ({
        label: x.label,
        stroke: PALETTE[i % PALETTE.length],
        width: x.dashed ? 2.5 : 1.5,
        dash: x.dashed ? [6, 4] : undefined,
        spanGaps: false,
        paths: uPlot.paths.stepped!({ align: 1 }),
        value: (_u: uPlot, v: number | null) => (v === null ? '—' : `${(100 * v).toFixed(1)}%`),
      })),
    ],
  };
  plot = new uPlot(opts, data, el);
  return { series: series.length, points };
}

function cell(row: HTMLTableRowElement, text: string, head = false): void {
  const c = document.createElement(head ? 'th' : 'td');
  c.textContent = text;
  row.appendChild(c);
}

function drawLedger(s: DashboardSnapshot): void {
  const table = $('ledger') as HTMLTableElement;
  table.textContent = '';
  const head = table.createTHead().insertRow();
  for (const h of [
    'run',
    'method',
    'domain',
    'seed',
    'status',
    'best val',
    'training rollouts',
    'search rollouts',
    'evaluation rollouts',
    'proposer $',
    'wall time',
  ])
    cell(head, h, true);
  const body = table.createTBody();
  const int = (x: number) => Math.round(x).toLocaleString('en-US');
  for (const r of s.runs) {
    const row = body.insertRow();
    const l = r.ledger;
    for (const v of [
      r.id,
      r.method,
      r.domain,
      r.seed === null ? '—' : String(r.seed),
      r.status,
      r.best === null ? '—' : `${(100 * r.best).toFixed(1)}%`,
      int(l.trainingRollouts),
      int(l.searchRollouts),
      int(l.evalRollouts),
      `$${l.proposerDollars.toFixed(2)}`,
      `${(l.wallMs / 60_000).toFixed(1)} min`,
    ])
      cell(row, v);
    row.title = r.reason;
  }
}

function render(s: DashboardSnapshot): void {
  $('store').textContent = s.store;
  const notes = [s.error, s.runs.length === 0 && !s.error ? 'No runs in this store yet.' : undefined, ...s.skipped.map((k) => `${k.id}: ${k.why}`)].filter(
    Boolean,
  );
  $('message').textContent = notes.join(' · ');
  const drawn = drawChart(s);
  drawLedger(s);
  vscode.setState({ store: s.store });
  send({ type: 'drawn', series: drawn.series, points: drawn.points, runs: s.runs.length });
}

window.addEventListener('message', (e: MessageEvent) => {
  const parsed = ToWebview.safeParse(e.data);
  if (!parsed.success) {
    send({ type: 'error', message: `a message not in the contract: ${parsed.error.issues[0]?.message}` });
    return;
  }
  try {
    render(parsed.data.snapshot);
  } catch (err) {
    send({ type: 'error', message: (err as Error).stack ?? String(err) });
  }
});
$('refresh').addEventListener('click', () => send({ type: 'refresh' }));
send({ type: 'ready' });
