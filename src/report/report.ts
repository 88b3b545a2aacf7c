// `whale report`: reads runs from a run store, aggregates them (aggregate.ts), draws the curves
// (charts.ts) and writes report.md or report.html with its images (PNG and SVG) beside it.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { TopLevelSpec } from 'vega-lite';
import {
  acceptanceText,
  cellLabel,
  methodTable,
  phaseSequence,
  runToReach,
  scheduleGrids,
  summarizeRun,
  type MethodTable,
  type PhaseInfo,
  type RunSummary,
  type ScheduleGrid,
  type Spread,
} from './aggregate.js';
import { curveChartSpec, gridChartSpec, reachChartSpec, renderChart, trainingChartSpec } from './charts.js';
import { toHtml, toMarkdown, type Block, type ReportDocument, type Table } from './document.js';
import { diagnosticsRow, emptyAggregate, mergeAggregates, readTrajectoriesFile, runDiagnostics, type DiagnosticsAggregate } from './diagnostics.js';
import { ResultStore } from '../archive/resultStore.js';

// Reading runs lives in runs.ts so that the editor's dashboard can read them without the charts.
import { loadRuns, type LoadedRuns } from './runs.js';
import { groupingTitle, runSourceTables, sourceTableBlock, type SourceTable } from './bySource.js';
export { loadRuns, type LoadedRuns };
export { acceptanceText, phaseSequence };

// ---- formatting -------------------------------------------------------------------------------

const pct = (x: number) => (100 * x).toFixed(1);
const int = (x: number) => Math.round(x).toLocaleString('en-US');
const short = (h: string | undefined) => (h ? h.slice(0, 8) : '—');

/** "41.2 ± 3.1" (percent; ± the standard deviation across seeds), "41.2" for one seed, "—" for none. */
export function fmtPctSpread(s: Spread, nOf?: number): string {
  if (s.n === 0) return '—';
  const base = Number.isFinite(s.sd) ? `${pct(s.mean)} ± ${pct(s.sd)}` : pct(s.mean);
  return nOf !== undefined && s.n !== nOf ? `${base} (n=${s.n})` : base;
}

function fmtCount(s: Spread): string {
  if (s.n === 0) return '—';
  return Number.isFinite(s.sd) && s.sd > 0 ? `${int(s.mean)} ± ${int(s.sd)}` : int(s.mean);
}

function fmtDollars(s: Spread): string {
  if (s.n === 0) return '—';
  return `$${s.mean.toFixed(2)}`;
}

function safeName(s: string): string {
  return s.replace(/[^A-Za-z0-9._-]+/g, '_');
}

/** `<store>/reports/<timestamp>`: UTC, sortable; a suffix when two reports start in the same second. */
export function reportDirFor(storeDir: string, now: Date): string {
  const t = now.toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '-');
  const base = join(storeDir, 'reports', t);
  let dir = base;
  for (let i = 2; existsSync(dir); i++) dir = `${base}-${i}`;
  return dir;
}

// ---- the document ------------------------------------------------------------------------------

export interface ChartRequest {
  name: string;
  alt: string;
  spec: TopLevelSpec;
}

