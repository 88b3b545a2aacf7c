// Charts for `whale report`: Vega-Lite specs (pure, testable), compiled by vega-lite, rendered to
// SVG by vega's headless renderer and rasterised to PNG by resvg with a font shipped in an npm
// package (dejavu-fonts-ttf), so the images look the same on every machine, fonts installed or not.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { TopLevelSpec } from 'vega-lite';
import { METHODS } from '../core/config.js';
import type { MeanCurvePoint, RunSummary, ScheduleGrid } from './aggregate.js';

/** The font family every chart uses; first the bundled one, then what a browser viewing the SVG may have. */
export const CHART_FONT = 'DejaVu Sans';
const FONT_STACK = `${CHART_FONT}, Verdana, Arial, sans-serif`;

/** One colour per method, the same in every chart. */
const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];

export function methodColors(methods: readonly string[]): { domain: string[]; range: string[] } {
  const known = METHODS as readonly string[];
  const range = methods.map((m, i) => {
    const at = known.indexOf(m);
    return PALETTE[(at >= 0 ? at : known.length + i) % PALETTE.length];
  });
  return { domain: [...methods], range };
}

const baseConfig = {
  font: FONT_STACK,
  background: 'white',
  view: { stroke: '#ddd' },
  axis: { labelFontSize: 11, titleFontSize: 12, gridColor: '#eee' },
  legend: { labelFontSize: 11, titleFontSize: 12, orient: 'right' as const },
  title: { fontSize: 14, anchor: 'start' as const, subtitleFontSize: 11, subtitleColor: '#555' },
};

export interface CurveSeries {
  method: string;
  points: readonly MeanCurvePoint[];
}

/**
 * Best-so-far validation mean@k against cumulative training + search rollouts, one line per method
 * (mean over seeds, step-wise), a band of ± one standard deviation across seeds where n ≥ 2, and a
 * dashed rule at weight-only's peak.
 */
export function curveChartSpec(domain: string, series: readonly CurveSeries[], opts: { k?: number; weightOnlyPeak?: number } = {}): TopLevelSpec {
  const k = opts.k !== undefined ? `mean@${opts.k}` : 'mean@k';
  const values = series.flatMap((s) =>
    s.points.map((p) => {
      const band = Number.isFinite(p.sd) ? p.sd : 0;
      return { method: s.method, x: p.x, mean: p.mean, lo: Math.max(0, p.mean - band), hi: Math.min(1, p.mean + band), n: p.n };
    }),
  );
  const methods = series.map((s) => s.method);
  const color = {
    field: 'method',
    type: 'nominal' as const,
    title: 'method',
    scale: methodColors(methods),
    sort: methods,
    legend: { symbolType: 'stroke', symbolStrokeWidth: 3, symbolOpacity: 1 },
  };
  const x = { field: 'x', type: 'quantitative' as const, title: 'cumulative rollouts (training + search)', axis: { format: ',d' } };
  const layers: NonNullable<Extract<TopLevelSpec, { layer: unknown }>['layer']> = [
    {
      mark: { type: 'area', interpolate: 'step-after', opacity: 0.18 },
      encoding: { x, y: { field: 'lo', type: 'quantitative' }, y2: { field: 'hi' }, color },
    },
    {
      mark: { type: 'line', interpolate: 'step-after', strokeWidth: 2.2, point: { size: 28 } },
      encoding: {
        x,
        y: { field: 'mean', type: 'quantitative', title: `best-so-far validation ${k}`, axis: { format: '.0%' }, scale: { zero: false, padding: 8 } },
        color,
      },
    },
  ];
  if (opts.weightOnlyPeak !== undefined) {
    const peak = { data: { values: [{ y: opts.weightOnlyPeak, label: `weight-only peak ${(100 * opts.weightOnlyPeak).toFixed(1)}%` }] } };
    layers.push(
      { ...peak, mark: { type: 'rule', strokeDash: [5, 4], color: '#666' }, encoding: { y: { field: 'y', type: 'quantitative' } } },
      {
        ...peak,
        mark: { type: 'text', align: 'right', dx: -4, dy: -7, color: '#444', fontSize: 10 },
        encoding: { y: { field: 'y', type: 'quantitative' }, x: { value: 'width' }, text: { field: 'label' } },
      },
    );
  }
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: `${domain}: best-so-far validation ${k}`, subtitle: 'mean over seeds; band: ± 1 standard deviation across seeds' },
    width: 560,
    height: 300,
    data: { values },
    layer: layers,
    config: baseConfig,
  } as TopLevelSpec;
}

