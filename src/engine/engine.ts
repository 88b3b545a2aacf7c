import { existsSync, rmSync } from 'node:fs';
import { bestPairFrom, validationLabel } from '../core/phaseLabels.js';
import { join } from 'node:path';
import { acquireLock, type HeldLock } from '../archive/fileLock.js';
import { HarnessArchive } from '../archive/harnessArchive.js';
import { projectSecret } from '../archive/projectSecret.js';
import { ResultStore } from '../archive/resultStore.js';
import { RunStore, newRunId } from '../archive/runStore.js';
import type { WhaleConfig } from '../core/config.js';
import { InfraError, WhaleError } from '../core/errors.js';
import { hashSeed } from '../core/rng.js';
import { loadProjectDomain, type ProjectDomain } from '../domains/load.js';
import { HarnessRuntime } from '../harness/runtime.js';
import { createBackend } from '../policy/index.js';
import type { Proposer } from '../search/proposer.js';
import { createProposer } from '../search/createProposer.js';
import { DOLLAR_BUDGET } from '../search/llm/llmProposer.js';
import { candidateDir, type RunContext } from './context.js';
import { evaluate } from './evaluate.js';
import { acceptPhase, runHarnessPhase } from './harnessPhase.js';
import { Journal } from '../archive/journal.js';
import { foldRun, ledgerOf, type RunState } from '../archive/runState.js';
import { checkSchedule, matchedSteps, phasePlan, weightPhaseShouldStop, type PhasePlan } from './schedule.js';
import { runWeightStep } from './weightPhase.js';
import { assertBackendFits } from './backendFit.js';

export interface EngineProject {
  config: WhaleConfig;
  configFile: string;
  /** Folder the config's relative paths are resolved against. */
  root: string;
  storeDir: string;
}

/** The engine runs in the CLI process (the user's terminal, or one the extension starts only in a trusted workspace): domain code may run. */
function projectDomainContext(project: EngineProject) {
  return {
    baseDir: project.root,
    trusted: true,
    secret: projectSecret(project.storeDir),
    cacheDir: join(project.storeDir, 'cache'),
    ...(project.configFile.startsWith('(') ? {} : { configFile: project.configFile }),
  };
}

export interface EngineHooks {
  log?(line: string): void;
  progress?(label: string, done: number, total: number): void;
  signal?: AbortSignal;
  proposer?: Proposer;
}

export interface StepOutcome {
  state: RunState;
  /** Phases completed by this call. */
  phasesRun: number;
  /** Why this call returned: 'schedule complete', a budget, 'stop requested', or 'phase limit'. */
  reason: string;
}

/**
 * The WHALE engine: starts or resumes a run and executes its phases. Everything it has paid for is
 * in the journal or the result store before it moves on, so a killed engine resumes where it was.
 */
export class Engine {
  /** This engine's claim to be the run's only writer (released by close()). */
  private writerLock: HeldLock | undefined;

  private constructor(
    private readonly ctx: RunContext,
    private readonly proposer: Proposer,
    private readonly domain: ProjectDomain,
  ) {}

  get runId(): string {
    return this.ctx.runId;
  }

  /** True once the caller's signal asked the run to stop (Ctrl-C): a unit cut short by it is not a failure. */
  get interrupted(): boolean {
    return this.ctx.signal.aborted;
  }

  state(): RunState {
    return foldRun(this.ctx.journal.all());
  }

  /** Creates a run (config snapshot, journal, h0 in the archive) and opens it. */
  static async create(project: EngineProject, hooks: EngineHooks = {}): Promise<Engine> {
    const { config } = project;
    const domain = await loadProjectDomain(config.domain, projectDomainContext(project));
    try {
      checkSchedule(
        config.method,
        config.schedule,
        config.rsft,
        config.search,
        config.budget,
        { weight: domain.tasks('weight').length, harness: searchTaskCount(config, domain.tasks('harness').length) },
        project.configFile,
      );
    } finally {
      await domain.close();
    }
    const runs = new RunStore(project.storeDir);
    const runId = newRunId(config.method);
    runs.create(runId, { ...config, harness: project.config.harness });
    try {
      return await Engine.open(project, runId, hooks);
    } catch (e) {
      // Nothing ran (e.g. the backend cannot train): leave no empty run behind.
      if (!existsSync(runs.journalFile(runId)) || !new Journal(runs.journalFile(runId)).all().some((x) => x.type === 'run_started'))
        rmSync(runs.runDir(runId), { recursive: true, force: true });
      throw e;
    }
  }