/** The report as blocks, plus the charts it refers to (`<name>.png` / `<name>.svg`). Pure. */
export function buildReport(
  summaries: readonly RunSummary[],
  opts: { title?: string; storeDir?: string; now?: Date; skipped?: LoadedRuns['skipped']; bySource?: ReadonlyMap<string, readonly SourceTable[]> } = {},
): { doc: ReportDocument; charts: ChartRequest[]; table: MethodTable; grids: ScheduleGrid[] } {
  const table = methodTable(summaries);
  const grids = scheduleGrids(summaries);
  const blocks: Block[] = [];
  const charts: ChartRequest[] = [];
  const title = opts.title ?? 'WHALE report';
  blocks.push({ kind: 'heading', level: 1, text: title });
  const when = (opts.now ?? new Date()).toISOString().replace(/\.\d+Z$/, 'Z');
  blocks.push({
    kind: 'paragraph',
    text: `${summaries.length} run(s)${opts.storeDir ? ` from \`${opts.storeDir}\`` : ''}, generated ${when} by \`whale report\`.`,
  });
  if (summaries.length === 0) {
    blocks.push({ kind: 'paragraph', text: 'No runs to report.' });
  }

  if (table.rows.length > 0) {
    blocks.push({ kind: 'heading', level: 2, text: 'Methods' });
    const ks = [...new Set(table.domains.map((d) => d.k))];
    const k = ks.length === 1 && ks[0] !== undefined ? String(ks[0]) : 'k';
    blocks.push({
      kind: 'table',
      table: {
        header: [
          'domain',
          'budget',
          'method',
          'schedule as run',
          'seeds',
          `best validation mean@${k} (%)`,
          `test mean@${k} (%)`,
          'RSFT steps',
          'rollouts: training + search',
          'training',
          'search',
          'evaluation rollouts',
          'proposer $',
          "rollouts to reach weight-only's peak",
          'cycles',
          'proposer',
        ],
        align: ['l', 'l', 'l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l'],
        rows: table.rows.map((r) => [
          r.domain,
          r.budgetMode,
          r.label,
          r.schedules.join(' / '),
          `${r.n}${r.unfinished > 0 ? ` (${r.unfinished} unfinished)` : ''}${r.excluded.length > 0 ? ` (+${r.excluded.length} unfinished, not counted)` : ''}`,
          fmtPctSpread(r.bestValidation, r.n),
          fmtPctSpread(r.test, r.n),
          fmtCount(r.rsftSteps),
          fmtCount(r.rollouts),
          fmtCount(r.trainingRollouts),
          fmtCount(r.searchRollouts),
          fmtCount(r.evalRollouts),
          fmtDollars(r.dollars),
          r.toReachWeightOnlyPeak === undefined ? '—' : int(r.toReachWeightOnlyPeak),
          fmtCount(r.cycles),
          r.proposers.join(', ') || '—',
        ]),
      },
    });
    blocks.push({
      kind: 'list',
      items: [
        'A row aggregates the completed runs of its method (unfinished ones only when none has completed, marked so). Values are means over seeds; **±** is the sample standard deviation across seeds (no ± with one seed); `(n=…)` marks a column with fewer runs than seeds (e.g. runs without a test evaluation yet).',
        "Cycles: weight + harness cycles completed (a weight phase and a harness phase, in the order the schedule ran them); proposer: what wrote the run's harness candidates (— when it searched nothing). A method whose runs were configured with different (E, I) gets a row per (E, I).",
        'Schedule as run: E = epochs of the weight split per weight phase, I = iterations per harness phase (the seed\'s evaluation counted, as in the paper); "of N" marks a fixed phase the budget cut short of its planned N; ×n repeats; runs of a row that ran different schedules are separated by /.',
        "Budget: how a run's budget was counted. `equal-total` caps training + search rollouts together (search costs RSFT steps); `matched-steps` gives every method WHALE's number of RSFT steps and puts search on top (the paper's accounting). Both accountings are in the table: RSFT steps and training rollouts (what matched-steps holds equal), training + search (what equal-total holds equal).",
        'Best validation: the best validation mean@k a run reached (after any phase, or at the start); the pair it selects is the one evaluated on the **sealed test split**, once, for this report only — test never drives a choice.',
        "Rollouts: training (RSFT weight steps) + search (harness candidates, smoke runs and paired re-checks) is what the curves' x-axis counts; evaluation rollouts (validation after each phase, the final test) are counted apart. Proposer $ is the mean per run.",
        "Rollouts to reach weight-only's peak: the cumulative training + search rollouts at which the method's mean best-so-far validation curve first reaches the peak of weight-only's mean curve on the same domain; — when it never does or the domain has no weight-only run.",
      ],
    });
  }

  // Runs whose trajectories were found (a store copied without its results has none to read).
  const withDiagnostics = summaries.filter((s) => s.diagnostics?.byPhase.some((p) => p.aggregate.rollouts > 0));
  if (withDiagnostics.length > 0) {
    blocks.push({ kind: 'heading', level: 2, text: 'Bottleneck diagnostics' });
    blocks.push({ kind: 'paragraph', text: DIAGNOSTICS_NOTE });
    const rows: { label: string[]; a: DiagnosticsAggregate }[] = [];
    for (const r of table.rows) {
      const runs = withDiagnostics.filter((s) => r.runs.includes(s.id));
      if (runs.length === 0) continue;
      for (const [split, pick] of DIAGNOSTIC_SPLITS) {
        const a = emptyAggregate();
        for (const s of runs) for (const p of pick(s.diagnostics!.byPhase)) mergeAggregates(a, p.aggregate);
        if (a.rollouts > 0) rows.push({ label: [r.domain, r.budgetMode, r.label, split], a });
      }
    }
    blocks.push({ kind: 'table', table: diagnosticsTable(['domain', 'budget', 'method', 'split'], rows) });
    pushPassWhen(blocks, ['domain', 'budget', 'method', 'split'], rows);
  }

  if (table.domains.length > 0) {
    blocks.push({ kind: 'heading', level: 2, text: 'Best-so-far validation curves' });
    blocks.push({
      kind: 'paragraph',
      text: 'Best-so-far validation mean@k against cumulative training + search rollouts, one line per method (mean over seeds), the band ± one standard deviation across seeds. A run that ended before others keeps its final best-so-far.',
    });
    for (const d of table.domains) {
      const rows = table.rows.filter((r) => r.domain === d.domain && r.budgetMode === d.budgetMode);
      const label = d.budgetMode === 'equal-total' ? d.domain : `${d.domain} · ${d.budgetMode}`;
      const name = `curves-${safeName(d.budgetMode === 'equal-total' ? d.domain : `${d.domain}-${d.budgetMode}`)}`;
      charts.push({
        name,
        alt: `${label}: best-so-far validation mean@k against cumulative rollouts`,
        spec: curveChartSpec(
          label,
          rows.map((r) => ({ method: r.label, points: r.curve })),
          { k: d.k, weightOnlyPeak: d.weightOnlyPeak },
        ),
      });
      blocks.push({ kind: 'heading', level: 3, text: label });
      blocks.push({ kind: 'image', png: `${name}.png`, svg: `${name}.svg`, alt: `${label}: best-so-far validation curves` });
      if (d.weightOnlyPeak === undefined) blocks.push({ kind: 'paragraph', text: 'No weight-only run on this domain: rollouts-to-reach-peak is not defined.' });
    }
  }

  const withPeak = table.domains.filter((d) => d.weightOnlyPeak !== undefined);
  if (withPeak.length > 0) {
    blocks.push({ kind: 'heading', level: 2, text: "Rollouts to reach weight-only's peak" });
    blocks.push({
      kind: 'paragraph',
      text: "Per method, the cumulative training + search rollouts at which its mean best-so-far validation curve (over seeds) first reaches weight-only's final mean best-so-far on the same domain and budget mode, and that as a share of the rollouts weight-only itself needed; *not reached* when it never does within the rollouts it spent.",
    });
    for (const d of withPeak) {
      const label = d.budgetMode === 'equal-total' ? d.domain : `${d.domain} · ${d.budgetMode}`;
      const rows = table.rows.filter((r) => r.domain === d.domain && r.budgetMode === d.budgetMode);
      blocks.push({ kind: 'heading', level: 3, text: label });
      blocks.push({
        kind: 'paragraph',
        text: `weight-only's peak: ${pct(d.weightOnlyPeak!)}% (mean@${d.k ?? 'k'}), reached after ${d.weightOnlyPeakAt === undefined ? '—' : int(d.weightOnlyPeakAt)} rollouts.`,
      });
      blocks.push({
        kind: 'table',
        table: {
          header: ['method', "rollouts to reach weight-only's peak", "share of weight-only's", 'rollouts spent (mean)', 'final best validation (%)'],
          align: ['l', 'r', 'r', 'r', 'r'],
          rows: rows.map((r) => [
            r.label,
            r.toReachWeightOnlyPeak === undefined ? 'not reached' : int(r.toReachWeightOnlyPeak),
            r.toReachWeightOnlyPeak === undefined || !d.weightOnlyPeakAt ? '—' : `${pct(r.toReachWeightOnlyPeak / d.weightOnlyPeakAt)}%`,
            fmtCount(r.rollouts),
            fmtPctSpread(r.bestValidation, r.n),
          ]),
        },
      });
      const name = `reach-${safeName(d.budgetMode === 'equal-total' ? d.domain : `${d.domain}-${d.budgetMode}`)}`;
      charts.push({
        name,
        alt: `${label}: rollouts to reach weight-only's peak`,
        spec: reachChartSpec(
          label,
          rows.map((r) => ({ method: r.label, rollouts: r.toReachWeightOnlyPeak, spent: r.curve.length > 0 ? r.curve[r.curve.length - 1].x : 0 })),
          { peak: d.weightOnlyPeak!, k: d.k },
        ),
      });
      blocks.push({ kind: 'image', png: `${name}.png`, svg: `${name}.svg`, alt: `${label}: rollouts to reach weight-only's peak` });
    }
  }

  if (grids.length > 0) {
    blocks.push({ kind: 'heading', level: 2, text: 'The (E, I) grid' });
    blocks.push({
      kind: 'paragraph',
      text: "The same method run with different fixed schedules: E epochs of the weight split per weight phase, I iterations per harness phase (the seed's evaluation counted). Per cell: mean ± standard deviation across seeds of the sealed test of the validation-selected pair and of the best validation; the rollouts spent and the weight + harness cycles completed.",
    });
    for (const g of grids) {
      const label = `${g.domain}${g.budgetMode === 'equal-total' ? '' : ` · ${g.budgetMode}`} · ${g.method}`;
      blocks.push({ kind: 'heading', level: 3, text: label });
      blocks.push({
        kind: 'table',
        table: {
          header: ['(E, I)', 'seeds', `sealed test mean@${g.k ?? 'k'} (%)`, `best validation mean@${g.k ?? 'k'} (%)`, 'rollouts: training + search', 'cycles'],
          align: ['l', 'r', 'r', 'r', 'r', 'r'],
          rows: g.cells.map((c) => [
            cellLabel(c),
            `${c.n}${c.unfinished > 0 ? ` (${c.unfinished} unfinished)` : ''}`,
            fmtPctSpread(c.test, c.n),
            fmtPctSpread(c.bestValidation, c.n),
            fmtCount(c.rollouts),
            fmtCount(c.cycles),
          ]),
        },
      });
      for (const metric of ['test', 'bestValidation'] as const) {
        const name = `grid-${safeName(`${g.domain}-${g.budgetMode}-${g.method}`)}-${metric === 'test' ? 'test' : 'validation'}`;
        charts.push({ name, alt: `${label}: (E, I) grid, ${metric === 'test' ? 'sealed test' : 'best validation'}`, spec: gridChartSpec(g, metric) });
        blocks.push({
          kind: 'image',
          png: `${name}.png`,
          svg: `${name}.svg`,
          alt: `${label}: (E, I) grid, ${metric === 'test' ? 'sealed test' : 'best validation'}`,
        });
      }
    }
  }

  if (summaries.length > 0) {
    blocks.push({ kind: 'heading', level: 2, text: 'Runs' });
    const rowOf = (s: RunSummary) => table.rows.findIndex((r) => r.domain === s.domain && r.budgetMode === s.budgetMode && r.method === s.method);
    const sorted = [...summaries].sort(
      (a, b) => a.domain.localeCompare(b.domain) || rowOf(a) - rowOf(b) || (a.seed ?? 0) - (b.seed ?? 0) || a.id.localeCompare(b.id),
    );
    blocks.push({
      kind: 'table',
      table: {
        header: [
          'run',
          'domain',
          'method',
          'seed',
          'phases',
          'ended',
          'best validation (%)',
          'selected after phase',
          'test (%)',
          'training + search rollouts',
          'evaluation rollouts',
          'proposer $',
          "to reach weight-only's peak",
          'paired rule changed choice',
        ],
        align: ['l', 'l', 'l', 'r', 'l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
        rows: sorted.map((r) => {
          const reach = runToReach(r, table);
          return [
            `\`${r.id}\``,
            r.domain,
            r.method,
            r.seed === undefined ? '—' : String(r.seed),
            phaseSequence(r),
            r.reason,
            r.best ? `${pct(r.best.mean)} ± ${pct(r.best.se)}` : '—',
            r.best ? (r.best.phase < 0 ? 'start' : String(r.best.phase)) : '—',
            r.test ? `${pct(r.test.mean)} ± ${pct(r.test.se)}` : '—',
            int(r.ledger.trainingRollouts + r.ledger.searchRollouts),
            int(r.ledger.evalRollouts),
            `$${r.ledger.proposerDollars.toFixed(2)}`,
            reach === undefined ? '—' : int(reach),
            r.pairedUsed === 0 ? 'not used' : `${r.pairedChanged} of ${r.pairedUsed}`,
          ];
        }),
      },
    });
    blocks.push({
      kind: 'paragraph',
      text: "Per run, ± is the standard error of that run's own mean@k (over tasks). Phases: W = weight (RSFT, steps in brackets), H = harness search (iterations in brackets, the seed's evaluation counted); a trailing * marks a phase that did not complete. The paired rule's column counts the harness phases where it was applied and how often its choice differed from the archive-wide best.",
    });

    for (const r of sorted) {
      blocks.push({ kind: 'heading', level: 3, text: `${r.method} · ${r.domain} · seed ${r.seed ?? '?'} (\`${r.id}\`)` });
      if (r.phases.length > 0) {
        blocks.push({
          kind: 'table',
          table: {
            header: ['phase', 'kind', 'work', 'policy after', 'harness after', 'acceptance', 'validation after (%)'],
            align: ['r', 'l', 'l', 'l', 'l', 'l', 'r'],
            rows: r.phases.map((p) => [
              String(p.phase),
              p.kind + (p.mode && p.mode !== 'full' && p.kind === 'harness' ? ` (${p.mode})` : '') + (p.completed ? '' : ' (not completed)'),
              phaseWork(p),
              p.version ?? '—',
              p.kind === 'harness' ? `\`${short(p.harness ?? p.acceptance?.chosen)}\`` : '—',
              acceptanceText(p.acceptance),
              p.validation === undefined ? '—' : pct(p.validation),
            ]),
          },
        });
      }
      for (const src of opts.bySource?.get(r.id) ?? []) {
        blocks.push({
          kind: 'paragraph',
          text: `${groupingTitle(src)} (${src.split === 'test' ? 'sealed test' : 'last validation'} evaluation \`${src.keyHash}\`${src.infra > 0 ? `; ${src.infra} infrastructure failure(s) left out` : ''}): pass rate and the domain's per-rollout diagnostics.`,
        });
        blocks.push({ kind: 'table', table: sourceTableBlock(src) });
      }
      const byPhase = r.diagnostics?.byPhase.filter((p) => p.aggregate.rollouts > 0) ?? [];
      const byCandidate = r.diagnostics?.byCandidate.filter((c) => c.aggregate.rollouts > 0) ?? [];
      if (byPhase.length > 0) {
        blocks.push({
          kind: 'paragraph',
          text: 'Diagnostics per phase and split (rates over the rollouts of the phase; val = the validation after the phase):',
        });
        const phaseRows = byPhase.map((p) => ({ label: [p.phase === null ? '—' : p.phase < 0 ? 'start' : String(p.phase), p.split], a: p.aggregate }));
        blocks.push({ kind: 'table', table: diagnosticsTable(['phase', 'split'], phaseRows) });
        pushPassWhen(blocks, ['phase', 'split'], phaseRows);
      }
      if (byCandidate.length > 0) {
        blocks.push({ kind: 'paragraph', text: 'Diagnostics per harness candidate (its scoring rollouts on the harness split):' });
        blocks.push({
          kind: 'table',
          table: diagnosticsTable(
            ['phase', 'round', 'candidate'],
            byCandidate.map((c) => ({ label: [String(c.phase), String(c.round), `\`${short(c.treeHash)}\``], a: c.aggregate })),
          ),
        });
      }
      const spec = trainingChartSpec(r);
      if (spec) {
        const name = `training-${safeName(r.id)}`;
        charts.push({ name, alt: `${r.id}: weight-step mean reward and truncation rate`, spec });
        blocks.push({ kind: 'image', png: `${name}.png`, svg: `${name}.svg`, alt: `${r.method} seed ${r.seed ?? '?'}: weight steps` });
      } else if (r.phases.length === 0) {
        blocks.push({ kind: 'paragraph', text: 'No phase yet.' });
      } else {
        blocks.push({ kind: 'paragraph', text: 'No weight steps (the weights stay frozen in this method).' });
      }
    }
  }

  if (opts.skipped && opts.skipped.length > 0) {
    blocks.push({ kind: 'heading', level: 2, text: 'Not reported' });
    blocks.push({ kind: 'list', items: opts.skipped.map((s) => `\`${s.id}\`: ${s.why}`) });
  }
  return { doc: { title, blocks }, charts, table, grids };
}