export interface ReachBar {
  method: string;
  /** Rollouts at which the method's mean curve first reached weight-only's peak; undefined: not reached. */
  rollouts?: number;
  /** Its final training + search rollouts (mean over seeds): how far the curve went without reaching it. */
  spent: number;
}

/**
 * Rollouts to reach weight-only's peak, one horizontal bar per method; a method that never reached
 * it gets a grey bar to the rollouts it spent, labelled "not reached".
 */
export function reachChartSpec(domain: string, bars: readonly ReachBar[], opts: { peak: number; k?: number }): TopLevelSpec {
  const values = bars.map((b) => ({
    method: b.method,
    x: b.rollouts ?? b.spent,
    reached: b.rollouts !== undefined,
    label: b.rollouts !== undefined ? Math.round(b.rollouts).toLocaleString('en-US') : 'not reached',
  }));
  const methods = bars.map((b) => b.method);
  const y = { field: 'method', type: 'nominal' as const, title: null, sort: methods };
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: `${domain}: rollouts to reach weight-only's peak`,
      subtitle: `peak ${(100 * opts.peak).toFixed(1)}% ${opts.k !== undefined ? `mean@${opts.k}` : 'mean@k'} (weight-only's final mean best-so-far); grey: not reached within the rollouts spent`,
    },
    width: 480,
    height: { step: 22 },
    data: { values },
    layer: [
      {
        mark: { type: 'bar' },
        encoding: {
          y,
          x: { field: 'x', type: 'quantitative', title: 'cumulative rollouts (training + search)', axis: { format: ',d' } },
          color: {
            condition: { test: 'datum.reached', field: 'method', type: 'nominal', scale: methodColors(methods), legend: null },
            value: '#d0d0d0',
          },
        },
      },
      {
        mark: { type: 'text', align: 'left', dx: 4, fontSize: 10, color: '#333' },
        encoding: { y, x: { field: 'x', type: 'quantitative' }, text: { field: 'label' } },
      },
    ],
    config: baseConfig,
  } as TopLevelSpec;
}

/**
 * The (E, I) grid as a heatmap: E (epochs per weight phase) down, I (iterations per harness phase)
 * across, the colour the mean over seeds of `metric`, each cell labelled "mean ± sd (n)".
 */
export function gridChartSpec(grid: ScheduleGrid, metric: 'test' | 'bestValidation'): TopLevelSpec {
  const k = grid.k !== undefined ? `mean@${grid.k}` : 'mean@k';
  const what = metric === 'test' ? `sealed test ${k}` : `best validation ${k}`;
  const means = grid.cells
    .map((c) => c[metric])
    .filter((s) => s.n > 0)
    .map((s) => s.mean);
  const lo = Math.min(...means);
  const hi = Math.max(...means);
  const values = grid.cells.map((c) => {
    const s = c[metric];
    // viridis is dark at the low end of the colour scale and light at the high end: label ink to match.
    const light = s.n > 0 && hi > lo && (s.mean - lo) / (hi - lo) > 0.6;
    const sd = Number.isFinite(s.sd) ? ` ± ${(100 * s.sd).toFixed(1)}` : '';
    return {
      E: String(c.epochs),
      I: String(c.iterations),
      mean: s.n > 0 ? s.mean : null,
      label: s.n > 0 ? `${(100 * s.mean).toFixed(1)}${sd}` : '—',
      n: `n=${s.n}`,
      ink: light ? 'black' : 'white',
    };
  });
  const ink = { condition: { test: "datum.ink === 'black'", value: 'black' }, value: 'white' };
  const x = { field: 'I', type: 'ordinal' as const, title: 'I (iterations per harness phase)', sort: grid.iterations.map(String), axis: { labelAngle: 0 } };
  const y = { field: 'E', type: 'ordinal' as const, title: 'E (epochs per weight phase)', sort: grid.epochs.map(String) };
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: `${grid.domain}${grid.budgetMode === 'equal-total' ? '' : ` · ${grid.budgetMode}`}: ${grid.method} over (E, I), ${what}`,
      subtitle: 'mean ± standard deviation across seeds (%)',
    },
    width: { step: 110 },
    height: { step: 56 },
    data: { values },
    layer: [
      {
        mark: { type: 'rect', stroke: 'white', strokeWidth: 2 },
        encoding: {
          x,
          y,
          // Whole percents repeat on a scale whose cells lie within a few points of each other.
          color: { field: 'mean', type: 'quantitative', title: what, scale: { scheme: 'viridis' }, legend: { format: hi - lo < 0.05 ? '.1%' : '.0%' } },
        },
      },
      {
        mark: { type: 'text', fontSize: 12, dy: -6 },
        encoding: { x, y, text: { field: 'label' }, color: ink },
      },
      {
        mark: { type: 'text', fontSize: 9, dy: 9 },
        encoding: { x, y, text: { field: 'n' }, color: ink },
      },
    ],
    config: baseConfig,
  } as TopLevelSpec;
}

