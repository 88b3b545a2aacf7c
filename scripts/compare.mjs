// The method comparison of issues #3 and #14 on the embedded default, the one reproducible entry:
// every method × domain × seed × budget mode in one run store, then `whale report` (tables, the
// best-so-far curves, rollouts to reach weight-only's peak, diagnostics) and a summary committed to
// docs/results/ (compare-summary.json and .md: mean ± sd over seeds of best validation and the sealed
// test of the same pair, per domain × mode × method, the proposer, rollouts, and the commit and
// command that produced the runs). 'equal-total': each run gets the same budget of training + search
// rollouts; 'matched-steps' (the paper): each method gets WHALE's RSFT steps, search on top. WHALE
// runs `--cycles` cycles of E `--epochs` and I `--iterations` (default 4 × (E 0.5: 8 steps × 256
// rollouts, I 3: M 3 on 16 harness tasks = 112 rollouts), so search is ≈ 5% of a cycle as in the paper).
//
// `--grid` runs WHALE instead over (E, I) cells on one domain (`--grid-domain`, default the last of
// --domains), each cell a fixed schedule under the same equal-total budget (cycles until it runs
// out), in the same store (the cell at the comparison's (E, I) is its WHALE run, not run twice);
// the report and the summary then add the grid (heatmaps, a table per cell).
//
// Resumable: finished runs (run_completed and a sealed test) are skipped; a run that was killed or
// failed is resumed where it stopped (`whale run --run ID`), so the script can be stopped and started
// again. `--summary-only` regenerates the report and the summary from the run store alone.
//
//   node scripts/compare.mjs [--seeds 0,1,2] [--domains kbqa,ramble,kbchain] [--methods whale,...] [--jobs 2]
//                            [--modes equal-total,matched-steps] [--budget N] [--val 96] [--test 192]
//                            [--weight 512] [--cycles 4] [--epochs 0.5] [--iterations 3] [--start weight|harness] [--harness-tasks 16]
//                            [--grid [--grid-domain D] [--grid-epochs 0.25,0.5,1] [--grid-iterations 3,6]]
//                            [--dir .whale-demo/compare] [--results docs/results] [--draw 0] [--summary-only] [--dry-run] [--help]
//   (--start harness: every cycle of whale, fst, adaptive and stagewise searches first, then trains (projects `<domain>…-harness-first`);
//    --budget: rollouts of an equal-total run, default WHALE's cycles × cycle cost rounded up to 100;
//    --val/--test/--weight: task counts of the splits; --draw: which tasks; the same N makes the same tasks in any folder)
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/** parseArgs, with an unknown or malformed option said plainly (exit 2, no stack trace). */
function parseOptions(config) {
  try {
    return parseArgs(config);
  } catch (e) {
    console.error(`compare.mjs: (command line): ${e.message} (node scripts/compare.mjs --help lists the options)`);
    process.exit(2);
  }
}

