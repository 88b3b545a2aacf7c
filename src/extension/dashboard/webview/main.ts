// The dashboard's webview side: waits for snapshots (core/dashboardContract.ts) and draws them with
// uPlot — the best-so-far curves of the runs and method means picked in the list (error bands,
// the focused run's W/H phases as bands, its sealed-test point), the focused run's training signals
// per weight step, its candidates per round (the accepted one marked) and its diagnostics per phase,
// and the whole ledger — then reports what it drew, read back from its own DOM. It keeps no history:
// each snapshot replaces the last, so memory stays flat however long a run goes.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import './dashboard.css';
import { DashboardState, ToWebview, type DashboardRun, type DashboardSnapshot, type DrawnView, type FromWebview } from '../../../core/dashboardContract.js';

declare function acquireVsCodeApi(): { postMessage(msg: unknown): void; setState(s: unknown): void; getState(): unknown };
const vscode = acquireVsCodeApi();
const send = (m: FromWebview) => vscode.postMessage(m);

const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];
const GRID = { stroke: 'rgba(128,128,128,0.2)' };
const PHASE_FILL: Record<string, string> = { weight: 'rgba(89,161,79,0.10)', harness: 'rgba(242,142,43,0.12)' };
const PHASE_TEXT: Record<string, string> = { weight: 'rgba(89,161,79,0.9)', harness: 'rgba(242,142,43,0.95)' };

const $ = (id: string) => document.getElementById(id)!;
const pct = (v: number | null | undefined, d = 1) => (v === null || v === undefined || !Number.isFinite(v) ? '—' : `${(100 * v).toFixed(d)}%`);
const int = (x: number) => Math.round(x).toLocaleString('en-US');
const methodKey = (m: { domain: string; method: string }) => `${m.domain} · ${m.method}`;
const runLabel = (r: DashboardRun) => `${r.method}${r.seed !== null ? ` seed ${r.seed}` : ''} · ${r.id}`;

/** A run's name in a chart legend: method and seed, with the domain, then the id, only where needed to tell runs apart. */
function shortNames(runs: readonly DashboardRun[]): Map<string, string> {
  const base = (r: DashboardRun) => `${r.method}${r.seed !== null ? ` seed ${r.seed}` : ''}`;
  const count = (f: (r: DashboardRun) => string) => {
    const n = new Map<string, number>();
    for (const r of runs) n.set(f(r), (n.get(f(r)) ?? 0) + 1);
    return n;
  };
  const byBase = count(base);
  const withDomain = (r: DashboardRun) => (byBase.get(base(r))! > 1 ? `${r.domain} · ${base(r)}` : base(r));
  const byDomain = count(withDomain);
  return new Map(runs.map((r) => [r.id, byDomain.get(withDomain(r))! > 1 ? `${withDomain(r)} · ${r.id}` : withDomain(r)]));
}

let snapshot: DashboardSnapshot | undefined;
const saved = DashboardState.safeParse(vscode.getState() ?? {});
let selection: { runs: string[] | undefined; methods: string[] | undefined; focus: string | undefined } = {
  runs: saved.success ? saved.data.runs : undefined,
  methods: saved.success ? saved.data.methods : undefined,
  focus: saved.success ? saved.data.focus : undefined,
};
const plots = new Map<string, { plot: uPlot; height: number }>();

/** Best-so-far is a step function: its value at x is the last point at or before x. */
function stepAt<T extends { x: number }>(curve: readonly T[], x: number, f: (p: T) => number): number | null {
  let v: number | null = null;
  for (const p of curve) {
    if (p.x > x) break;
    v = f(p);
  }
  return v;
}

function chartWidth(el: HTMLElement): number {
  return Math.max(260, Math.floor(el.clientWidth || el.parentElement?.clientWidth || 600));
}

