// vscode-free: the configured backend's health — which URLs to probe, a cheap reachability check,
// the ok/unreachable state with its backoff, and how it reads in the status bar and the Runs view.

/** One server to probe: any HTTP answer (even 401 or 404) means it is up. */
export interface HealthTarget {
  role: 'sampler' | 'trainer' | 'server';
  url: string;
}

/** The URLs a `backend` section (as written, unvalidated) names; none for the in-process embedded backend. */
export function healthTargets(backend: unknown): HealthTarget[] {
  const b = backend as { kind?: unknown; baseUrl?: unknown; sampler?: { baseUrl?: unknown }; trainer?: { baseUrl?: unknown } } | undefined;
  const str = (x: unknown) => (typeof x === 'string' && /^https?:\/\//.test(x) ? x.replace(/\/+$/, '') : undefined);
  const openai = (u: string | undefined, role: HealthTarget['role']): HealthTarget[] => (u ? [{ role, url: `${u}/models` }] : []);
  const tinker = (u: string | undefined, role: HealthTarget['role']): HealthTarget[] =>
    u ? [{ role, url: `${u.replace(/\/api\/v1$/, '')}/api/v1/healthz` }] : [];
  switch (b?.kind) {
    case 'openai-compatible':
      return openai(str(b.baseUrl), 'server');
    case 'tinker':
      return tinker(str(b.baseUrl), 'server');
    case 'split':
      return [...openai(str(b.sampler?.baseUrl), 'sampler'), ...tinker(str(b.trainer?.baseUrl), 'trainer')];
    default:
      return [];
  }
}

/** Probes every target once; the first that does not answer is the error. */
export async function checkTargets(targets: readonly HealthTarget[], timeoutMs = 5000): Promise<{ ok: true } | { ok: false; error: string }> {
  for (const t of targets) {
    try {
      const res = await fetch(t.url, { signal: AbortSignal.timeout(timeoutMs) });
      await res.body?.cancel();
    } catch (e) {
      const cause = (e as { cause?: { code?: string } }).cause?.code;
      const why = (e as Error).name === 'TimeoutError' ? `no answer in ${timeoutMs} ms` : (cause ?? (e as Error).message);
      return { ok: false, error: `${t.role} ${t.url}: ${why}` };
    }
  }
  return { ok: true };
}

export type HealthState =
  { status: 'unknown' } | { status: 'ok'; checkedAt: number } | { status: 'unreachable'; since: number; checkedAt: number; failures: number; error: string };

export interface HealthTiming {
  /** Between checks while the backend answers. */
  okMs: number;
  /** First retry after a failure; doubles per failure up to maxRetryMs. */
  retryMs: number;
  maxRetryMs: number;
}

export const DEFAULT_TIMING: HealthTiming = { okMs: 60_000, retryMs: 10_000, maxRetryMs: 300_000 };

/** The state after one check. `since` is when it first failed, kept across failures. */
export function nextHealth(prev: HealthState, r: { ok: true } | { ok: false; error: string }, now: number): HealthState {
  if (r.ok) return { status: 'ok', checkedAt: now };
  if (prev.status === 'unreachable') return { ...prev, checkedAt: now, failures: prev.failures + 1, error: r.error };
  return { status: 'unreachable', since: now, checkedAt: now, failures: 1, error: r.error };
}

/** When to check next: the ok interval, or a backoff that doubles per failure. */
export function nextDelayMs(s: HealthState, t: HealthTiming = DEFAULT_TIMING): number {
  if (s.status !== 'unreachable') return t.okMs;
  return Math.min(t.maxRetryMs, t.retryMs * 2 ** Math.min(20, s.failures - 1));
}

const clock = (ms: number) => new Date(ms).toISOString().slice(11, 19);

/** The status bar's mark and the words for the tooltip and the Runs view. */
export function describeHealth(kind: string, s: HealthState): { mark: string; text: string } {
  switch (s.status) {
    case 'unknown':
      return { mark: '$(circle-outline)', text: `${kind}: not checked yet` };
    case 'ok':
      return { mark: '$(pass)', text: `${kind}: reachable (checked ${clock(s.checkedAt)} UTC)` };
    case 'unreachable':
      return {
        mark: '$(debug-disconnect)',
        text: `${kind}: unreachable since ${clock(s.since)} UTC (${s.error}; ${s.failures} failed check${s.failures === 1 ? '' : 's'})`,
      };
  }
}

/**
 * Runs the checks on a timer: one at start, then per `nextDelayMs`. `checkNow` probes at once (the
 * Check Backend Health command) and reschedules from there.
 */
export class HealthPoller {
  private state: HealthState = { status: 'unknown' };
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private stopped = false;

  constructor(
    private readonly targets: () => HealthTarget[],
    private readonly onChange: (s: HealthState) => void,
    private readonly timing: () => HealthTiming = () => DEFAULT_TIMING,
    private readonly now: () => number = Date.now,
  ) {}

  current(): HealthState {
    return this.state;
  }

  start(): void {
    this.stopped = false;
    void this.checkNow();
  }

  async checkNow(): Promise<HealthState> {
    clearTimeout(this.timer);
    const targets = this.targets();
    if (targets.length === 0) {
      this.set({ status: 'unknown' });
      return this.state;
    }
    if (!this.running) {
      this.running = true;
      try {
        this.set(nextHealth(this.state, await checkTargets(targets), this.now()));
      } finally {
        this.running = false;
      }
    }
    if (!this.stopped) this.timer = setTimeout(() => void this.checkNow(), nextDelayMs(this.state, this.timing()));
    return this.state;
  }

  /** The config changed: forget what was known about the old URLs and check the new ones. */
  reset(): void {
    this.state = { status: 'unknown' };
    if (!this.stopped) void this.checkNow();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private set(s: HealthState): void {
    const changed = JSON.stringify(s) !== JSON.stringify(this.state);
    this.state = s;
    if (changed) this.onChange(s);
  }
}

/**
 * A run's backend row in the Runs view: what the run journaled (kind and capabilities), plus the
 * configured backend's health when the run uses that kind of backend.
 */
export function backendRowDetail(runBackend: string, health: { kind: string; targets: readonly string[]; text: string } | undefined): string {
  if (!health || health.targets.length === 0 || runBackend.split(' · ')[0] !== health.kind) return runBackend;
  return `${runBackend} · ${health.text.startsWith(`${health.kind}: `) ? health.text.slice(health.kind.length + 2) : health.text}`;
}
