// The method comparison of issue #3 on the embedded default: every method × both toy domains ×
// seeds × budget modes, in one run store, then one report (`whale report`) with the method table
// and the curves. 'equal-total': each run gets the same budget of training + search rollouts;
// 'matched-steps' (the paper): each method gets WHALE's RSFT steps, search on top. WHALE runs 4
// cycles of E 0.5 (8 steps × 256 rollouts) and I 3 (M 3 on 16 harness tasks: 112 rollouts), so
// search is ≈ 5% of a cycle as in the paper. Runs already finished are skipped (cached), so the
// script can be stopped and started again.
//
//   node scripts/compare.mjs [--seeds 0,1,2] [--domains kbqa,ramble,kbchain] [--methods whale,...] [--jobs 2]
//                            [--modes equal-total,matched-steps] [--budget 8700] [--val 96] [--test 192]
//                            (--budget: rollouts of an equal-total run; --val/--test: task counts)
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync, cpSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    seeds: { type: 'string', default: '0,1,2' },
    domains: { type: 'string', default: 'kbqa,ramble,kbchain' },
    methods: { type: 'string', default: 'whale,adaptive,stagewise,weight-only,harness-only,fst' },
    jobs: { type: 'string', default: '2' },
    modes: { type: 'string', default: 'equal-total,matched-steps' },
    budget: { type: 'string', default: '8700' },
    val: { type: 'string', default: '96' },
    test: { type: 'string', default: '192' },
    dir: { type: 'string', default: '.whale-demo/compare' },
  },
});
const root = fileURLToPath(new URL('..', import.meta.url));
const whale = join(root, 'bin', 'whale.js');
const base = join(root, values.dir);
const store = join(base, '.whale');
// kbchain's habits (rambling in every call, rare chaining) are in its continued checkpoint (src/domains/README.md).
const MODEL = { kbchain: 'kbchain' };

function project(domain, mode) {
  const dir = join(base, mode === 'equal-total' ? domain : `${domain}-${mode}`);
  if (existsSync(join(dir, 'whale.config.json'))) return dir;
  mkdirSync(dir, { recursive: true });
  cpSync(join(root, 'resources', 'harnesses', `${domain}-h0`), join(dir, 'harnesses', 'h0'), { recursive: true });
  writeFileSync(
    join(dir, 'whale.config.json'),
    JSON.stringify(
      {
        name: `compare-${domain}`,
        domain: { id: domain, options: { sizes: { weight: 512, val: Number(values.val), test: Number(values.test) } } },
        harness: 'harnesses/h0',
        ...(MODEL[domain] ? { backend: { kind: 'embedded', model: MODEL[domain] } } : {}),
        store: '../.whale',
        evaluation: { k: 4, split: 'val', seed: 0, concurrency: 32 },
        rsft: { batchPrompts: 32, groupSize: 8, learningRate: 1e-4, minibatch: 8, loss: 'token-mean' },
        search: { proposer: 'knob', candidatesPerRound: 3, acceptance: 'archive-best', harnessTasks: 16 },
        // Adaptive: T_min, W, P_w 0.2 epoch, J_min 3, P_h 2 (defaults); stagewise: WHALE's totals (E* 2, I* 9).
        schedule: { epochs: 0.5, iterations: 3, cycles: 4 },
        budget: mode === 'equal-total' ? { mode, rollouts: Number(values.budget) } : { mode },
      },
      null,
      2,
    ) + '\n',
  );
  return dir;
}

/** Runs already finished in the store, by "domain/method/seed". */
function finished() {
  const done = new Set();
  const runs = join(store, 'runs');
  if (!existsSync(runs)) return done;
  for (const id of readdirSync(runs)) {
    const f = join(runs, id, 'journal.jsonl');
    if (!existsSync(f)) continue;
    const lines = readFileSync(f, 'utf8')
      .trim()
      .split('\n')
      .map((l) => {
        try {
          return JSON.parse(l);
        } catch {
          return {};
        }
      });
    const start = lines.find((e) => e.type === 'run_started');
    let mode = 'equal-total';
    try {
      mode = JSON.parse(readFileSync(join(runs, id, 'config.json'), 'utf8')).budget?.mode ?? mode;
    } catch {
      /* no snapshot: an old run */
    }
    if (start && lines.some((e) => e.type === 'run_completed') && lines.some((e) => e.type === 'test_evaluation'))
      done.add(`${mode}/${start.domain}/${start.method}/${start.seed}`);
  }
  return done;
}

const jobs = [];
const done = finished();
for (const mode of values.modes.split(','))
  for (const seed of values.seeds.split(','))
    for (const domain of values.domains.split(','))
      for (const method of values.methods.split(',')) {
        if (!done.has(`${mode}/${domain}/${method}/${seed}`)) jobs.push({ mode, domain, method, seed });
      }
console.error(`${jobs.length} runs to do (${done.size} already finished) in ${store}`);
mkdirSync(join(base, 'logs'), { recursive: true });
let next = 0;
async function worker() {
  while (next < jobs.length) {
    const j = jobs[next++];
    const t0 = Date.now();
    const log = join(base, 'logs', `${j.mode}-${j.domain}-${j.method}-${j.seed}.log`);
    const code = await new Promise((resolve) => {
      const child = spawn(
        process.execPath,
        [whale, 'run', '--config', join(project(j.domain, j.mode), 'whale.config.json'), '--method', j.method, '--seed', j.seed],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      child.on('exit', (c) => {
        writeFileSync(log, out);
        resolve(c);
      });
    });
    console.error(`${j.mode} ${j.domain} ${j.method} seed ${j.seed}: exit ${code} in ${((Date.now() - t0) / 60000).toFixed(1)} min (log ${log})`);
  }
}
await Promise.all(Array.from({ length: Number(values.jobs) }, worker));
const r = spawnSync(process.execPath, [whale, 'report', '--store', store, '--title', 'WHALE on the embedded default: methods compared'], { stdio: 'inherit' });
process.exit(r.status ?? 1);