function mount(id: string, opts: Omit<uPlot.Options, 'width'>, data: uPlot.AlignedData, hidden: number[] = []): void {
  const el = $(id);
  plots.get(id)?.plot.destroy();
  plots.delete(id);
  el.textContent = '';
  const plot = new uPlot({ ...opts, width: chartWidth(el) }, data, el);
  // Band edges are series of their own; their legend rows would only repeat the line's.
  const rows = plot.root.querySelectorAll<HTMLElement>('.u-legend .u-series');
  for (const i of hidden) rows[i]?.classList.add('whale-hidden');
  plots.set(id, { plot, height: opts.height });
}

function empty(id: string, text: string): void {
  plots.get(id)?.plot.destroy();
  plots.delete(id);
  $(id).textContent = text;
}

new ResizeObserver(() => {
  for (const [id, p] of plots) p.plot.setSize({ width: chartWidth($(id)), height: p.height });
}).observe(document.body);

// ---- the picker ---------------------------------------------------------------------------------

function defaults(s: DashboardSnapshot): void {
  const ids = s.runs.map((r) => r.id);
  const keys = s.methods.map(methodKey);
  if (!selection.focus || !ids.includes(selection.focus)) selection.focus = selection.runs?.find((id) => ids.includes(id)) ?? [...ids].sort().pop();
  const domain = s.runs.find((r) => r.id === selection.focus)?.domain;
  // A few runs are overlaid one by one; a grid of seeds starts as the method means of the detail run's domain.
  const multi = s.methods.filter((m) => m.runs.length > 1 && m.domain === domain).map(methodKey);
  if (selection.runs === undefined) selection.runs = ids.length <= 4 || multi.length === 0 ? ids : [];
  if (selection.methods === undefined) selection.methods = multi;
  selection.runs = selection.runs.filter((id) => ids.includes(id));
  selection.methods = selection.methods.filter((k) => keys.includes(k));
}

function checkbox(list: HTMLElement, value: string, label: string, checked: boolean, color: string | undefined, onChange: (on: boolean) => void): void {
  const l = document.createElement('label');
  l.className = 'pick';
  const c = document.createElement('input');
  c.type = 'checkbox';
  c.value = value;
  c.checked = checked;
  c.addEventListener('change', () => onChange(c.checked));
  const sw = document.createElement('span');
  sw.className = 'swatch';
  if (color && checked) sw.style.background = color;
  else sw.classList.add('off');
  l.append(c, sw, document.createTextNode(label));
  list.appendChild(l);
}

function drawPicker(s: DashboardSnapshot): void {
  const runs = $('pick-runs');
  const methods = $('pick-methods');
  runs.textContent = '';
  methods.textContent = '';
  const colors = seriesColors(s);
  for (const r of s.runs)
    checkbox(runs, r.id, runLabel(r), selection.runs!.includes(r.id), colors.get(`run:${r.id}`), (on) => {
      selection.runs = on ? [...selection.runs!, r.id] : selection.runs!.filter((x) => x !== r.id);
      if (on) selection.focus = r.id;
      redraw();
    });
  for (const m of s.methods) {
    const key = methodKey(m);
    checkbox(
      methods,
      key,
      `${key} (${m.runs.length} run${m.runs.length === 1 ? '' : 's'})`,
      selection.methods!.includes(key),
      colors.get(`method:${key}`),
      (on) => {
        selection.methods = on ? [...selection.methods!, key] : selection.methods!.filter((x) => x !== key);
        redraw();
      },
    );
  }
  if (s.methods.length === 0) methods.textContent = '—';
  const focus = $('focus') as HTMLSelectElement;
  focus.textContent = '';
  for (const r of s.runs) {
    const o = document.createElement('option');
    o.value = r.id;
    o.textContent = runLabel(r);
    focus.appendChild(o);
  }
  focus.value = selection.focus ?? '';
}

/** One colour per picked series, in picking order, the same in the list and the chart. */
function seriesColors(s: DashboardSnapshot): Map<string, string> {
  const keys = [
    ...s.runs.filter((r) => selection.runs!.includes(r.id)).map((r) => `run:${r.id}`),
    ...s.methods.filter((m) => selection.methods!.includes(methodKey(m))).map((m) => `method:${methodKey(m)}`),
  ];
  return new Map(keys.map((k, i) => [k, PALETTE[i % PALETTE.length]]));
}

