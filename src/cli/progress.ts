/** Progress on the terminal for anything long: done/total, rate and ETA, redrawn in place on a TTY. */
export class Progress {
  private readonly started = Date.now();
  private lastPrint = 0;
  constructor(
    private readonly label: string,
    private readonly stream: NodeJS.WriteStream = process.stderr,
  ) {}

  update(done: number, total: number): void {
    const now = Date.now();
    const final = done >= total;
    if (!final && now - this.lastPrint < (this.stream.isTTY ? 200 : 5000)) return;
    this.lastPrint = now;
    const secs = (now - this.started) / 1000;
    const rate = done / Math.max(secs, 1e-3);
    const eta = rate > 0 && !final ? ` ETA ${formatDuration((total - done) / rate)}` : '';
    const line = `${this.label}: ${done}/${total} rollouts (${rate.toFixed(1)}/s)${eta} elapsed ${formatDuration(secs)}`;
    if (this.stream.isTTY) this.stream.write(`\r\x1b[K${line}${final ? '\n' : ''}`);
    else this.stream.write(line + '\n');
  }
}

export function formatDuration(secs: number): string {
  if (!Number.isFinite(secs)) return '?';
  const s = Math.round(secs);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}