/** A run's weight steps: mean reward and truncation rate against the global step; undefined without weight steps. */
export function trainingChartSpec(run: RunSummary): TopLevelSpec | undefined {
  if (run.training.length === 0) return undefined;
  const values = run.training
    .flatMap((t) => [
      { step: t.globalStep + 1, phase: t.phase, metric: 'mean reward', value: t.meanReward },
      { step: t.globalStep + 1, phase: t.phase, metric: 'truncation rate', value: t.truncationRate },
    ])
    .filter((v) => Number.isFinite(v.value));
  const firsts = [...new Set(run.training.map((t) => t.phase))].map((phase) => {
    const first = run.training.find((t) => t.phase === phase)!;
    return { step: first.globalStep + 0.5, label: `phase ${phase}` };
  });
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: `${run.method}, seed ${run.seed ?? '?'}: weight steps`, subtitle: `${run.domain} · ${run.id}` },
    width: 560,
    height: 220,
    layer: [
      {
        data: { values: firsts },
        layer: [
          { mark: { type: 'rule', color: '#bbb', strokeDash: [3, 3] }, encoding: { x: { field: 'step', type: 'quantitative' } } },
          {
            mark: { type: 'text', align: 'left', baseline: 'top', dx: 3, dy: 2, color: '#888', fontSize: 9 },
            encoding: { x: { field: 'step', type: 'quantitative' }, y: { value: 0 }, text: { field: 'label' } },
          },
        ],
      },
      {
        data: { values },
        mark: { type: 'line', point: { size: 22 }, strokeWidth: 2 },
        encoding: {
          x: { field: 'step', type: 'quantitative', title: 'global weight step', axis: { tickMinStep: 1, format: 'd' } },
          y: { field: 'value', type: 'quantitative', title: 'fraction of rollouts', axis: { format: '.0%' }, scale: { domain: [0, 1] } },
          color: { field: 'metric', type: 'nominal', title: null, scale: { domain: ['mean reward', 'truncation rate'], range: ['#2ca02c', '#d62728'] } },
        },
      },
    ],
    config: baseConfig,
  } as TopLevelSpec;
}

/** The TrueType files resvg loads: the npm-shipped DejaVu Sans, else none (then system fonts). */
export function chartFontFiles(): string[] {
  try {
    const pkg = createRequire(import.meta.url).resolve('dejavu-fonts-ttf/package.json');
    const files = ['DejaVuSans.ttf', 'DejaVuSans-Bold.ttf'].map((f) => join(dirname(pkg), 'ttf', f));
    return files.filter((f) => existsSync(f));
  } catch {
    return [];
  }
}

export interface RenderedChart {
  svg: string;
  png: Buffer;
  width: number;
  height: number;
}

/** Vega-Lite spec → Vega → SVG (vega's headless renderer) → PNG (resvg, at `scale`× for sharpness). */
export async function renderChart(spec: TopLevelSpec, opts: { scale?: number } = {}): Promise<RenderedChart> {
  const [vl, vega, { Resvg }] = await Promise.all([import('vega-lite'), import('vega'), import('@resvg/resvg-js')]);
  const compiled = vl.compile(spec).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none' });
  let svg: string;
  try {
    svg = await view.toSVG();
  } finally {
    view.finalize();
  }
  const fontFiles = chartFontFiles();
  const resvg = new Resvg(svg, {
    fitTo: { mode: 'zoom', value: opts.scale ?? 2 },
    background: 'white',
    font: { loadSystemFonts: fontFiles.length === 0, fontFiles, defaultFontFamily: CHART_FONT, sansSerifFamily: CHART_FONT },
  });
  const image = resvg.render();
  return { svg, png: image.asPng(), width: image.width, height: image.height };
}