// ---- charts -------------------------------------------------------------------------------------

interface Band {
  label: string;
  color: string;
  dashed: boolean;
  at: (x: number) => number | null;
  lo: (x: number) => number | null;
  hi: (x: number) => number | null;
}

function fade(hex: string, alpha: number): string {
  const n = parseInt(hex.slice(1), 16);
  return `rgba(${(n >> 16) & 255},${(n >> 8) & 255},${n & 255},${alpha})`;
}

/** The W/H phases of a run as shaded spans of the x-axis, labelled at the top. */
function phaseHook(phases: DashboardRun['phases']) {
  return (u: uPlot) => {
    const ctx = u.ctx;
    const { top, height } = u.bbox;
    ctx.save();
    ctx.font = `${Math.round(10 * devicePixelRatio)}px sans-serif`;
    ctx.textBaseline = 'top';
    for (const p of phases) {
      const x0 = u.valToPos(p.from, 'x', true);
      const x1 = u.valToPos(p.to, 'x', true);
      ctx.fillStyle = PHASE_FILL[p.kind] ?? 'rgba(128,128,128,0.08)';
      ctx.fillRect(x0, top, Math.max(1, x1 - x0), height);
      ctx.fillStyle = PHASE_TEXT[p.kind] ?? 'gray';
      const label = `${p.kind === 'weight' ? 'W' : p.kind === 'harness' ? 'H' : '?'}${p.phase}${p.completed ? '' : '*'}`;
      if (x1 - x0 > 14 * devicePixelRatio) ctx.fillText(label, x0 + 3 * devicePixelRatio, top + 3 * devicePixelRatio);
    }
    ctx.restore();
  };
}

/** Vertical ± se whiskers at the given points. */
function whiskerHook(points: () => { x: number; y: number; se: number; color: string }[]) {
  return (u: uPlot) => {
    const ctx = u.ctx;
    ctx.save();
    ctx.lineWidth = 1.5 * devicePixelRatio;
    for (const p of points()) {
      const x = u.valToPos(p.x, 'x', true);
      ctx.strokeStyle = p.color;
      ctx.beginPath();
      ctx.moveTo(x, u.valToPos(Math.min(1, p.y + p.se), 'y', true));
      ctx.lineTo(x, u.valToPos(Math.max(0, p.y - p.se), 'y', true));
      ctx.stroke();
    }
    ctx.restore();
  };
}

const yPct = { stroke: 'currentColor', grid: GRID, values: (_u: uPlot, ticks: number[]) => ticks.map((t) => `${Math.round(100 * t)}%`) };
const showPct = (_u: uPlot, v: number | null) => (v === null ? '—' : pct(v));