const DIAGNOSTICS_NOTE =
  'Rates over rollouts (%), per method and split, summed over its runs: pass; truncated (a model call cut at its token limit); no answer (the harness returned none); extraction failure (an answer the verifier could extract nothing from); harness failure (crash, protocol error, rule violation, a sandbox limit); infra (a backend, tool service or verifier failed: never scored); tool and model calls per rollout; then each `domain.*` diagnostic the domain reports per rollout (numbers averaged, yes/no as %, strings counted). val (start) is the validation before any phase, val (final) the last one.';

type PhaseRows = NonNullable<RunSummary['diagnostics']>['byPhase'];
const DIAGNOSTIC_SPLITS: [string, (ps: PhaseRows) => PhaseRows][] = [
  ['weight', (ps) => ps.filter((p) => p.split === 'weight')],
  ['harness', (ps) => ps.filter((p) => p.split === 'harness')],
  ['val (start)', (ps) => ps.filter((p) => p.split === 'val' && p.phase === -1)],
  [
    'val (final)',
    (ps) => {
      const val = ps.filter((p) => p.split === 'val');
      return val.length > 1 ? [val[val.length - 1]] : [];
    },
  ],
  ['test', (ps) => ps.filter((p) => p.split === 'test')],
];

/** A diagnostics table: the given label columns, then the rates, then the union of domain keys. */
function diagnosticsTable(labels: string[], rows: { label: string[]; a: DiagnosticsAggregate }[]): Table {
  const data = rows.map((r) => ({ label: r.label, row: diagnosticsRow(r.a) }));
  const domainKeys = [...new Set(data.flatMap((d) => Object.keys(d.row).filter((k) => k.startsWith('domain.'))))].sort();
  const fixed: [string, string, (v: number) => string][] = [
    ['rollouts', 'rollouts', int],
    ['pass', 'pass %', pct],
    ['truncated', 'truncated %', pct],
    ['noAnswer', 'no answer %', pct],
    ['extractionFailure', 'extraction failure %', pct],
    ['harnessFailure', 'harness failure %', pct],
    ['infraFailure', 'infra %', pct],
    ['toolCallsPerRollout', 'tool calls', (v) => v.toFixed(2)],
    ['modelCallsPerRollout', 'model calls', (v) => v.toFixed(2)],
  ];
  const cell = (v: number | string | undefined, f: (v: number) => string) =>
    v === undefined ? '—' : typeof v === 'string' ? v : Number.isFinite(v) ? f(v) : '—';
  // A domain key is a rate when every value it took was a yes/no; numbers are shown as means.
  const isRate = (k: string) => rows.every((r) => r.a.domain[k.slice(7)]?.kind !== 'number');
  return {
    header: [...labels, ...fixed.map(([, h]) => h), ...domainKeys.map((k) => (isRate(k) ? `${k} %` : k))],
    align: [...labels.map(() => 'l' as const), ...fixed.map(() => 'r' as const), ...domainKeys.map(() => 'r' as const)],
    rows: data.map((d) => [
      ...d.label,
      ...fixed.map(([k, , f]) => cell(d.row[k], f)),
      ...domainKeys.map((k) => cell(d.row[k], isRate(k) ? pct : (v) => v.toFixed(2))),
    ]),
  };
}

