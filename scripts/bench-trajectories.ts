// Opening one trajectory out of N in the editor: the byte-offset index (archive/jsonlIndex.ts)
// against the naive way (read the whole file, parse and validate every line, as
// ResultStore.loadTrajectories does), both ending in the rendered transcript. Cold = the index is
// built in this call; warm = it is cached (size and mtime unchanged), as for every open after the
// first. Standalone:
//   node --import tsx scripts/bench-trajectories.ts [N]
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { clearJsonlIndexCache, indexJsonl, readTrajectoryAt } from '../src/archive/jsonlIndex.js';
import { TrajectorySchema } from '../src/core/trajectory.js';
import { renderTranscript } from '../src/report/transcript.js';
import { synthetic } from '../test/support/syntheticTrajectory.js';

const ms = (f: () => unknown) => {
  const t = performance.now();
  f();
  return performance.now() - t;
};
const msAsync = async (f: () => Promise<unknown>) => {
  const t = performance.now();
  await f();
  return performance.now() - t;
};

export async function benchTrajectories(n = 5000): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'whale-bench-traj-'));
  try {
    const file = join(dir, 'trajectories.jsonl');
    writeFileSync(file, Array.from({ length: n }, (_, i) => JSON.stringify(synthetic(i))).join('\n') + '\n');
    const target = Math.floor(n * 0.73);
    const naive = ms(() => {
      const all = readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => TrajectorySchema.parse(JSON.parse(l)));
      renderTranscript(all[target]);
    });
    clearJsonlIndexCache();
    const cold = await msAsync(async () => renderTranscript(readTrajectoryAt(await indexJsonl(file), target)));
    const warm = await msAsync(async () => renderTranscript(readTrajectoryAt(await indexJsonl(file), target - 1)));
    return {
      trajectories: n,
      'file MB': Math.round(statSync(file).size / 1e5) / 10,
      'naive read-all + render (ms)': Math.round(naive),
      'indexed, cold: index + read one + render (ms)': Math.round(cold),
      'indexed, warm: read one + render (ms)': Math.round(warm * 10) / 10,
      'naive / cold': Math.round((naive / cold) * 10) / 10,
      'naive / warm': Math.round(naive / warm),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(await benchTrajectories(Number(process.argv[2] ?? 5000)));
}