function drawCurves(s: DashboardSnapshot, focus: DashboardRun | undefined): { series: number; points: number } {
  const colors = seriesColors(s);
  const runs = s.runs.filter((r) => selection.runs!.includes(r.id) && r.curve.length > 0);
  const methods = s.methods.filter((m) => selection.methods!.includes(methodKey(m)) && m.curve.length > 0);
  const names = shortNames(s.runs);
  const bands: Band[] = [
    ...runs.map((r) => ({
      label: names.get(r.id)!,
      color: colors.get(`run:${r.id}`)!,
      dashed: false,
      at: (x: number) => stepAt(r.curve, x, (p) => p.y),
      lo: (x: number) => stepAt(r.curve, x, (p) => Math.max(0, p.y - p.se)),
      hi: (x: number) => stepAt(r.curve, x, (p) => Math.min(1, p.y + p.se)),
    })),
    ...methods.map((m) => ({
      label: `${methodKey(m)}: mean of ${m.runs.length}`,
      color: colors.get(`method:${methodKey(m)}`)!,
      dashed: true,
      at: (x: number) => stepAt(m.curve, x, (p) => p.y),
      lo: (x: number) => stepAt(m.curve, x, (p) => Math.max(0, p.y - (p.sd ?? 0))),
      hi: (x: number) => stepAt(m.curve, x, (p) => Math.min(1, p.y + (p.sd ?? 0))),
    })),
  ];
  const tests = runs.filter((r) => r.test).map((r) => ({ run: r, color: colors.get(`run:${r.id}`)! }));
  if (bands.length === 0) {
    empty(
      'chart-curve',
      s.runs.length === 0
        ? 'No validation results yet: the curves appear after a run evaluates its first harness.'
        : 'Nothing picked: tick runs or method means above to overlay them.',
    );
    return { series: 0, points: 0 };
  }
  const xs = [
    ...new Set([...runs.flatMap((r) => r.curve.map((p) => p.x)), ...methods.flatMap((m) => m.curve.map((p) => p.x)), ...tests.map((t) => t.run.test!.x)]),
  ].sort((a, b) => a - b);
  const data: (number | null)[][] = [xs];
  const series: uPlot.Series[] = [{ label: 'rollouts', value: (_u, v) => (v === null ? '—' : int(v)) }];
  const uBands: uPlot.Band[] = [];
  const hidden: number[] = [];
  let points = 0;
  for (const b of bands) {
    const line = xs.map(b.at);
    points += line.filter((v) => v !== null).length;
    data.push(line, xs.map(b.hi), xs.map(b.lo));
    const i = series.length;
    series.push(
      {
        label: b.label,
        stroke: b.color,
        width: b.dashed ? 2.5 : 1.8,
        dash: b.dashed ? [6, 4] : undefined,
        paths: uPlot.paths.stepped!({ align: 1 }),
        value: showPct,
      },
      { label: `${b.label} (upper)`, stroke: 'transparent', paths: uPlot.paths.stepped!({ align: 1 }), points: { show: false } },
      { label: `${b.label} (lower)`, stroke: 'transparent', paths: uPlot.paths.stepped!({ align: 1 }), points: { show: false } },
    );
    uBands.push({ series: [i + 1, i + 2], fill: fade(b.color, 0.14) });
    hidden.push(i + 1, i + 2);
  }
  for (const t of tests) {
    data.push(xs.map((x) => (x === t.run.test!.x ? t.run.test!.mean : null)));
    points++;
    series.push({
      label: `sealed test · ${names.get(t.run.id)}`,
      stroke: t.color,
      paths: () => null,
      points: { show: true, size: 11, fill: t.color, stroke: 'white', width: 1.5 },
      value: showPct,
    });
  }
  const k = focus?.k ?? runs[0]?.k;
  mount(
    'chart-curve',
    {
      height: 300,
      scales: { x: { time: false }, y: { range: [0, 1] } },
      axes: [
        { label: 'cumulative rollouts (training + search)', stroke: 'currentColor', grid: GRID },
        { ...yPct, label: `best-so-far val mean@${k ?? 'k'}` },
      ],
      series,
      bands: uBands,
      hooks: {
        drawClear: focus && runs.includes(focus) ? [phaseHook(focus.phases)] : [],
        draw: [whiskerHook(() => tests.map((t) => ({ x: t.run.test!.x, y: t.run.test!.mean, se: t.run.test!.se, color: t.color })))],
      },
    },
    data as uPlot.AlignedData,
    hidden,
  );
  return { series: bands.length + tests.length, points };
}