  /** Opens an existing run (to resume it or step it), with the policy at the run's current version. */
  static async open(project: EngineProject, runId: string, hooks: EngineHooks = {}): Promise<Engine> {
    const runs = new RunStore(project.storeDir);
    if (!existsSync(runs.runDir(runId))) throw new WhaleError(`no run '${runId}' in ${runs.runsDir()}`);
    // One writer per run, whoever else (a terminal, the extension, another container) tries too.
    const writerLock = acquireLock(join(runs.runDir(runId), 'engine.lock'), `run ${runId}`, { purpose: `whale ${process.argv.slice(2).join(' ')}`.trim() });
    try {
      const engine = await Engine.openLocked(project, runId, hooks);
      engine.writerLock = writerLock;
      return engine;
    } catch (e) {
      writerLock.release();
      throw e;
    }
  }

  private static async openLocked(project: EngineProject, runId: string, hooks: EngineHooks): Promise<Engine> {
    const runs = new RunStore(project.storeDir);
    const config = runs.config<WhaleConfig>(runId);
    const journal = new Journal(runs.journalFile(runId));
    // The snapshot names the domain as the config did (relative paths against the project folder); a
    // code domain whose code changed since the run started is loaded anyway, with a warning.
    const domain = await loadProjectDomain(config.domain, projectDomainContext(project));
    const started = journal.all().find((e) => e.type === 'run_started');
    const recorded = (started as { domainSource?: { codeHash?: string } } | undefined)?.domainSource?.codeHash;
    if (recorded && domain.source.codeHash && recorded !== domain.source.codeHash)
      (hooks.log ?? console.error)(
        `warning: the domain module ${domain.source.module} changed since run ${runId} started (code ${recorded.slice(0, 12)} then, ${domain.source.codeHash.slice(0, 12)} now)`,
      );
    const state = started ? foldRun(journal.all()) : undefined;
    const backendCfg = state && config.backend.kind === 'embedded' ? { ...config.backend, model: state.version } : config.backend;
    const log = hooks.log ?? ((l: string) => console.error(l));
    const backend = await createBackend(backendCfg, {
      storeDir: project.storeDir,
      version: state?.version,
      runId,
      onRetry: (r) => log(`backend: ${r.reason} — retrying ${r.url} in ${r.delayMs} ms (attempt ${r.attempt})`),
    });
    const caps = await backend.capabilities();
    try {
      assertBackendFits(config.method, backend.kind, caps, project.configFile);
    } catch (e) {
      await backend.close();
      await domain.close();
      throw e;
    }
    const runtime = new HarnessRuntime({
      domain,
      backend,
      limits: config.sandbox,
      sampling: config.sampling,
      concurrency: config.evaluation.concurrency,
      cacheDir: join(project.storeDir, 'cache', 'bundles'),
    });
    const archive = await HarnessArchive.open(join(project.storeDir, 'archive.git'));
    const abort = new AbortController();
    // A stop asked for during start-up (Ctrl-C while the model loads) has already fired: 'abort' does not fire again.
    if (hooks.signal?.aborted) abort.abort();
    else hooks.signal?.addEventListener('abort', () => abort.abort(), { once: true });
    const ctx: RunContext = {
      runId,
      runDir: runs.runDir(runId),
      config,
      configFile: project.configFile,
      storeDir: project.storeDir,
      domain,
      backend,
      runtime,
      results: new ResultStore(project.storeDir),
      runs,
      archive,
      journal,
      searchTasks: domain.tasks('harness').slice(0, searchTaskCount(config, domain.tasks('harness').length)),
      signal: abort.signal,
      log,
      progress: hooks.progress ?? (() => {}),
    };
    journal.append('session_started', { pid: process.pid });
    const engine = new Engine(ctx, hooks.proposer ?? createProposer(config.search), domain);
    if (!started) {
      const h0 = await archive.add(config.harness, {
        parents: [],
        message: 'h0: the initial harness',
        meta: { run: runId, round: 0, origin: 'seed', hypothesis: 'the initial harness h0' },
      });
      journal.append('run_started', {
        runId,
        method: config.method,
        seed: config.seed,
        domain: domain.id,
        domainSource: domain.source,
        h0: h0.treeHash,
        harness: h0.treeHash,
        version: backend.currentVersion(),
        backend: { kind: backend.kind, capabilities: caps },
      });
      runs.setCurrent(runId);
    }
    return engine;
  }