/**
 * What each yes/no diagnostic is worth where it held: the pass rate among those rollouts, with their
 * count (kbchain: of the rollouts shown the needed fact, how many the model answered right). Nothing
 * when no such key ever held.
 */
function pushPassWhen(blocks: Block[], labels: string[], rows: { label: string[]; a: DiagnosticsAggregate }[]): void {
  const keys = [...new Set(rows.flatMap((r) => Object.entries(r.a.domain).flatMap(([k, s]) => (s.kind === 'boolean' && s.trues > 0 ? [k] : []))))].sort();
  if (keys.length === 0) return;
  blocks.push({
    kind: 'paragraph',
    text: 'Pass rate among the rollouts where each yes/no diagnostic held (%, with how many rollouts that was):',
  });
  blocks.push({
    kind: 'table',
    table: {
      header: [...labels, ...keys.map((k) => `pass % when ${k}`)],
      align: [...labels.map(() => 'l' as const), ...keys.map(() => 'r' as const)],
      rows: rows.map((r) => [
        ...r.label,
        ...keys.map((k) => {
          const s = r.a.domain[k];
          return s?.kind === 'boolean' && s.trues > 0 ? `${pct(s.passedWhenTrue / s.trues)} (${s.trues})` : '—';
        }),
      ]),
    },
  });
}