function drawTraining(r: DashboardRun | undefined): void {
  if (!r || r.training.length === 0) {
    empty('chart-training', r ? 'No weight steps: the weights stay frozen in this run’s method.' : 'No run to show.');
    return;
  }
  const t = r.training;
  const firsts = [...new Set(t.map((p) => p.phase))].map((phase) => ({ phase, step: t.find((p) => p.phase === phase)!.step }));
  const hasLoss = t.some((p) => p.loss !== null);
  mount(
    'chart-training',
    {
      height: 240,
      scales: { x: { time: false, range: (_u, min, max) => [min - 0.6, max + 0.6] }, y: { range: [0, 1] }, loss: { auto: true } },
      axes: [
        { label: 'global weight step', stroke: 'currentColor', grid: GRID, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500] },
        { ...yPct, label: 'fraction of rollouts' },
        ...(hasLoss ? [{ scale: 'loss', side: 1 as const, label: 'loss', stroke: 'currentColor', grid: { show: false } }] : []),
      ],
      series: [
        { label: 'step' },
        { label: 'mean reward', stroke: '#59a14f', width: 2, value: showPct },
        { label: 'accepted', stroke: '#4e79a7', width: 2, value: showPct },
        { label: 'truncation', stroke: '#e15759', width: 2, value: showPct },
        ...(hasLoss
          ? [
              {
                label: 'loss',
                stroke: '#9c9c9c',
                width: 1.5,
                dash: [4, 3],
                scale: 'loss',
                value: (_u: uPlot, v: number | null) => (v === null ? '—' : v.toFixed(3)),
              },
            ]
          : []),
      ],
      hooks: {
        drawClear: [
          (u: uPlot) => {
            const ctx = u.ctx;
            ctx.save();
            ctx.strokeStyle = 'rgba(128,128,128,0.6)';
            ctx.setLineDash([3, 3]);
            ctx.fillStyle = 'rgba(128,128,128,0.9)';
            ctx.font = `${Math.round(10 * devicePixelRatio)}px sans-serif`;
            for (const f of firsts) {
              const x = u.valToPos(f.step - 0.5, 'x', true);
              ctx.beginPath();
              ctx.moveTo(x, u.bbox.top);
              ctx.lineTo(x, u.bbox.top + u.bbox.height);
              ctx.stroke();
              ctx.fillText(`W${f.phase}`, x + 3 * devicePixelRatio, u.bbox.top + 12 * devicePixelRatio);
            }
            ctx.restore();
          },
        ],
      },
    },
    [t.map((p) => p.step), t.map((p) => p.reward), t.map((p) => p.accepted), t.map((p) => p.truncation), ...(hasLoss ? [t.map((p) => p.loss)] : [])],
  );
}

