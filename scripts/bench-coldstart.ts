// Cold start of the CLI: `whale --help` and `whale --version` against `node -e ""`, the same
// Node doing nothing, run in turn (A B A B …) so both see the same machine; medians and the median
// of the pairwise ratios. The bundle must be built (npm run build).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../bin/whale.js', import.meta.url));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function wallMs(args: string[]): number {
  const t = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { stdio: 'ignore' });
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}`);
  return Number(process.hrtime.bigint() - t) / 1e6;
}

export function benchColdStart(runs = 15): Record<string, number> {
  if (!existsSync(fileURLToPath(new URL('../dist/cli.mjs', import.meta.url)))) throw new Error('dist/cli.mjs is missing: npm run build');
  const out: Record<string, number> = {};
  for (const [label, args] of [
    ['--help', [bin, '--help']],
    ['--version', [bin, '--version']],
  ] as const) {
    wallMs(['-e', '']);
    wallMs([...args]); // warm the file cache
    const a: number[] = [];
    const b: number[] = [];
    const ratio: number[] = [];
    for (let i = 0; i < runs; i++) {
      b.push(wallMs(['-e', '']));
      a.push(wallMs([...args]));
      ratio.push(a[i] / b[i]);
    }
    out[`whale ${label} wall ms (median)`] = Math.round(median(a));
    out[`node -e "" wall ms (median, beside ${label})`] = Math.round(median(b));
    out[`whale ${label} / node -e "" (median ratio)`] = median(ratio);
  }
  return out;
}
