// The dashboard webview's contract: every message either side sends, as zod schemas, imported by
// the extension (src/extension/dashboard/panel.ts) and by the webview script
// (src/extension/dashboard/webview/main.ts). The extension sends whole snapshots, never deltas, so a
// webview that was hidden and restored is drawn from one message. Each side validates what it
// receives; a message that does not parse is logged and dropped.
import { z } from 'zod';

export const LedgerSchema = z.object({
  trainingRollouts: z.number(),
  searchRollouts: z.number(),
  evalRollouts: z.number(),
  proposerDollars: z.number(),
  wallMs: z.number(),
});

/** A point of a run's best-so-far curve: y is the best so far, se the standard error of the validation that set it. */
export const CurvePoint = z.object({ x: z.number(), y: z.number(), se: z.number(), mean: z.number(), phase: z.number() });

/** A phase as a span of the curve's x-axis (cumulative training + search rollouts). */
export const PhaseSpan = z.object({
  phase: z.number(),
  kind: z.string(),
  from: z.number(),
  to: z.number(),
  completed: z.boolean(),
  /** "W 4 steps", "H 4 iterations". */
  work: z.string(),
});

/** One weight step's training signals (fractions of the step's rollouts; loss when the trainer reported one). */
export const TrainingStep = z.object({
  step: z.number(),
  phase: z.number(),
  reward: z.number().nullable(),
  accepted: z.number().nullable(),
  truncation: z.number().nullable(),
  loss: z.number().nullable(),
});

/** A harness candidate scored in a round; `accepted` marks the one its phase accepted. */
export const RoundCandidate = z.object({
  phase: z.number(),
  round: z.number(),
  treeHash: z.string(),
  mean: z.number(),
  se: z.number(),
  accepted: z.boolean(),
});

export const PhaseAcceptance = z.object({
  phase: z.number(),
  /** "archive-best: 82fa96f4 (kept the incumbent)". */
  text: z.string(),
  chosen: z.string(),
  /** Candidates found invalid in the phase (not plotted: they have no score). */
  invalid: z.number(),
});

/** The domain's and the runtime's diagnostics of a phase and split, as rates and means (null: not defined). */
export const DiagnosticsRow = z.object({
  /** null: the sealed test; -1: before the first phase. */
  phase: z.number().nullable(),
  split: z.string(),
  values: z.record(z.string(), z.union([z.number(), z.string(), z.null()])),
});

export const DashboardRun = z.object({
  id: z.string(),
  method: z.string(),
  domain: z.string(),
  seed: z.number().nullable(),
  status: z.enum(['completed', 'stopped', 'in progress']),
  reason: z.string(),
  k: z.number().nullable(),
  /** Best-so-far validation mean@k against cumulative (training + search) rollouts. */
  curve: z.array(CurvePoint),
  best: z.number().nullable(),
  /** The sealed test of the validation-selected pair, placed at the run's final x. */
  test: z.object({ x: z.number(), mean: z.number(), se: z.number(), k: z.number() }).nullable(),
  phases: z.array(PhaseSpan),
  training: z.array(TrainingStep),
  candidates: z.array(RoundCandidate),
  acceptances: z.array(PhaseAcceptance),
  diagnostics: z.array(DiagnosticsRow),
  /** "W(4) H(4) W(4)": the phases as run. */
  phaseSequence: z.string(),
  ledger: LedgerSchema,
});
export type DashboardRun = z.infer<typeof DashboardRun>;

export const MethodPoint = z.object({ x: z.number(), y: z.number(), sd: z.number().nullable(), n: z.number() });

export const DashboardMethod = z.object({
  domain: z.string(),
  method: z.string(),
  runs: z.array(z.string()),
  /** Mean over the method's runs (seeds) of their best-so-far curves; sd across seeds (null with one seed). */
  curve: z.array(MethodPoint),
});
export type DashboardMethod = z.infer<typeof DashboardMethod>;

export const DashboardSnapshot = z.object({
  store: z.string(),
  generatedAt: z.string(),
  runs: z.array(DashboardRun),
  methods: z.array(DashboardMethod),
  skipped: z.array(z.object({ id: z.string(), why: z.string() })),
  /** Set when the store could not be read (shown instead of the chart). */
  error: z.string().optional(),
});
export type DashboardSnapshot = z.infer<typeof DashboardSnapshot>;

/** Extension → webview. */
export const ToWebview = z.discriminatedUnion('type', [
  z.object({ type: z.literal('snapshot'), snapshot: DashboardSnapshot }),
  /** Chooses what the charts overlay (tests, and commands that open the dashboard on a run). */
  z.object({ type: z.literal('select'), runs: z.array(z.string()), methods: z.array(z.string()), focus: z.string().optional() }),
]);
export type ToWebview = z.infer<typeof ToWebview>;

/** What the webview shows, read back from its DOM after drawing: each chart's legend and point count, each table's cells. */
export const DrawnView = z.object({
  charts: z.array(z.object({ id: z.string(), title: z.string(), series: z.array(z.string()), points: z.number() })),
  tables: z.record(z.string(), z.array(z.array(z.string()))),
  picker: z.object({ runs: z.array(z.string()), methods: z.array(z.string()), focus: z.string() }),
});
export type DrawnView = z.infer<typeof DrawnView>;

/** Webview → extension. `drawn` reports what was plotted (the integration test asserts on it). */
export const FromWebview = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({
    type: z.literal('drawn'),
    series: z.number().int().nonnegative(),
    points: z.number().int().nonnegative(),
    runs: z.number().int().nonnegative(),
    view: DrawnView.optional(),
  }),
  /** The researcher asked for `whale report` of these runs (the ones the picker overlays). */
  z.object({ type: z.literal('report'), runs: z.array(z.string()) }),
  z.object({ type: z.literal('refresh') }),
  z.object({ type: z.literal('error'), message: z.string() }),
]);
export type FromWebview = z.infer<typeof FromWebview>;

/** State the webview keeps through VS Code's setState, handed to the serializer on restore. */
export const DashboardState = z.object({
  store: z.string().optional(),
  runs: z.array(z.string()).optional(),
  methods: z.array(z.string()).optional(),
  focus: z.string().optional(),
});
export type DashboardState = z.infer<typeof DashboardState>;