function drawRounds(r: DashboardRun | undefined): void {
  const list = $('acceptances');
  list.textContent = '';
  if (!r || r.candidates.length === 0) {
    empty('chart-rounds', r ? 'No harness candidates: this run’s method does not search.' : 'No run to show.');
    return;
  }
  // Rounds in order along the x-axis; a round's candidates side by side around its tick.
  const rounds = [...new Set(r.candidates.map((c) => `${c.phase}/${c.round}`))];
  const names = rounds.map((k) => {
    const [p, rd] = k.split('/');
    return `H${p}·r${rd}`;
  });
  const phaseStarts = [...new Set(r.candidates.map((c) => c.phase))].map((phase) => ({ phase, at: rounds.findIndex((k) => k.startsWith(`${phase}/`)) + 1 }));
  const placed = r.candidates
    .map((c) => {
      const at = rounds.indexOf(`${c.phase}/${c.round}`);
      const same = r.candidates.filter((d) => d.phase === c.phase && d.round === c.round);
      const j = same.indexOf(c);
      return { ...c, x: at + 1 + (same.length > 1 ? (j - (same.length - 1) / 2) * Math.min(0.18, 0.7 / same.length) : 0) };
    })
    .sort((a, b) => a.x - b.x);
  const xs = placed.map((c) => c.x);
  const separators = [...new Set(r.candidates.map((c) => c.phase))].slice(1).map((phase) => rounds.findIndex((k) => k.startsWith(`${phase}/`)) + 0.5);
  mount(
    'chart-rounds',
    {
      height: 240,
      scales: { x: { time: false, range: [0.4, rounds.length + 0.6] }, y: { range: [0, 1] } },
      axes: [
        {
          label: 'harness phase · round',
          stroke: 'currentColor',
          grid: GRID,
          // Round numbers under the points (every nth when they would overlap); phase names at the top.
          splits: (u) => {
            const every = Math.max(1, Math.ceil((rounds.length * 30) / Math.max(1, u.bbox.width / devicePixelRatio)));
            return rounds.map((_, i) => i + 1).filter((i) => (i - 1) % every === 0);
          },
          values: (_u, ticks) => ticks.map((t) => `r${rounds[Math.round(t) - 1]?.split('/')[1] ?? ''}`),
        },
        { ...yPct, label: 'mean@k (harness split)' },
      ],
      series: [
        { label: 'round', value: (_u, v) => (v === null ? '—' : (names[Math.round(v) - 1] ?? '')) },
        {
          label: 'candidate',
          stroke: '#4e79a7',
          paths: () => null,
          points: { show: true, size: 7, fill: 'rgba(78,121,167,0.55)' },
          value: showPct,
        },
        {
          label: 'accepted',
          stroke: '#e15759',
          paths: () => null,
          points: { show: true, size: 13, fill: '#e15759', stroke: 'white', width: 1.5 },
          value: showPct,
        },
      ],
      hooks: {
        drawClear: [
          (u: uPlot) => {
            const ctx = u.ctx;
            ctx.save();
            ctx.strokeStyle = 'rgba(128,128,128,0.6)';
            ctx.setLineDash([3, 3]);
            for (const s of separators) {
              const x = u.valToPos(s, 'x', true);
              ctx.beginPath();
              ctx.moveTo(x, u.bbox.top);
              ctx.lineTo(x, u.bbox.top + u.bbox.height);
              ctx.stroke();
            }
            ctx.fillStyle = PHASE_TEXT.harness;
            ctx.font = `${Math.round(10 * devicePixelRatio)}px sans-serif`;
            ctx.textBaseline = 'top';
            for (const p of phaseStarts) ctx.fillText(`H${p.phase}`, u.valToPos(p.at - 0.45, 'x', true), u.bbox.top + 3 * devicePixelRatio);
            ctx.restore();
          },
        ],
        draw: [whiskerHook(() => placed.map((c) => ({ x: c.x, y: c.mean, se: c.se, color: c.accepted ? 'rgba(225,87,89,0.8)' : 'rgba(78,121,167,0.45)' })))],
      },
    },
    [xs, placed.map((c) => c.mean), placed.map((c) => (c.accepted ? c.mean : null))],
  );
  for (const a of r.acceptances) {
    const li = document.createElement('li');
    const marked = r.candidates.some((c) => c.phase === a.phase && c.accepted);
    li.textContent = `H${a.phase}: ${a.text}${a.invalid > 0 ? ` · ${a.invalid} invalid` : ''}${marked ? '' : ' · not re-scored in this phase'}`;
    list.appendChild(li);
  }
}

// ---- tables -------------------------------------------------------------------------------------

function fill(table: HTMLTableElement, header: string[], rows: string[][], numericFrom: number): void {
  table.textContent = '';
  const head = table.createTHead().insertRow();
  header.forEach((h, i) => {
    const c = document.createElement('th');
    c.textContent = h;
    if (i >= numericFrom) c.className = 'num';
    head.appendChild(c);
  });
  const body = table.createTBody();
  for (const r of rows) {
    const row = body.insertRow();
    r.forEach((v, i) => {
      const c = row.insertCell();
      c.textContent = v;
      if (i >= numericFrom) c.className = 'num';
    });
  }
}

const DIAG_COLUMNS: [string, string, (v: number) => string][] = [
  ['rollouts', 'rollouts', int],
  ['pass', 'pass', (v) => pct(v)],
  ['truncated', 'truncated', (v) => pct(v)],
  ['noAnswer', 'no answer', (v) => pct(v)],
  ['extractionFailure', 'extraction fail', (v) => pct(v)],
  ['harnessFailure', 'harness fail', (v) => pct(v)],
  ['infraFailure', 'infra', (v) => pct(v)],
  ['toolCallsPerRollout', 'tool calls', (v) => v.toFixed(2)],
  ['modelCallsPerRollout', 'model calls', (v) => v.toFixed(2)],
];