function phaseWork(p: PhaseInfo): string {
  if (p.kind === 'weight') return `${p.steps ?? 0} step(s)`;
  if (p.kind === 'harness') return `${p.scored ?? 0} scored, ${p.invalid ?? 0} invalid`;
  return '—';
}

// ---- writing -----------------------------------------------------------------------------------

export interface ReportOptions {
  storeDir: string;
  /** Runs to report; every run in the store when empty or absent. */
  runIds?: readonly string[];
  format?: 'md' | 'html';
  /** Folder to write into; default `<store>/reports/<timestamp>/`. */
  outDir?: string;
  now?: Date;
  title?: string;
  log?(line: string): void;
}

export interface ReportResult {
  dir: string;
  file: string;
  images: string[];
  runs: number;
  skipped: LoadedRuns['skipped'];
  table: MethodTable;
  grids: ScheduleGrid[];
}

export async function writeReport(opts: ReportOptions): Promise<ReportResult> {
  const now = opts.now ?? new Date();
  const storeDir = resolve(opts.storeDir);
  const { runs, skipped } = loadRuns(storeDir, opts.runIds);
  const results = new ResultStore(storeDir);
  const summaries = runs.map((run) => ({
    ...summarizeRun(run),
    diagnostics: runDiagnostics(run.entries, (key) => readTrajectoriesFile(results.trajectoriesFile(key))),
  }));
  const bySource = new Map<string, SourceTable[]>();
  for (const r of runs) {
    const t = runSourceTables(storeDir, r);
    if (t.length) bySource.set(r.id, t);
  }
  const { doc, charts, table, grids } = buildReport(summaries, { title: opts.title, storeDir, now, skipped, bySource });
  const dir = opts.outDir ? resolve(opts.outDir) : reportDirFor(storeDir, now);
  mkdirSync(dir, { recursive: true });
  const images: string[] = [];
  for (const [i, c] of charts.entries()) {
    opts.log?.(`chart ${i + 1}/${charts.length}: ${c.name}`);
    const r = await renderChart(c.spec);
    const svg = join(dir, `${c.name}.svg`);
    const png = join(dir, `${c.name}.png`);
    writeFileSync(svg, r.svg);
    writeFileSync(png, r.png);
    images.push(png, svg);
  }
  const format = opts.format ?? 'md';
  const file = join(dir, format === 'html' ? 'report.html' : 'report.md');
  writeFileSync(file, format === 'html' ? toHtml(doc) : toMarkdown(doc));
  // The numbers behind the table and curves, for scripts (e.g. the README's table).
  writeFileSync(
    join(dir, 'summary.json'),
    JSON.stringify(
      {
        generated: now.toISOString(),
        rows: table.rows.map(({ curve: _curve, ...row }) => row),
        domains: table.domains,
        grids,
        runs: summaries.map(({ curve, training: _training, diagnostics, ...s }) => ({
          ...s,
          curve,
          diagnostics: diagnostics && {
            byPhase: diagnostics.byPhase.map((p) => ({ phase: p.phase, split: p.split, ...diagnosticsRow(p.aggregate) })),
            byCandidate: diagnostics.byCandidate.map((c) => ({ phase: c.phase, round: c.round, treeHash: c.treeHash, ...diagnosticsRow(c.aggregate) })),
          },
        })),
      },
      null,
      2,
    ) + '\n',
  );
  return { dir, file, images, runs: summaries.length, skipped, table, grids };
}
