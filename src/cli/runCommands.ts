import { RunStore } from '../archive/runStore.js';
import { chosenWhere } from '../core/phaseLabels.js';
import { METHODS, type Method } from '../core/config.js';
import { InputError, WhaleError } from '../core/errors.js';
import { domainH0Dir } from '../domains/index.js';
import { Engine, type EngineProject, type StepOutcome } from '../engine/engine.js';
import { foldRun } from '../archive/runState.js';
import { Journal } from '../archive/journal.js';
import type { Values } from './command.js';
import { Progress } from './progress.js';
import { hideApiKeys, intFlag, resolveProject, resolveStoreDir } from './project.js';

function engineProject(values: Values): EngineProject {
  const p = resolveProject(values, { harness: domainH0Dir });
  hideApiKeys(p.config);
  const config = { ...p.config };
  if (typeof values.method === 'string') {
    if (!(METHODS as readonly string[]).includes(values.method))
      throw new InputError({ file: '(command line)', field: '--method' }, `must be one of ${METHODS.join(', ')}`);
    config.method = values.method as Method;
  }
  const seed = intFlag(values, 'seed');
  if (seed !== undefined) config.seed = seed;
  const budget = intFlag(values, 'budget-rollouts');
  if (budget !== undefined) config.budget = { ...config.budget, rollouts: budget };
  return { config, configFile: p.configFile ?? '(flags)', root: p.root, storeDir: p.storeDir };
}

/** Progress lines for the terminal: one Progress per label, so each evaluation gets its own rate and ETA. */
function terminalHooks() {
  let current: { label: string; p: Progress } | undefined;
  const ac = new AbortController();
  const onSignal = () => {
    console.error('\nwhale: stopping at the next safe point (Ctrl-C again to kill; the run can be resumed)');
    ac.abort();
    process.once('SIGINT', () => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return {
    signal: ac.signal,
    log: (line: string) => console.error(line),
    progress: (label: string, done: number, total: number) => {
      if (!current || current.label !== label) current = { label, p: new Progress(label) };
      current.p.update(done, total);
    },
  };
}

/** The outcome on stdout: text, or with --json one object {runId, reason, phasesRun, state}. */
function report(values: Values, o: StepOutcome, runId: string): void {
  if (values.json) console.log(JSON.stringify({ runId, reason: o.reason, phasesRun: o.phasesRun, state: o.state }, null, 2));
  else summarise(o, runId);
}

function summarise(o: StepOutcome, runId: string): void {
  const s = o.state;
  const l = s.ledger;
  console.log(`run ${runId}: ${o.reason}`);
  console.log(`  policy ${s.version}, harness ${s.harness.slice(0, 12)}, phases completed ${s.nextPhase}`);
  if (s.best) console.log(`  best pair on validation: ${(100 * s.best.mean).toFixed(1)}% ± ${(100 * s.best.se).toFixed(1)} (${chosenWhere(s.best.phase)})`);
  if (s.test) console.log(`  sealed test of the best pair: mean@${s.test.k} ${(100 * s.test.mean).toFixed(1)}% ± ${(100 * s.test.se).toFixed(1)}`);
  console.log(
    `  ledger: training ${l.trainingRollouts}, search ${l.searchRollouts}, evaluation ${l.evalRollouts} rollouts; proposer $${l.proposerDollars.toFixed(2)}; wall ${(l.wallMs / 1000).toFixed(0)} s`,
  );
  if (s.infraFailures)
    console.log(
      `  infrastructure failures: ${s.infraFailures} unit(s) stopped by a backend, tool service or verifier failure (not scored; resumed by --resume)`,
    );
}

async function openOrCreate(values: Values, hooks: ReturnType<typeof terminalHooks>): Promise<Engine> {
  const project = engineProject(values);
  const runs = new RunStore(project.storeDir);
  const resume = values.resume;
  if (typeof values.run === 'string') return Engine.open(project, values.run, hooks);
  if (resume) {
    const id = runs.current();
    if (!id) throw new WhaleError(`nothing to resume: no current run in ${runs.runsDir()}`);
    return Engine.open(project, id, hooks);
  }
  return Engine.create(project, hooks);
}

export async function runRun(values: Values): Promise<number> {
  const hooks = terminalHooks();
  const engine = await openOrCreate(values, hooks);
  console.error(`whale run: ${engine.runId}`);
  return runAndReport(engine, values);
}

export async function runStep(values: Values): Promise<number> {
  const hooks = terminalHooks();
  const project = engineProject(values);
  const current = new RunStore(project.storeDir).current();
  const engine =
    values.new || (!current && typeof values.run !== 'string')
      ? await Engine.create(project, hooks)
      : await Engine.open(project, typeof values.run === 'string' ? values.run : current!, hooks);
  return runAndReport(engine, values, { maxPhases: 1 });
}

/** 128 + SIGINT, as shells report a command stopped by Ctrl-C. */
const EXIT_INTERRUPTED = 130;

/** Runs the engine and prints the outcome; a failure is recorded in the run before it propagates, and the engine always closes. */
async function runAndReport(engine: Engine, values: Values, opts?: Parameters<Engine['run']>[0]): Promise<number> {
  try {
    report(values, await engine.run(opts), engine.runId);
    return 0;
  } catch (e) {
    if (engine.interrupted) {
      // Ctrl-C or SIGTERM cut a unit short (a training call or an evaluation aborts with the signal):
      // what finished before it is journaled or cached, so this is a stop, not a crash.
      console.error(`whale: interrupted (${(e as Error).message}); what finished is kept: resume with \`whale run --run ${engine.runId}\``);
      return EXIT_INTERRUPTED;
    }
    engine.noteFailure(e);
    throw e;
  } finally {
    await engine.close();
  }
}

export async function runStop(values: Values): Promise<number> {
  const runs = new RunStore(resolveStoreDir(values));
  const id = typeof values.run === 'string' ? values.run : runs.current();
  if (!id) throw new WhaleError(`no run to stop in ${runs.runsDir()}`);
  runs.requestStop(id);
  if (values.json) console.log(JSON.stringify({ runId: id, stopRequested: true }));
  else console.log(`asked run ${id} to stop at its next safe point`);
  return 0;
}

export async function runStatus(values: Values): Promise<number> {
  const runs = new RunStore(resolveStoreDir(values));
  const ids = values.all ? runs.list().map((r) => r.id) : [typeof values.run === 'string' ? values.run : runs.current()].filter((x): x is string => !!x);
  if (ids.length === 0) {
    if (values.json) console.log('[]');
    else console.log(`no runs in ${runs.runsDir()}`);
    return 0;
  }
  const states = ids.map((id) => {
    const entries = Journal.read(runs.journalFile(id));
    return entries.some((e) => e.type === 'run_started') ? foldRun(entries) : undefined;
  });
  const reason = (id: string, s: (typeof states)[number]) =>
    !s ? 'not started' : s.finished ? s.finished.reason : runs.stopRequested(id) ? 'stop requested' : 'in progress or resumable';
  if (values.json) {
    console.log(
      JSON.stringify(
        ids.map((id, i) => ({ runId: id, reason: reason(id, states[i]), state: states[i] ?? null })),
        null,
        2,
      ),
    );
    return 0;
  }
  ids.forEach((id, i) => {
    const s = states[i];
    if (!s) return console.log(`${id}: not started`);
    summarise({ state: s, phasesRun: 0, reason: reason(id, s) }, id);
  });
  return 0;
}