function drawDiagnostics(r: DashboardRun | undefined): void {
  const table = $('diagnostics') as HTMLTableElement;
  if (!r || r.diagnostics.length === 0) {
    table.textContent = '';
    $('diagnostics-note').textContent = r ? 'No trajectories of this run in the store (copied without its results?).' : '';
    return;
  }
  $('diagnostics-note').textContent = 'Rates over the rollouts of each phase and split; domain.* are the domain’s own per-rollout diagnostics.';
  const keys = [...new Set(r.diagnostics.flatMap((d) => Object.keys(d.values).filter((k) => k.startsWith('domain.'))))].sort();
  const rows = r.diagnostics.map((d) => [
    d.phase === null ? 'test' : d.phase < 0 ? 'start' : `${r.phases.find((p) => p.phase === d.phase)?.kind === 'weight' ? 'W' : 'H'}${d.phase}`,
    d.split,
    ...DIAG_COLUMNS.map(([k, , f]) => {
      const v = d.values[k];
      return typeof v === 'number' ? f(v) : '—';
    }),
    ...keys.map((k) => {
      const v = d.values[k];
      return v === null || v === undefined ? '—' : typeof v === 'string' ? v : Number.isInteger(v) ? String(v) : v.toFixed(3);
    }),
  ]);
  fill(table, ['phase', 'split', ...DIAG_COLUMNS.map(([, h]) => h), ...keys], rows, 2);
}

function drawLedger(s: DashboardSnapshot): void {
  const header = [
    'run',
    'method · seed',
    'domain',
    'status',
    'phases',
    'best val',
    'sealed test',
    'training rollouts',
    'search rollouts',
    'training + search',
    'evaluation rollouts',
    'proposer $',
    'wall time',
  ];
  const rows = s.runs.map((r) => {
    const l = r.ledger;
    return [
      r.id,
      `${r.method} · ${r.seed === null ? '—' : r.seed}`,
      r.domain,
      r.status,
      r.phaseSequence,
      pct(r.best),
      r.test ? `${pct(r.test.mean)} ± ${pct(r.test.se)}` : '—',
      int(l.trainingRollouts),
      int(l.searchRollouts),
      int(l.trainingRollouts + l.searchRollouts),
      int(l.evalRollouts),
      `$${l.proposerDollars.toFixed(2)}`,
      `${(l.wallMs / 60_000).toFixed(1)} min`,
    ];
  });
  if (s.runs.length > 1) {
    const sum = (f: (r: DashboardRun) => number) => s.runs.reduce((a, r) => a + f(r), 0);
    rows.push([
      `all ${s.runs.length} runs`,
      '',
      '',
      '',
      '',
      '',
      '',
      int(sum((r) => r.ledger.trainingRollouts)),
      int(sum((r) => r.ledger.searchRollouts)),
      int(sum((r) => r.ledger.trainingRollouts + r.ledger.searchRollouts)),
      int(sum((r) => r.ledger.evalRollouts)),
      `$${sum((r) => r.ledger.proposerDollars).toFixed(2)}`,
      `${(sum((r) => r.ledger.wallMs) / 60_000).toFixed(1)} min`,
    ]);
  }
  const table = $('ledger') as HTMLTableElement;
  fill(table, header, rows, 5);
  s.runs.forEach((r, i) => {
    const row = table.tBodies[0].rows[i];
    row.title = r.reason;
    if (r.id === selection.focus) row.classList.add('focus');
    row.addEventListener('click', () => {
      selection.focus = r.id;
      redraw();
    });
  });
  if (s.runs.length > 1) table.tBodies[0].rows[s.runs.length].classList.add('total');
}

// ---- what was drawn, read back from the DOM ----------------------------------------------------

function tableCells(id: string): string[][] {
  return [...($(id) as HTMLTableElement).rows].map((row) => [...row.cells].map((c) => c.textContent ?? ''));
}