const { values } = parseOptions({
  options: {
    seeds: { type: 'string', default: '0,1,2' },
    domains: { type: 'string', default: 'kbqa,ramble,kbchain' },
    methods: { type: 'string', default: 'whale,adaptive,stagewise,weight-only,harness-only,fst' },
    jobs: { type: 'string', default: '2' },
    modes: { type: 'string', default: 'equal-total,matched-steps' },
    budget: { type: 'string' },
    val: { type: 'string', default: '96' },
    test: { type: 'string', default: '192' },
    dir: { type: 'string', default: '.whale-demo/compare' },
    weight: { type: 'string', default: '512' },
    cycles: { type: 'string', default: '4' },
    epochs: { type: 'string', default: '0.5' },
    iterations: { type: 'string', default: '3' },
    start: { type: 'string', default: 'weight' },
    'harness-tasks': { type: 'string', default: '16' },
    grid: { type: 'boolean', default: false },
    'grid-domain': { type: 'string' },
    'grid-epochs': { type: 'string', default: '0.25,0.5,1' },
    'grid-iterations': { type: 'string', default: '3,6' },
    results: { type: 'string', default: 'docs/results' },
    retries: { type: 'string', default: '1' },
    draw: { type: 'string', default: '0' },
    'summary-only': { type: 'boolean', default: false },
    'dry-run': { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  // The help is this file's opening comment: one text for whoever reads the code and whoever asks.
  const lines = readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n');
  console.log(
    lines
      .slice(
        0,
        lines.findIndex((l) => !l.startsWith('//')),
      )
      .map((l) => l.replace(/^\/\/ ?/, ''))
      .join('\n'),
  );
  process.exit(0);
}

// ---- the experiment's constants and options ------------------------------------------------------

const RSFT = { batchPrompts: 32, groupSize: 8, learningRate: 1e-4, minibatch: 8, loss: 'token-mean' };
const SEARCH = { proposer: 'knob', candidatesPerRound: 3, acceptance: 'archive-best' };
const EVALUATION = { k: 4, split: 'val', seed: 0, concurrency: 32 };

function fail(field, message) {
  console.error(`compare.mjs: ${field}: ${message}`);
  process.exit(2);
}
const list = (field) =>
  values[field]
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
function positive(field, { integer = false } = {}) {
  const x = Number(values[field]);
  if (!Number.isFinite(x) || x <= 0 || (integer && !Number.isInteger(x)))
    fail(`--${field}`, `must be a positive ${integer ? 'integer' : 'number'}, got '${values[field]}'`);
  return x;
}
function numbers(field, { integer = false } = {}) {
  return list(field).map((v) => {
    const x = Number(v);
    if (!Number.isFinite(x) || x <= 0 || (integer && !Number.isInteger(x))) fail(`--${field}`, `'${v}' is not a positive ${integer ? 'integer' : 'number'}`);
    return x;
  });
}

const sizes = { weight: positive('weight', { integer: true }), val: positive('val', { integer: true }), test: positive('test', { integer: true }) };
const harnessTasks = positive('harness-tasks', { integer: true });
const main = { epochs: positive('epochs'), iterations: positive('iterations', { integer: true }), cycles: positive('cycles', { integer: true }) };
const seeds = list('seeds').map((s) => {
  if (!/^-?\d+$/.test(s)) fail('--seeds', `'${s}' is not an integer`);
  return s;
});
const jobCount = positive('jobs', { integer: true });
if (!/^\d+$/.test(values.draw)) fail('--draw', `must be a non-negative integer, got '${values.draw}'`);
const retries = Number(values.retries);
if (!Number.isInteger(retries) || retries < 0) fail('--retries', `must be a non-negative integer, got '${values.retries}'`);
const METHODS = ['whale', 'adaptive', 'stagewise', 'weight-only', 'harness-only', 'fst'];
const MODES = ['equal-total', 'matched-steps'];
for (const m of list('methods')) if (!METHODS.includes(m)) fail('--methods', `unknown method '${m}' (one of ${METHODS.join(', ')})`);
for (const m of list('modes')) if (!MODES.includes(m)) fail('--modes', `unknown budget mode '${m}' (one of ${MODES.join(', ')})`);
if (!['weight', 'harness'].includes(values.start)) fail('--start', `must be 'weight' or 'harness', got '${values.start}'`);
/** schedule.start, written only when it is not the default, so the configs of weight-first comparisons stay as they were. */
const start = values.start === 'harness' ? { start: 'harness' } : {};

/** Rollouts of one WHALE cycle (E, I): RSFT steps × B × G, plus M candidates × harness tasks per proposal round and the seed's re-score. */
function cycleCost({ epochs, iterations }) {
  const steps = Math.max(1, Math.ceil((epochs * sizes.weight) / RSFT.batchPrompts - 1e-9));
  return steps * RSFT.batchPrompts * RSFT.groupSize + harnessTasks * (1 + (iterations - 1) * SEARCH.candidatesPerRound);
}
const budget = values.budget !== undefined ? positive('budget', { integer: true }) : Math.ceil((main.cycles * cycleCost(main)) / 100) * 100;

const root = fileURLToPath(new URL('..', import.meta.url));
const whale = join(root, 'bin', 'whale.js');
const base = resolve(root, values.dir);
const store = join(base, '.whale');
// kbchain's habits (rambling in every call, rare chaining) are in its continued checkpoint (src/domains/README.md).
const MODEL = { kbchain: 'kbchain' };
const name = 'compare';
/** The comparison's own WHALE schedule: a grid cell with this (E, I) is the comparison's run itself. */
const mainCell = { epochs: main.epochs, iterations: main.iterations };
const provenanceFile = join(store, 'compare-provenance.jsonl');

// ---- the task draw -------------------------------------------------------------------------------
// The toy domains generate their tasks from the store's secret (src/archive/projectSecret.ts), which
// `whale` draws at random. A comparison derives it from --draw instead, so the same command in a new
// folder makes the same tasks and its figures can be reproduced; another --draw is another sample
// of tasks. A store that already has a secret keeps it (runs in it were made on its tasks).
const sha256 = (s) => createHash('sha256').update(s).digest('hex');
const drawSecret = (n) => sha256(`whale-compare-draw:${n}`);
const secretFile = join(store, 'secret');
function ensureDraw() {
  if (existsSync(secretFile)) {
    const { draw, secretSha256 } = drawOf();
    if (draw !== values.draw)
      console.error(
        `compare.mjs: the store's tasks come from ${draw === null ? `a secret drawn at random (sha256 ${secretSha256}…)` : `draw ${draw}`}, not --draw ${values.draw}: its runs continue on them (another --dir for other tasks)`,
      );
    return;
  }
  mkdirSync(store, { recursive: true });
  writeFileSync(secretFile, drawSecret(values.draw) + '\n', { mode: 0o600, flag: 'wx' });
}
/** Which tasks the store's runs were made on: the draw its secret came from, or a fingerprint of a secret drawn at random. */
function drawOf() {
  if (!existsSync(secretFile)) return { draw: null, secretSha256: null };
  const secret = readFileSync(secretFile, 'utf8').trim();
  const draw =
    readJsonl(provenanceFile).find((p) => typeof p.draw === 'string' && drawSecret(p.draw) === secret)?.draw ??
    (drawSecret(values.draw) === secret ? values.draw : null);
  return { draw, secretSha256: sha256(secret).slice(0, 12) };
}

// ---- projects: one folder per (domain, mode) or grid cell, all sharing the store ---------------------
// The grid's runs live in the comparison's store: its cell at the comparison's (E, I) is the
// comparison's WHALE run, the phases that cells share are cached rather than paid twice, and one
// `whale report` draws the curves, the reach and the grid together.

const sameCell = (a, b) => a.epochs === b.epochs && a.iterations === b.iterations;

/** The project folder and config of (domain, mode, (E, I)), as this invocation's options make it. */
function projectConfig(domain, mode, cell = mainCell) {
  const grid = !sameCell(cell, mainCell);
  const folder = grid ? `${domain}-E${cell.epochs}-I${cell.iterations}` : mode === 'equal-total' ? domain : `${domain}-${mode}`;
  const dir = join(base, values.start === 'harness' ? `${folder}-harness-first` : folder);
  const schedule = grid
    ? // A grid cell: cycles until the equal-total budget runs out (it cuts the last one short), so
      // every cell spends the same rollouts.
      { epochs: cell.epochs, iterations: cell.iterations, cycles: Math.max(1, Math.ceil(budget / cycleCost(cell))), ...start }
    : // Adaptive: T_min, W, P_w 0.2 epoch, J_min 3, P_h 2 (defaults); stagewise: WHALE's totals (E* cycles × E, I* 1 + cycles × (I − 1)).
      { epochs: main.epochs, iterations: main.iterations, cycles: main.cycles, ...start };
  const config = {
    name: `${name}-${domain}`,
    domain: { id: domain, options: { sizes } },
    harness: 'harnesses/h0',
    ...(MODEL[domain] ? { backend: { kind: 'embedded', model: MODEL[domain] } } : {}),
    store: relative(dir, store),
    evaluation: EVALUATION,
    rsft: RSFT,
    search: { ...SEARCH, harnessTasks },
    schedule,
    budget: mode === 'equal-total' ? { mode, rollouts: budget } : { mode },
  };
  return { dir, config };
}

function project(domain, mode, cell) {
  const { dir, config } = projectConfig(domain, mode, cell);
  const file = join(dir, 'whale.config.json');
  const text = JSON.stringify(config, null, 2) + '\n';
  // A project whose config differs (other options than last time) is rewritten: a new run reads it;
  // an unfinished run resumes from its own snapshot, whatever the file says.
  if (!existsSync(file) || readFileSync(file, 'utf8') !== text) {
    mkdirSync(dir, { recursive: true });
    if (!existsSync(join(dir, 'harnesses', 'h0')))
      cpSync(join(root, 'resources', 'harnesses', `${domain}-h0`), join(dir, 'harnesses', 'h0'), { recursive: true });
    writeFileSync(file, text);
  }
  return file;
}

// ---- the run store: which runs exist, finished or not ----------------------------------------------

function readJsonl(file) {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      try {
        return JSON.parse(l);
      } catch {
        return {}; // a line cut by a kill
      }
    });
}

const cellKey = (c = mainCell) => `E${c.epochs}-I${c.iterations}`;
const keyOf = (j) => `${j.mode}/${j.domain}/${j.method}/${j.seed}/${cellKey(j.cell)}`;

/** The first setting where a run's config snapshot differs from what this invocation would run ('' when none). */
function differs(intended, snapshot, path = '') {
  for (const [k, v] of Object.entries(intended)) {
    if (path === '' && (k === 'name' || k === 'harness' || k === 'store')) continue;
    const at = path ? `${path}.${k}` : k;
    if (v !== null && typeof v === 'object') {
      const d = typeof snapshot?.[k] === 'object' ? differs(v, snapshot[k], at) : at;
      if (d) return d;
    } else if (snapshot?.[k] !== v) return at;
  }
  return '';
}

/**
 * Runs in the store by key: { id, finished, progress } — the most advanced one when a key has several —
 * and the runs made with other settings than this invocation's (`mismatched`: they must not be mixed in).
 */
function storeRuns() {
  const out = new Map();
  out.mismatched = [];
  const runs = join(store, 'runs');
  if (!existsSync(runs)) return out;
  for (const id of readdirSync(runs).sort()) {
    let cfg;
    try {
      cfg = JSON.parse(readFileSync(join(runs, id, 'config.json'), 'utf8'));
    } catch {
      continue; // not a run (or its snapshot is being written)
    }
    const entries = readJsonl(join(runs, id, 'journal.jsonl'));
    if (!entries.some((e) => e.type === 'run_started')) continue;
    const cell = { epochs: cfg.schedule?.epochs, iterations: cfg.schedule?.iterations };
    const job = { mode: cfg.budget?.mode ?? 'equal-total', domain: cfg.domain?.id, method: cfg.method, seed: String(cfg.seed), cell };
    const key = keyOf(job);
    // A weight-first config leaves schedule.start out, so differs() cannot see a harness-first run.
    const d = differs(projectConfig(job.domain, job.mode, cell).config, cfg) || ((cfg.schedule?.start ?? 'weight') !== values.start ? 'schedule.start' : '');
    if (d) {
      out.mismatched.push({
        id,
        key,
        setting: d,
        theirs: d === 'schedule.start' ? (cfg.schedule?.start ?? 'weight') : d.split('.').reduce((o, k) => o?.[k], cfg),
        ours: d === 'schedule.start' ? values.start : d.split('.').reduce((o, k) => o?.[k], projectConfig(job.domain, job.mode, cell).config),
      });
      continue;
    }
    const finished = entries.some((e) => e.type === 'run_completed') && entries.some((e) => e.type === 'test_evaluation');
    const progress = entries.length;
    const prev = out.get(key);
    if (!prev || (finished && !prev.finished) || (finished === prev.finished && progress > prev.progress)) out.set(key, { id, finished, progress });
  }
  return out;
}

// ---- the plan --------------------------------------------------------------------------------------

const domains = list('domains');
const gridDomain = values['grid-domain'] ?? domains[domains.length - 1];
const cells = values.grid
  ? numbers('grid-epochs').flatMap((epochs) => numbers('grid-iterations', { integer: true }).map((iterations) => ({ epochs, iterations })))
  : [undefined];
const plan = [];
if (values.grid) {
  for (const seed of seeds) for (const cell of cells) plan.push({ mode: 'equal-total', domain: gridDomain, method: 'whale', seed, cell });
} else {
  for (const mode of list('modes'))
    for (const seed of seeds) for (const domain of domains) for (const method of list('methods')) plan.push({ mode, domain, method, seed });
}

function gitCommit() {
  const head = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' });
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root, encoding: 'utf8' });
  return { commit: head.status === 0 ? head.stdout.trim() : 'unknown', dirty: dirty.status === 0 ? dirty.stdout.trim() !== '' : undefined };
}
const command = ['node', 'scripts/compare.mjs', ...process.argv.slice(2)].join(' ');
const fmtMin = (ms) => `${(ms / 60000).toFixed(1)} min`;

