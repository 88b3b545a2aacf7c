// The dashboard webview's contract: every message either side sends, as zod schemas, imported by
// the extension (src/extension/dashboard/panel.ts) and by the webview script
// (src/extension/dashboard/webview/main.ts). The extension sends whole snapshots, never deltas, so a
// webview that was hidden and restored is drawn from one message. Each side validates what it
// receives; a message that does not parse is logged and dropped.
import { z } from 'zod';

export const Point = z.object({ x: z.number(), y: z.number() });

export const LedgerSchema = z.object({
  trainingRollouts: z.number(),
  searchRollouts: z.number(),
  evalRollouts: z.number(),
  proposerDollars: z.number(),
  wallMs: z.number(),
});

export const DashboardRun = z.object({
  id: z.string(),
  method: z.string(),
  domain: z.string(),
  seed: z.number().nullable(),
  status: z.enum(['completed', 'stopped', 'in progress']),
  reason: z.string(),
  /** Best-so-far validation mean@k against cumulative (training + search) rollouts. */
  curve: z.array(Point),
  best: z.number().nullable(),
  ledger: LedgerSchema,
});
export type DashboardRun = z.infer<typeof DashboardRun>;

export const DashboardMethod = z.object({
  domain: z.string(),
  method: z.string(),
  runs: z.array(z.string()),
  /** Mean over the method's runs (seeds) of their best-so-far curves. */
  curve: z.array(Point),
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
export const ToWebview = z.discriminatedUnion('type', [z.object({ type: z.literal('snapshot'), snapshot: DashboardSnapshot })]);
export type ToWebview = z.infer<typeof ToWebview>;

/** Webview → extension. `drawn` reports what was plotted (the integration test asserts on it). */
export const FromWebview = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('drawn'), series: z.number().int().nonnegative(), points: z.number().int().nonnegative(), runs: z.number().int().nonnegative() }),
  z.object({ type: z.literal('refresh') }),
  z.object({ type: z.literal('error'), message: z.string() }),
]);
export type FromWebview = z.infer<typeof FromWebview>;

/** State the webview keeps through VS Code's setState, handed to the serializer on restore. */
export const DashboardState = z.object({ store: z.string().optional() });
export type DashboardState = z.infer<typeof DashboardState>;