  /** Journals an infrastructure failure that stopped a unit, so status and reports can count them. */
  noteFailure(e: unknown): void {
    if (e instanceof InfraError) this.ctx.journal.append('infra_failure', { source: e.source, message: e.message });
  }

  async close(): Promise<void> {
    try {
      await this.ctx.runtime.close();
      await this.ctx.backend.close();
      await this.domain.close();
    } finally {
      this.writerLock?.release();
    }
  }

  /**
   * Why the run must not start another unit of work now, or undefined. `nextUnit` is the most the
   * next unit can spend, so a run never goes past its rollout budget. Under 'matched-steps' only a
   * weight unit is limited, by WHALE's number of RSFT steps and by `rollouts` as a cap on training
   * rollouts: search comes on top.
   */
  private stopReason(nextUnit: number, kind: 'weight' | 'harness'): string | undefined {
    const { ctx } = this;
    if (ctx.signal.aborted || ctx.runs.stopRequested(ctx.runId)) return 'stop requested';
    const b = ctx.config.budget;
    const l = ledgerOf(ctx.journal.all());
    if (b.mode === 'matched-steps') {
      if (kind === 'weight') {
        const cap = matchedSteps(ctx.config.schedule, ctx.domain.tasks('weight').length, ctx.config.rsft.batchPrompts);
        const steps = this.state().globalStep;
        if (steps >= cap)
          return `budget: ${steps} of ${cap} RSFT steps (matched-steps: WHALE's ${ctx.config.schedule.cycles} cycles × E ${ctx.config.schedule.epochs})`;
        if (b.rollouts !== undefined && l.trainingRollouts + Math.max(1, nextUnit) > b.rollouts)
          return `budget: ${l.trainingRollouts} of ${b.rollouts} training rollouts spent (matched-steps: search on top)`;
      }
    } else if (b.rollouts !== undefined && l.trainingRollouts + l.searchRollouts + Math.max(1, nextUnit) > b.rollouts) {
      const spent = l.trainingRollouts + l.searchRollouts;
      return `budget: ${spent} of ${b.rollouts} rollouts spent${nextUnit > b.rollouts - spent ? ` (the next unit needs up to ${nextUnit})` : ''}`;
    }
    if (b.dollars !== undefined && l.proposerDollars >= b.dollars) return `budget: $${l.proposerDollars.toFixed(2)} of $${b.dollars} spent`;
    // The llm proposer stops short of the cap (it never starts a call that could pass it).
    const capped = ctx.journal.last<{ stopped?: string }>('proposal')?.stopped;
    if (b.dollars !== undefined && capped?.startsWith(DOLLAR_BUDGET)) return `budget: $${l.proposerDollars.toFixed(4)} of $${b.dollars} spent (${capped})`;
    if (b.wallMinutes !== undefined && l.wallMs >= b.wallMinutes * 60_000) return `budget: ${(l.wallMs / 60_000).toFixed(1)} of ${b.wallMinutes} minutes spent`;
    return undefined;
  }