async function runAll() {
  const existing = storeRuns();
  const planned = new Set(plan.map(keyOf));
  const clash = existing.mismatched.filter((m) => planned.has(m.key));
  if (clash.length > 0) {
    // Averaging runs of other budgets, sizes or schedules with these would make the table wrong.
    for (const m of clash.slice(0, 5))
      console.error(
        `compare.mjs: run ${m.id} (${m.key}) in ${store} was made with ${m.setting} = ${JSON.stringify(m.theirs)}, these options give ${JSON.stringify(m.ours)}`,
      );
    fail('--dir', `${clash.length} run(s) in the store were made with other settings; use another --dir (or the options they were made with)`);
  }
  const todo = plan.filter((j) => !existing.get(keyOf(j))?.finished).map((j) => ({ ...j, resume: existing.get(keyOf(j))?.id }));
  const resuming = todo.filter((j) => j.resume).length;
  console.error(
    `compare.mjs: ${plan.length} runs planned, ${plan.length - todo.length} already finished, ${todo.length} to do (${resuming} to resume) in ${store}; ` +
      `budget ${budget} rollouts (equal-total), ${values.grid ? `grid on ${gridDomain}: ${cells.map(cellKey).join(' ')}` : `WHALE ${main.cycles} × (E ${main.epochs}, I ${main.iterations})`}; jobs ${jobCount}`,
  );
  ensureDraw();
  if (values['dry-run']) {
    for (const j of todo) console.error(`  ${keyOf(j)}${j.resume ? ` (resume ${j.resume})` : ''} → ${project(j.domain, j.mode, j.cell)}`);
    return 0;
  }
  mkdirSync(join(base, 'logs'), { recursive: true });
  mkdirSync(store, { recursive: true });
  const { commit, dirty } = gitCommit();
  const t0 = Date.now();
  const walls = [];
  let next = 0;
  let done = 0;
  let failed = 0;
  const inFlight = new Map();
  // Ctrl-C / SIGTERM: no new run starts and each running one stops at its next safe point (whale run's
  // own SIGINT handling: a terminal's Ctrl-C reaches the whole process group, SIGTERM is passed on as
  // SIGINT); a second signal kills them. Either way the next invocation resumes them.
  const children = new Set();
  let stopping = false;
  const onSignal = (signal) => {
    if (stopping) {
      for (const c of children) c.kill('SIGKILL');
      process.exit(130);
    }
    stopping = true;
    console.error(
      `compare.mjs: ${signal}: ${children.size} run(s) stop at their next safe point (${signal} again to kill them); run the script again to resume`,
    );
    if (signal === 'SIGTERM') for (const c of children) c.kill('SIGINT');
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const heartbeat = setInterval(() => {
    for (const [key, f] of inFlight) console.error(`  … ${key}: ${fmtMin(Date.now() - f.t0)} so far${f.last ? `: ${f.last}` : ''}`);
  }, 300_000);
  heartbeat.unref();

  async function once(j, resume) {
    const log = join(base, 'logs', `${keyOf(j).replace(/\//g, '-')}.log`);
    const args = [whale, 'run', '--config', project(j.domain, j.mode, j.cell), '--method', j.method, '--seed', j.seed];
    if (resume) args.push('--run', resume);
    const started = Date.now();
    const flight = { t0: started, last: '' };
    inFlight.set(keyOf(j), flight);
    const { code, runId } = await new Promise((resolve) => {
      const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      children.add(child);
      child.on('exit', () => children.delete(child));
      let runId = resume;
      let tail = '';
      const onData = (d) => {
        appendFileSync(log, d);
        tail = (tail + d).slice(-4000);
        const lines = tail.trim().split('\n');
        flight.last = lines[lines.length - 1].slice(0, 160);
        // The run's id is a line of its own; an error also starts 'whale run: ' but goes on after a space.
        runId ??= /^whale run: (\S+)\r?\n/m.exec(tail)?.[1];
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.on('error', (e) => resolve({ code: -1, runId, error: e.message }));
      child.on('exit', (c, signal) => resolve({ code: c ?? (signal ? `signal ${signal}` : -1), runId }));
    });
    inFlight.delete(keyOf(j));
    const wallMs = Date.now() - started;
    appendFileSync(
      provenanceFile,
      JSON.stringify({
        key: keyOf(j),
        ...j,
        runId,
        resumed: !!resume,
        exit: code,
        wallMs,
        commit,
        dirty,
        command,
        draw: drawOf().draw,
        at: new Date().toISOString(),
      }) + '\n',
    );
    return { code, runId, wallMs, log };
  }

  async function worker() {
    while (next < todo.length && !stopping) {
      const j = todo[next++];
      let r = await once(j, j.resume);
      for (let attempt = 0; r.code !== 0 && r.runId && attempt < retries && !stopping; attempt++) {
        console.error(`compare.mjs: ${keyOf(j)} exited ${r.code}; resuming ${r.runId} (log ${r.log})`);
        r = await once(j, r.runId);
      }
      done++;
      if (r.code !== 0) failed++;
      else walls.push(r.wallMs);
      const mean = walls.length > 0 ? walls.reduce((a, b) => a + b, 0) / walls.length : undefined;
      const left = todo.length - done;
      const eta = mean === undefined ? 'unknown' : fmtMin((mean * left) / jobCount);
      console.error(
        `[${done}/${todo.length}] ${keyOf(j)}${r.runId ? ` (${r.runId})` : ''}: ${r.code === 0 ? 'finished' : `exit ${r.code} (resumable: run the script again)`} in ${fmtMin(r.wallMs)}; ` +
          `elapsed ${fmtMin(Date.now() - t0)}, ${left} left, ETA ${eta}`,
      );
    }
  }
  await Promise.all(Array.from({ length: Math.min(jobCount, Math.max(1, todo.length)) }, worker));
  clearInterval(heartbeat);
  if (stopping) {
    console.error(`compare.mjs: stopped after ${done} run(s); run the same command again to resume`);
    process.exit(130);
  }
  console.error(`compare.mjs: ${done} run(s) in ${fmtMin(Date.now() - t0)}${failed ? `, ${failed} failed (resumable)` : ''}`);
  return failed;
}

// ---- the report and the summary ------------------------------------------------------------------

const pct = (s) =>
  s.n === 0 ? '—' : s.sd === null || !Number.isFinite(s.sd) ? (100 * s.mean).toFixed(1) : `${(100 * s.mean).toFixed(1)} ± ${(100 * s.sd).toFixed(1)}`;
const count = (s) => (s.n === 0 ? '—' : Math.round(s.mean).toLocaleString('en-US'));
/** JSON has no NaN: the report writes it as null. */
const spreadOf = (s) => ({ mean: s?.mean ?? NaN, sd: s?.sd ?? NaN, n: s?.n ?? 0 });

function summarize() {
  const reportDir = join(resolve(root, values.results), name);
  // The report's images are regenerated whole: old runs' training charts must not linger.
  if (existsSync(reportDir)) for (const f of readdirSync(reportDir)) if (/\.(png|svg|md|json)$/.test(f)) rmSync(join(reportDir, f));
  const title = 'WHALE on the embedded default: methods compared';
  const rep = spawnSync(process.execPath, [whale, 'report', '--store', store, '--out', reportDir, '--title', title], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (rep.status !== 0) return rep.status ?? 1;
  const report = JSON.parse(readFileSync(join(reportDir, 'summary.json'), 'utf8'));
  const provenance = readJsonl(provenanceFile);
  const byRun = new Map();
  for (const p of provenance) if (p.runId) byRun.set(p.runId, [...(byRun.get(p.runId) ?? []), p]);
  const commits = [...new Set(provenance.map((p) => `${p.commit}${p.dirty ? ' (uncommitted changes)' : ''}`))];
  const commands = [...new Set(provenance.map((p) => p.command))];
  const runs = report.runs.map((r) => ({
    id: r.id,
    domain: r.domain,
    budgetMode: r.budgetMode,
    method: r.method,
    seed: r.seed,
    cell: r.cell,
    status: r.status,
    bestValidation: r.best?.mean ?? null,
    test: r.test?.mean ?? null,
    trainingRollouts: r.ledger.trainingRollouts,
    searchRollouts: r.ledger.searchRollouts,
    evalRollouts: r.ledger.evalRollouts,
    wallMinutes: r.ledger.wallMs / 60000,
    proposers: r.proposers,
    commits: [...new Set((byRun.get(r.id) ?? []).map((p) => p.commit))],
  }));
  const summary = {
    generated: new Date().toISOString(),
    regenerate: `node scripts/compare.mjs --dir ${values.dir}${values.results === 'docs/results' ? '' : ` --results ${values.results}`} --summary-only`,
    store: store.startsWith(root) ? relative(root, store) : store,
    tasks: drawOf(),
    commits,
    commands,
    rows: report.rows.map((r) => ({
      domain: r.domain,
      budgetMode: r.budgetMode,
      method: r.method,
      label: r.label,
      cell: r.cell,
      seeds: r.n,
      unfinished: r.unfinished,
      schedules: r.schedules,
      cycles: spreadOf(r.cycles),
      proposers: r.proposers,
      k: r.k,
      bestValidation: spreadOf(r.bestValidation),
      test: spreadOf(r.test),
      rsftSteps: spreadOf(r.rsftSteps),
      trainingRollouts: spreadOf(r.trainingRollouts),
      searchRollouts: spreadOf(r.searchRollouts),
      evalRollouts: spreadOf(r.evalRollouts),
      wallMinutes: spreadOf(r.wallMinutes),
      toReachWeightOnlyPeak: r.toReachWeightOnlyPeak ?? null,
      runs: r.runs,
    })),
    domains: report.domains,
    grids: report.grids,
    runs,
  };
  mkdirSync(resolve(root, values.results), { recursive: true });
  const jsonFile = join(resolve(root, values.results), `${name}-summary.json`);
  writeFileSync(jsonFile, JSON.stringify(summary, null, 2) + '\n');

  const md = [];
  md.push(`# ${title}: summary`, '');
  md.push(
    `Generated ${summary.generated.replace(/\.\d+Z$/, 'Z')} from the run store \`${summary.store}\` (${runs.length} runs); regenerate with \`${summary.regenerate}\`.`,
    '',
  );
  md.push(`- Commit(s) that ran them: ${commits.length ? commits.map((c) => `\`${c}\``).join(', ') : 'not recorded'}`);
  md.push(`- Command(s): ${commands.length ? commands.map((c) => `\`${c}\``).join('; ') : 'not recorded'}`);
  md.push(
    `- Tasks: ${summary.tasks.draw !== null ? `draw ${summary.tasks.draw} (\`--draw ${summary.tasks.draw}\`: the same command in a new folder makes the same tasks)` : 'a secret drawn at random (a store made before `--draw`): another run of the command makes other tasks'}${summary.tasks.secretSha256 ? `; the store's secret has sha256 ${summary.tasks.secretSha256}…` : ''}`,
  );
  md.push(`- The full report with the figures: [${name}/report.md](${name}/report.md)`, '');
  md.push(
    'Values are mean ± sample standard deviation over seeds (%, mean@k); the sealed test is of the pair that the best validation selected. Rollouts: training (RSFT) + search, per run (mean). Cycles: weight + harness cycles completed. Wall: minutes per run (mean).',
    '',
  );
  md.push(
    "| domain | budget | method | schedule as run | seeds | best validation | sealed test | cycles | proposer | rollouts: training + search | to reach weight-only's peak | wall min |",
  );
  md.push('|---|---|---|---|---:|---:|---:|---:|---|---:|---:|---:|');
  for (const r of summary.rows)
    md.push(
      `| ${r.domain} | ${r.budgetMode} | ${r.label} | ${r.schedules.join(' / ')} | ${r.seeds}${r.unfinished ? ` (${r.unfinished} unfinished)` : ''} | ${pct(r.bestValidation)} | ${pct(r.test)} | ${count(r.cycles)} | ${r.proposers.join(', ') || '—'} | ${count(r.trainingRollouts)} + ${count(r.searchRollouts)} | ${r.toReachWeightOnlyPeak === null ? (r.method === 'weight-only' || !summary.domains.find((d) => d.domain === r.domain && d.budgetMode === r.budgetMode)?.weightOnlyPeak ? '—' : 'not reached') : Math.round(r.toReachWeightOnlyPeak).toLocaleString('en-US')} | ${r.wallMinutes.n ? r.wallMinutes.mean.toFixed(1) : '—'} |`,
    );
  md.push('');
  for (const g of summary.grids ?? []) {
    md.push(`## (E, I) grid: ${g.method} on ${g.domain} (${g.budgetMode})`, '');
    md.push('| E | I | seeds | sealed test | best validation | rollouts | cycles |', '|---:|---:|---:|---:|---:|---:|---:|');
    for (const c of g.cells)
      md.push(
        `| ${c.epochs} | ${c.iterations} | ${c.n}${c.unfinished ? ` (${c.unfinished} unfinished)` : ''} | ${pct(spreadOf(c.test))} | ${pct(spreadOf(c.bestValidation))} | ${count(spreadOf(c.rollouts))} | ${count(spreadOf(c.cycles))} |`,
      );
    md.push('');
    // The issue's question: is adaptive within the spread of the best fixed schedule? Both are here.
    const adaptive = summary.rows.find((r) => r.domain === g.domain && r.budgetMode === g.budgetMode && r.method === 'adaptive');
    if (adaptive)
      md.push(
        `Adaptive on the same domain and budget: sealed test ${pct(adaptive.test)}, best validation ${pct(adaptive.bestValidation)} (${adaptive.seeds} seeds).`,
        '',
      );
  }
  const walls = runs.filter((r) => r.status === 'completed').map((r) => r.wallMinutes);
  if (walls.length)
    md.push(
      `Wall time per completed run: mean ${(walls.reduce((a, b) => a + b, 0) / walls.length).toFixed(1)} min, max ${Math.max(...walls).toFixed(1)} min; ${walls.reduce((a, b) => a + b, 0).toFixed(0)} run-minutes in all.`,
      '',
    );
  writeFileSync(join(resolve(root, values.results), `${name}-summary.md`), md.join('\n'));
  console.error(`compare.mjs: summary ${relative(root, jsonFile)} and ${name}-summary.md; report ${relative(root, reportDir)}/report.md`);
  return 0;
}

const failed = values['summary-only'] ? 0 : await runAll();
if (values['dry-run']) process.exit(0);
if (!existsSync(join(store, 'runs'))) fail('--dir', `no run store at ${store} (nothing has run yet)`);
const rc = summarize();
process.exit(rc !== 0 ? rc : failed > 0 ? 1 : 0);
