// `npm start`: the main job on the embedded default. Evaluates the shipped harnesses with the shipped
// base policy on both toy domains (validation split, mean@k ± standard error) — the two regimes
// WHALE is built for: kbqa is harness-dominated (a better harness lifts it), ramble is
// weight-dominated (no harness helps; the weights must change). Results are cached in .whale/, so a
// second run answers at once. (The full alternating run, `whale run`, arrives with issue #3.)
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const whale = fileURLToPath(new URL('../bin/whale.js', import.meta.url));
const k = process.env.WHALE_DEMO_K ?? '4';
const runs = [
  ['kbqa', 'resources/harnesses/kbqa-h0'],
  ['kbqa', 'resources/harnesses/kbqa-good'],
  ['ramble', 'resources/harnesses/ramble-h0'],
];
const rows = [];
for (const [domain, harness] of runs) {
  console.error(`\n== whale eval --domain ${domain} --harness ${harness} --split val --k ${k}`);
  const r = spawnSync(process.execPath, [whale, 'eval', '--domain', domain, '--harness', harness, '--split', 'val', '--k', k, '--json'], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  if (r.status !== 0) process.exit(r.status ?? 1);
  const s = JSON.parse(r.stdout);
  rows.push({ domain, harness: harness.split('/').pop(), meanAtK: s.meanAtK, se: s.standardError, rollouts: s.rollouts, cacheHit: s.cacheHit });
}
console.log(`\n| domain | harness | mean@${k} (val) | ± se | rollouts | from cache |`);
console.log('|---|---|---|---|---|---|');
for (const r of rows) console.log(`| ${r.domain} | ${r.harness} | ${(100 * r.meanAtK).toFixed(1)}% | ${(100 * r.se).toFixed(1)} | ${r.rollouts} | ${r.cacheHit ? 'yes' : 'no'} |`);