  /** mean@k of the current pair on validation (cached: an unchanged pair costs nothing). */
  private async validate(phase: number): Promise<void> {
    const { ctx } = this;
    if (ctx.journal.ofType<{ phase: number }>('validation').some((e) => e.phase === phase)) return;
    const s = this.state();
    const r = await evaluate({
      store: ctx.results,
      runner: ctx.runtime,
      domain: ctx.domain,
      harnessDir: await candidateDir(ctx, s.harness),
      policyVersion: ctx.backend.currentVersion(),
      split: 'val',
      k: ctx.config.evaluation.k,
      seed: ctx.config.evaluation.seed,
      sampling: ctx.config.sampling,
      limits: ctx.config.sandbox,
      concurrency: ctx.config.evaluation.concurrency,
      limit: ctx.config.evaluation.limit,
      runId: ctx.runId,
      phase: String(phase),
      signal: ctx.signal,
      onProgress: (d, t) => ctx.progress(validationLabel(phase), d, t),
    });
    ctx.journal.append('validation', {
      phase,
      version: ctx.backend.currentVersion(),
      harness: s.harness,
      mean: r.summary.meanAtK,
      se: r.summary.standardError,
      k: r.summary.k,
      keyHash: r.summary.keyHash,
      newRollouts: r.newRollouts,
      spent: [{ key: r.summary.keyHash, rollouts: r.summary.rollouts, paid: r.runRollouts }],
    });
    ctx.log(`${validationLabel(phase)}: mean@${r.summary.k} ${(100 * r.summary.meanAtK).toFixed(1)}% ± ${(100 * r.summary.standardError).toFixed(1)}`);
  }

  /**
   * Runs phases until the schedule is complete, the budget is spent, a stop is requested, or
   * `maxPhases` phases were completed by this call (`whale step` passes 1).
   */
  async run(opts: { maxPhases?: number } = {}): Promise<StepOutcome> {
    const { ctx } = this;
    // Stopped before it began (Ctrl-C while the model loaded): not even the baseline starts.
    if (ctx.signal.aborted) {
      ctx.journal.append('run_stopped', { reason: 'stop requested' });
      return { state: this.state(), phasesRun: 0, reason: 'stop requested' };
    }
    await this.validate(-1);
    let phasesRun = 0;
    const finish = (reason: string, final: boolean): StepOutcome => {
      if (final && !this.state().finished) ctx.journal.append('run_completed', { reason });
      if (reason === 'stop requested') {
        ctx.journal.append('run_stopped', { reason });
        rmSync(ctx.runs.stopFile(ctx.runId), { force: true });
      }
      return { state: this.state(), phasesRun, reason };
    };
    for (;;) {
      // A phase is complete once journaled; its validation may still be missing after a kill.
      if (this.state().nextPhase > 0) await this.validate(this.state().nextPhase - 1);
      const state = this.state();
      if (state.finished) return { state, phasesRun, reason: state.finished.reason };
      const plan = phasePlan(
        ctx.config.method,
        ctx.config.schedule,
        state.nextPhase,
        ctx.domain.tasks('weight').length,
        ctx.config.rsft.batchPrompts,
        ctx.config.budget.mode,
      );
      if (!plan) {
        await this.testBestPair();
        return finish('schedule complete', true);
      }
      if (opts.maxPhases !== undefined && phasesRun >= opts.maxPhases) return { state, phasesRun, reason: 'phase limit' };
      const why = this.stopReason(plan.kind === 'weight' ? ctx.config.rsft.batchPrompts * ctx.config.rsft.groupSize : ctx.searchTasks.length, plan.kind);
      if (why) {
        if (why.startsWith('budget')) await this.testBestPair();
        return finish(why, why.startsWith('budget'));
      }
      const stopped = await this.runPhase(plan, state);
      if (stopped) {
        const reason =
          this.stopReason(
            plan.kind === 'weight'
              ? ctx.config.rsft.batchPrompts * ctx.config.rsft.groupSize
              : ctx.config.search.candidatesPerRound * (ctx.searchTasks.length + 1),
            plan.kind,
          ) ?? 'stop requested';
        if (reason.startsWith('budget')) {
          const closed = await this.closeCutPhase(plan, state, reason);
          if (closed) await this.validate(plan.index);
          // matched-steps: search comes on top of the RSFT steps, so the phases after the last weight steps still run.
          if (closed && plan.kind === 'weight' && ctx.config.budget.mode === 'matched-steps' && this.stopReason(0, 'harness') === undefined) {
            phasesRun++;
            continue;
          }
          await this.testBestPair();
        }
        return finish(reason, reason.startsWith('budget'));
      }
      phasesRun++;
    }
  }

