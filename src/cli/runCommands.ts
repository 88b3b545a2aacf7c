import { RunStore } from '../archive/runStore.js';
import { METHODS, type Method } from '../core/config.js';
import { InputError, WhaleError } from '../core/errors.js';
import { getDomain } from '../domains/index.js';
import { Engine, type EngineProject, type StepOutcome } from '../engine/engine.js';
import { foldRun } from '../engine/runState.js';
import { Journal } from '../engine/journal.js';
import type { CommandSpec } from './main.js';
import { Progress } from './progress.js';
import { intFlag, resolveProject } from './project.js';

type Values = Record<string, string | boolean | undefined>;

function engineProject(values: Values): EngineProject {
  const p = resolveProject(values, { harness: (d) => getDomain(d).h0Dir });
  const config = { ...p.config };
  if (typeof values.method === 'string') {
    if (!(METHODS as readonly string[]).includes(values.method)) throw new InputError({ file: '(command line)', field: '--method' }, `must be one of ${METHODS.join(', ')}`);
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

function summarise(o: StepOutcome, runId: string): void {
  const s = o.state;
  const l = s.ledger;
  console.log(`run ${runId}: ${o.reason}`);
  console.log(`  policy ${s.version}, harness ${s.harness.slice(0, 12)}, phases completed ${s.nextPhase}`);
  if (s.best) console.log(`  best pair on validation: ${(100 * s.best.mean).toFixed(1)}% ± ${(100 * s.best.se).toFixed(1)} (after phase ${s.best.phase})`);
  if (s.test) console.log(`  sealed test of the best pair: mean@${s.test.k} ${(100 * s.test.mean).toFixed(1)}% ± ${(100 * s.test.se).toFixed(1)}`);
  console.log(`  ledger: training ${l.trainingRollouts}, search ${l.searchRollouts}, evaluation ${l.evalRollouts} rollouts; proposer $${l.proposerDollars.toFixed(2)}; wall ${(l.wallMs / 1000).toFixed(0)} s`);
  if (s.infraFailures) console.log(`  infrastructure failures: ${s.infraFailures} unit(s) stopped by a backend, tool service or verifier failure (not scored; resumed by --resume)`);
}

const projectOptions = {
  config: { type: 'string' },
  domain: { type: 'string' },
  harness: { type: 'string' },
  store: { type: 'string' },
  method: { type: 'string' },
  seed: { type: 'string' },
  'budget-rollouts': { type: 'string' },
} as const;

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

export const runCommand: CommandSpec = {
  summary: 'run WHALE (or a baseline: --method) to the end of its schedule or budget; --resume continues the current run',
  usage: 'whale run [--config whale.config.json] [--method whale|adaptive|stagewise|weight-only|harness-only|fst] [--seed N] [--budget-rollouts N] [--resume | --run ID]',
  options: { ...projectOptions, resume: { type: 'boolean' }, run: { type: 'string' } },
  async run(values) {
    const hooks = terminalHooks();
    const engine = await openOrCreate(values, hooks);
    try {
      console.error(`whale run: ${engine.runId}`);
      summarise(await engine.run(), engine.runId);
      return 0;
    } catch (e) {
      engine.noteFailure(e);
      throw e;
    } finally {
      await engine.close();
    }
  },
};

export const stepCommand: CommandSpec = {
  summary: 'run exactly one phase of the current run (starting a run when there is none)',
  usage: 'whale step [--config whale.config.json] [--run ID] [--new]',
  options: { ...projectOptions, run: { type: 'string' }, new: { type: 'boolean' } },
  async run(values) {
    const hooks = terminalHooks();
    const project = engineProject(values);
    const current = new RunStore(project.storeDir).current();
    const engine = values.new || (!current && typeof values.run !== 'string') ? await Engine.create(project, hooks) : await Engine.open(project, typeof values.run === 'string' ? values.run : current!, hooks);
    try {
      summarise(await engine.run({ maxPhases: 1 }), engine.runId);
      return 0;
    } catch (e) {
      engine.noteFailure(e);
      throw e;
    } finally {
      await engine.close();
    }
  },
};

export const stopCommand: CommandSpec = {
  summary: 'ask a running engine to stop at its next safe point',
  usage: 'whale stop [--run ID]',
  options: { config: { type: 'string' }, store: { type: 'string' }, run: { type: 'string' } },
  async run(values) {
    const p = resolveProject({ ...values, domain: values.domain ?? 'kbqa' });
    const runs = new RunStore(p.storeDir);
    const id = typeof values.run === 'string' ? values.run : runs.current();
    if (!id) throw new WhaleError('no run to stop');
    runs.requestStop(id);
    console.log(`asked run ${id} to stop at its next safe point`);
    return 0;
  },
};

export const statusCommand: CommandSpec = {
  summary: 'state of the current run (or --run ID, or --all): phase, policy, harness, best pair, ledger',
  usage: 'whale status [--run ID] [--all] [--json]',
  options: { config: { type: 'string' }, store: { type: 'string' }, run: { type: 'string' }, all: { type: 'boolean' }, json: { type: 'boolean' } },
  async run(values) {
    const p = resolveProject({ ...values, domain: values.domain ?? 'kbqa' });
    const runs = new RunStore(p.storeDir);
    const ids = values.all ? runs.list().map((r) => r.id) : [typeof values.run === 'string' ? values.run : runs.current()].filter((x): x is string => !!x);
    if (ids.length === 0) {
      console.log(`no runs in ${runs.runsDir()}`);
      return 0;
    }
    const states = ids.map((id) => {
      const entries = Journal.read(runs.journalFile(id));
      return entries.some((e) => e.type === 'run_started') ? foldRun(entries) : undefined;
    });
    if (values.json) {
      console.log(JSON.stringify(states, null, 2));
      return 0;
    }
    ids.forEach((id, i) => {
      const s = states[i];
      if (!s) return console.log(`${id}: not started`);
      summarise({ state: s, phasesRun: 0, reason: s.finished ? s.finished.reason : runs.stopRequested(id) ? 'stop requested' : 'in progress or resumable' }, id);
    });
    return 0;
  },
};
