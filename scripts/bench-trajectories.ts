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
import { TrajectorySchema, type ModelCall, type Trajectory } from '../src/core/trajectory.js';
import { renderTranscript } from '../src/report/transcript.js';

/** A four-turn tool-using rollout of realistic size (token ids and logprobs included). */
function synthetic(i: number): Trajectory {
  const sys = { role: 'system' as const, content: 'You are a careful assistant. Use search NAME to look things up, then answer VALUE. '.repeat(3) };
  const messages: ModelCall['messages'] = [sys, { role: 'user', content: `Question ${i}: what is the capital of region ${i % 97}?` }];
  const calls: ModelCall[] = [];
  for (let c = 0; c < 4; c++) {
    const completion = c < 3 ? `search region ${i % 97} part ${c}` : `answer City${i % 13}`;
    const ids = Array.from({ length: 40 + 10 * c }, (_, k) => (k * 7 + i) % 500);
    calls.push({ index: c, policyVersion: 'v3', messages: [...messages], params: { temperature: 1 }, completion, finishReason: 'stop', promptTokenIds: ids, completionTokenIds: ids.slice(0, 8), logprobs: ids.slice(0, 8).map((k) => -k / 250), usage: { promptTokens: ids.length, completionTokens: 8 }, latencyMs: 12, t: 100 * c });
    messages.push({ role: 'assistant', content: completion }, { role: 'tool', content: `Result ${c}: region ${i % 97} borders ${'several other regions, '.repeat(4)}`, name: 'search' });
  }
  return {
    id: `bench-${i}`, runId: 'bench', phase: '1', domain: 'kbqa', harnessHash: 'ab'.repeat(20), policyVersion: 'v3', taskId: `task-${i % 500}`, split: 'harness', sampleIndex: Math.floor(i / 500), seed: i,
    modelCalls: calls,
    events: calls.slice(0, 3).map((c, k) => ({ t: 100 * k + 50, type: 'tool' as const, name: 'search', args: { q: c.completion }, observation: 'Result' })),
    finalAnswer: `City${i % 13}`, termination: 'answered', verdict: { pass: i % 3 === 0, score: i % 3 === 0 ? 1 : 0, extracted: `city${i % 13}`, reason: i % 3 === 0 ? 'correct' : 'wrong city' },
    timings: { startedAt: '2026-11-29T00:00:00.000Z', wallMs: 900, modelMs: 48, toolMs: 3 },
  };
}

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
      const all = readFileSync(file, 'utf8').split('\n').filter((l) => l.trim()).map((l) => TrajectorySchema.parse(JSON.parse(l)));
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
