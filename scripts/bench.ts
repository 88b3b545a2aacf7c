// `npm run bench`: speed figures measured side by side in one run, with the ratios that matter.
// Targets (issue #2, default embedded model at its default context on a 2-core machine):
// training >= 1,500 tokens/s, batched sampling >= 4,000 tokens/s. Cold start (issue #15): `whale --help`
// within 1.5x of `node -e ""`. Harness runtime (issue #14): per-rollout overhead against model-only sampling of the
// embedded model: a process, a worker thread and a vm context per rollout side by side (the context over its pipe and over HTTP).
import { benchColdStart } from './bench-coldstart.js';
import { benchPolicy } from './bench-policy.js';
import { benchRuntime } from './bench-runtime.js';
import { benchTrajectories } from './bench-trajectories.js';

function table(title: string, rows: Record<string, number>): void {
  console.log(`\n${title}`);
  const width = Math.max(...Object.keys(rows).map((k) => k.length));
  for (const [k, v] of Object.entries(rows)) console.log(`  ${k.padEnd(width)}  ${Number.isInteger(v) ? v : v.toFixed(3)}`);
}

table('CLI cold start (bundle, side by side with node -e "")', benchColdStart());
const policy = await benchPolicy();
table('embedded policy (tfjs-wasm)', policy);
const runtime = await benchRuntime();
table(
  "harness runtime: a process, a worker thread and a vm context per rollout (its calls on its pipe, and over HTTP), against model-only sampling of the embedded model; and a search's shape",
  runtime,
);
table('open one trajectory of N in the editor (byte-offset index vs read-all)', await benchTrajectories());
process.exit(0);