  /** Executes (or continues) one phase. Returns true when it stopped early (stop or budget). */
  private async runPhase(plan: PhasePlan, state: RunState): Promise<boolean> {
    const { ctx } = this;
    if (!ctx.journal.ofType<{ phase: number }>('phase_started').some((e) => e.phase === plan.index)) {
      // What the schedule planned (the report sets it beside what ran: a budget may cut a phase short).
      const planned = {
        ...(plan.steps ? { steps: { min: plan.steps.min, max: Number.isFinite(plan.steps.max) ? plan.steps.max : null } } : {}),
        ...(plan.iterations ? { iterations: plan.iterations } : {}),
        ...(plan.epochsPerStep !== undefined ? { epochsPerStep: plan.epochsPerStep } : {}),
      };
      ctx.journal.append('phase_started', {
        phase: plan.index,
        kind: plan.kind,
        cycle: plan.cycle,
        mode: plan.mode,
        adaptive: plan.adaptive,
        version: state.version,
        harness: state.harness,
        planned,
      });
    }
    ctx.log(
      `phase ${plan.index}: ${plan.kind}${plan.adaptive ? ' (adaptive)' : ''} of cycle ${plan.cycle}, policy ${state.version}, harness ${state.harness.slice(0, 12)}`,
    );
    if (plan.kind === 'weight') {
      const steps = ctx.journal.ofType<{ phase: number; meanReward: number }>('weight_step').filter((e) => e.phase === plan.index);
      const rewards = steps.map((e) => e.meanReward);
      for (;;) {
        const done = plan.adaptive
          ? weightPhaseShouldStop(rewards, { min: plan.steps!.min, max: plan.steps!.max, ...plan.rule! })
          : rewards.length >= plan.steps!.max;
        if (done) break;
        if (this.stopReason(ctx.config.rsft.batchPrompts * ctx.config.rsft.groupSize, 'weight')) return true;
        const globalStep = this.state().globalStep;
        const m = await runWeightStep({
          backend: ctx.backend,
          runner: ctx.runtime,
          store: ctx.results,
          domain: ctx.domain,
          harnessDir: await candidateDir(ctx, state.harness),
          globalStep,
          runSeed: ctx.config.seed,
          hyper: {
            batchSize: ctx.config.rsft.batchPrompts,
            groupSize: ctx.config.rsft.groupSize,
            learningRate: ctx.config.rsft.learningRate,
            minibatchSize: ctx.config.rsft.minibatch,
            loss: ctx.config.rsft.loss,
          },
          sampling: ctx.config.sampling,
          limits: ctx.config.sandbox,
          concurrency: ctx.config.evaluation.concurrency,
          runId: ctx.runId,
          phase: String(plan.index),
          signal: ctx.signal,
          onRollouts: (d, t) =>
            ctx.progress(`phase ${plan.index} step ${rewards.length + 1}${Number.isFinite(plan.steps!.max) ? `/${plan.steps!.max}` : ''}`, d, t),
        });
        const { losses: _losses, ...metrics } = m;
        const spent = [{ key: m.evalKeyHash, rollouts: m.rollouts, paid: ctx.results.countRunRollouts(m.evalKeyHash, ctx.runId) }];
        ctx.journal.append('weight_step', {
          phase: plan.index,
          step: rewards.length,
          ...metrics,
          meanLoss: Number.isFinite(m.meanLoss) ? m.meanLoss : null,
          spent,
        });
        rewards.push(m.meanReward);
        ctx.log(
          `  step ${rewards.length}: reward ${(100 * m.meanReward).toFixed(1)}%, accepted ${m.accepted}/${m.rollouts}, truncated ${(100 * m.truncationRate).toFixed(0)}%, loss ${Number.isFinite(m.meanLoss) ? m.meanLoss.toFixed(3) : '-'} → policy ${m.versionAfter}`,
        );
      }
      ctx.journal.append('phase_completed', { phase: plan.index, kind: 'weight', version: ctx.backend.currentVersion(), harness: state.harness });
      return false;
    }
    const roundCost = ctx.config.search.candidatesPerRound * (ctx.searchTasks.length + 1);
    const r = await runHarnessPhase(ctx, plan, state.harness, this.proposer, () => this.stopReason(roundCost, 'harness'));
    if (r.stopped) return true;
    ctx.journal.append('phase_completed', { phase: plan.index, kind: 'harness', version: ctx.backend.currentVersion(), harness: r.harness });
    ctx.log(`phase ${plan.index}: accepted harness ${r.harness.slice(0, 12)}`);
    return false;
  }