function readBack(): DrawnView {
  const charts = [...document.querySelectorAll<HTMLElement>('[data-chart]')].map((el) => {
    const p = plots.get(el.id);
    const series = p
      ? [...p.plot.root.querySelectorAll<HTMLElement>('.u-legend .u-series:not(.whale-hidden) .u-label')].slice(1).map((l) => l.textContent ?? '')
      : [];
    const points = p
      ? p.plot.data
          .slice(1)
          .reduce(
            (n, col, i) =>
              n + (p.plot.series[i + 1].points?.show === false ? 0 : (col as (number | null)[]).filter((v) => v !== null && v !== undefined).length),
            0,
          )
      : 0;
    return { id: el.id, title: el.closest('section')?.querySelector('h2')?.textContent ?? '', series, points, empty: p ? undefined : el.textContent };
  });
  return {
    charts: charts.map(({ empty: _e, ...c }) => c),
    tables: {
      ledger: tableCells('ledger'),
      diagnostics: tableCells('diagnostics'),
      acceptances: [...$('acceptances').querySelectorAll('li')].map((li) => [li.textContent ?? '']),
      empty: charts.filter((c) => c.empty).map((c) => [c.id, c.empty!]),
    },
    picker: {
      runs: [...$('pick-runs').querySelectorAll<HTMLInputElement>('input:checked')].map((c) => c.value),
      methods: [...$('pick-methods').querySelectorAll<HTMLInputElement>('input:checked')].map((c) => c.value),
      focus: ($('focus') as HTMLSelectElement).value,
    },
  };
}

// ---- rendering ----------------------------------------------------------------------------------

function redraw(): void {
  const s = snapshot;
  if (!s) return;
  defaults(s);
  $('store').textContent = s.store;
  const notes = [s.error, s.runs.length === 0 && !s.error ? 'No runs in this store yet.' : undefined, ...s.skipped.map((k) => `${k.id}: ${k.why}`)].filter(
    Boolean,
  );
  $('message').textContent = notes.join(' · ');
  const focus = s.runs.find((r) => r.id === selection.focus);
  $('focus-name').textContent = focus ? `${focus.method}${focus.seed !== null ? ` seed ${focus.seed}` : ''} · ${focus.id} · ${focus.phaseSequence}` : '';
  drawPicker(s);
  const drawn = drawCurves(s, focus);
  drawTraining(focus);
  drawRounds(focus);
  drawDiagnostics(focus);
  drawLedger(s);
  vscode.setState({ store: s.store, runs: selection.runs, methods: selection.methods, focus: selection.focus } satisfies DashboardState);
  send({ type: 'drawn', series: drawn.series, points: drawn.points, runs: s.runs.length, view: readBack() });
}

/** The runs a report covers: those picked, and those behind the picked method means; all when none. */
function reportRuns(): string[] {
  const s = snapshot;
  if (!s) return [];
  const ids = new Set(selection.runs ?? []);
  for (const m of s.methods) if (selection.methods?.includes(methodKey(m))) m.runs.forEach((id) => ids.add(id));
  return ids.size > 0 ? s.runs.map((r) => r.id).filter((id) => ids.has(id)) : s.runs.map((r) => r.id);
}

window.addEventListener('message', (e: MessageEvent) => {
  const parsed = ToWebview.safeParse(e.data);
  if (!parsed.success) {
    send({ type: 'error', message: `a message not in the contract: ${parsed.error.issues[0]?.message}` });
    return;
  }
  try {
    const msg = parsed.data;
    if (msg.type === 'snapshot') snapshot = msg.snapshot;
    else selection = { runs: msg.runs, methods: msg.methods, focus: msg.focus ?? msg.runs[0] };
    redraw();
  } catch (err) {
    send({ type: 'error', message: (err as Error).stack ?? String(err) });
  }
});
$('refresh').addEventListener('click', () => send({ type: 'refresh' }));
$('report').addEventListener('click', () => send({ type: 'report', runs: reportRuns() }));
$('focus').addEventListener('change', () => {
  selection.focus = ($('focus') as HTMLSelectElement).value;
  redraw();
});
send({ type: 'ready' });