  /**
   * A phase the budget cut short still delivers what was paid for: the weight steps already taken
   * (the policy moved) or the rounds already scored (the archive-wide best is accepted), marked
   * `truncated`. A phase cut before any step or round is left open. A stop requested by the user
   * never comes here: that phase resumes where it stopped.
   */
  private async closeCutPhase(plan: PhasePlan, state: RunState, reason: string): Promise<boolean> {
    const { ctx } = this;
    const inPhase = (type: string) => ctx.journal.ofType<{ phase: number }>(type).filter((e) => e.phase === plan.index);
    if (inPhase('phase_completed').length > 0) return true;
    let harness = state.harness;
    if (plan.kind === 'weight') {
      if (inPhase('weight_step').length === 0) return false;
    } else {
      if (inPhase('round_done').length === 0) return false;
      const l = ledgerOf(ctx.journal.all());
      const left = ctx.config.budget.mode === 'matched-steps' ? Infinity : (ctx.config.budget.rollouts ?? Infinity) - l.trainingRollouts - l.searchRollouts;
      harness = await acceptPhase(ctx, plan.index, state.harness, (cost) => cost <= left);
    }
    ctx.journal.append('phase_completed', { phase: plan.index, kind: plan.kind, version: ctx.backend.currentVersion(), harness, truncated: reason });
    ctx.log(
      `phase ${plan.index}: cut short by the ${reason}; closed with what it paid for${plan.kind === 'harness' ? ` (accepted harness ${harness.slice(0, 12)})` : ''}`,
    );
    return true;
  }

  /** The sealed test split, evaluated once at the end for the report only (never for selection). */
  private async testBestPair(): Promise<void> {
    const { ctx } = this;
    if (ctx.journal.last('test_evaluation')) return;
    const best = this.state().best;
    if (!best) return;
    if (best.version !== ctx.backend.currentVersion()) await ctx.backend.publish(best.version);
    const r = await evaluate({
      store: ctx.results,
      runner: ctx.runtime,
      domain: ctx.domain,
      harnessDir: await candidateDir(ctx, best.harness),
      policyVersion: best.version,
      split: 'test',
      k: ctx.config.evaluation.k,
      seed: hashSeed(`test/${ctx.config.evaluation.seed}`),
      sampling: ctx.config.sampling,
      limits: ctx.config.sandbox,
      concurrency: ctx.config.evaluation.concurrency,
      limit: ctx.config.evaluation.limit,
      runId: ctx.runId,
      phase: 'test',
      signal: ctx.signal,
      onProgress: (d, t) => ctx.progress('test (sealed; report only)', d, t),
    });
    ctx.journal.append('test_evaluation', {
      version: best.version,
      harness: best.harness,
      mean: r.summary.meanAtK,
      se: r.summary.standardError,
      k: r.summary.k,
      newRollouts: r.newRollouts,
      keyHash: r.summary.keyHash,
      spent: [{ key: r.summary.keyHash, rollouts: r.summary.rollouts, paid: r.runRollouts }],
    });
    ctx.log(
      `test (sealed, ${bestPairFrom(best.phase)}): mean@${r.summary.k} ${(100 * r.summary.meanAtK).toFixed(1)}% ± ${(100 * r.summary.standardError).toFixed(1)}`,
    );
  }
}

function searchTaskCount(config: WhaleConfig, available: number): number {
  return Math.min(available, config.search.harnessTasks ?? available);
}
