import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { hashSeed } from '../core/rng.js';
import { mean, standardError } from '../core/stats.js';
import { readAnnotations as readStoredAnnotations } from '../archive/annotationStore.js';
import type { Annotation } from '../archive/annotationStore.js';
import { clearProposalSeed, readProposalSeed } from '../archive/proposalSeed.js';
import type { CandidateRecord, CandidateScore, Proposal, Proposer } from '../search/proposer.js';
import { candidateDir, type RunContext } from './context.js';
import { evaluate } from './evaluate.js';
import { chargeLostSession, saveSessionLog, sessionLogFile, ValidationCache } from './proposerSession.js';
import { ledgerOf } from '../archive/runState.js';
import { derivationIn } from '../archive/harnessArchive.js';
import type { PhasePlan } from './schedule.js';
import { harnessPhaseShouldStop } from './schedule.js';
import { submittedCandidates } from '../archive/submissions.js';
import { validateCandidate } from '../search/validate.js';

interface ScoredEvent {
  phase: number;
  round: number;
  treeHash: string;
  version: string;
  mean: number;
  se: number;
  meanTurns: number;
  keyHash: string;
}

/**
 * Seed for scoring candidates during search: the same for every candidate and phase of a run, so
 * candidates are compared on common random numbers, and re-scoring a pair is a cache hit.
 */
export function searchSeed(runSeed: number): number {
  return hashSeed(`search/${runSeed}`);
}

/** One evaluation of a candidate on the search tasks under the current policy version (cached). */
async function evaluateOnSearchTasks(ctx: RunContext, treeHash: string, k: number, seed: number, phase: number, label: string) {
  return evaluate({
    store: ctx.results,
    runner: ctx.runtime,
    domain: ctx.domain,
    harnessDir: await candidateDir(ctx, treeHash),
    policyVersion: ctx.backend.currentVersion(),
    split: 'harness',
    tasks: ctx.searchTasks,
    k,
    seed,
    sampling: ctx.config.sampling,
    limits: ctx.config.sandbox,
    concurrency: ctx.config.evaluation.concurrency,
    runId: ctx.runId,
    phase: String(phase),
    signal: ctx.signal,
    onProgress: (d, t) => ctx.progress(`phase ${phase} ${label} ${treeHash.slice(0, 8)}`, d, t),
    onInfra: (i) =>
      ctx.log(`  infrastructure failure (${i.source}) on ${i.taskId}#${i.sampleIndex}: ${i.message}${i.willRetry ? ' — not scored, retrying' : ''}`),
  });
}

/** Scores a candidate on the harness split with one rollout per task under the current version. */
async function score(ctx: RunContext, treeHash: string, phase: number, round: number, extraRollouts = 0): Promise<ScoredEvent> {
  const r = await evaluateOnSearchTasks(ctx, treeHash, 1, searchSeed(ctx.config.seed), phase, `round ${round}`);
  const ev = {
    phase,
    round,
    treeHash,
    version: ctx.backend.currentVersion(),
    mean: r.summary.meanAtK,
    se: r.summary.standardError,
    meanTurns: r.summary.meanTurns,
    keyHash: r.summary.keyHash,
  };
  const spent = [
    { key: r.summary.keyHash, rollouts: r.summary.rollouts, paid: r.runRollouts },
    ...(extraRollouts ? [{ key: `smoke/${phase}/${treeHash}`, rollouts: extraRollouts }] : []),
  ];
  ctx.journal.append('candidate_scored', { ...ev, newRollouts: r.newRollouts + extraRollouts, cacheHit: r.cacheHit, spent });
  return ev;
}

/** Every candidate of the run as a proposer sees it, with all its scores from the journal. */
export async function candidateRecords(ctx: RunContext): Promise<CandidateRecord[]> {
  const scores = new Map<string, CandidateScore[]>();
  for (const e of ctx.journal.ofType<ScoredEvent>('candidate_scored')) {
    const list = scores.get(e.treeHash) ?? [];
    list.push({ policyVersion: e.version, split: 'harness', mean: e.mean, se: e.se, meanTurns: e.meanTurns, keyHash: e.keyHash });
    scores.set(e.treeHash, list);
  }
  // The archive is shared by every run of a project; a proposer sees this run's candidates.
  const mine = (c: { meta: { run?: string }; links: { meta: { run?: string } }[]; treeHash: string }) =>
    c.meta.run === ctx.runId || c.links.some((l) => l.meta.run === ctx.runId) || scores.has(c.treeHash);
  const invalid = new Map(ctx.journal.ofType<{ treeHash: string | null; reasons: string[] }>('candidate_invalid').map((e) => [e.treeHash, e.reasons]));
  return (await ctx.archive.list())
    .filter(mine)
    .map((c) => derivationIn(c, ctx.runId))
    .map((c) => ({
      treeHash: c.treeHash,
      parents: c.parents,
      round: typeof c.meta.round === 'number' ? c.meta.round : 0,
      origin: c.meta.origin ?? 'proposer',
      hypothesis: c.meta.hypothesis ?? c.message,
      valid: !invalid.has(c.treeHash),
      invalidReasons: invalid.get(c.treeHash) ?? [],
      scores: scores.get(c.treeHash) ?? [],
    }));
}

/**
 * The archive-wide best under the current policy version: every candidate scored under it in this
 * run (the re-scored seed, this phase's proposals, older ones re-scored), best mean, ties broken by
 * fewer turns, then by earlier scoring. The search can therefore return to an older candidate.
 */
export function archiveBest(scored: readonly ScoredEvent[], version: string): ScoredEvent | undefined {
  let best: ScoredEvent | undefined;
  for (const e of scored) {
    if (e.version !== version) continue;
    if (!best || e.mean > best.mean || (e.mean === best.mean && e.meanTurns < best.meanTurns)) best = e;
  }
  return best;
}

/**
 * Noise-aware acceptance: the challenger replaces the incumbent only when, re-evaluated on fresh
 * samples of the same tasks, its paired per-task advantage exceeds z standard errors.
 */
async function pairedChoice(
  ctx: RunContext,
  incumbent: string,
  challenger: string,
  phase: number,
): Promise<{ chosen: string; diff: number; seDiff: number; newRollouts: number; spent: { key: string; rollouts: number; paid: number }[] }> {
  const { pairedSamples, pairedZ } = ctx.config.search;
  let newRollouts = 0;
  const spent: { key: string; rollouts: number; paid: number }[] = [];
  const perTask = async (treeHash: string) => {
    const r = await evaluateOnSearchTasks(ctx, treeHash, pairedSamples, hashSeed(`paired/${ctx.config.seed}`), phase, 'paired check');
    newRollouts += r.newRollouts;
    spent.push({ key: r.summary.keyHash, rollouts: r.summary.rollouts, paid: r.runRollouts });
    return new Map(r.tasks.map((t) => [t.taskId, t.mean]));
  };
  const a = await perTask(incumbent);
  const b = await perTask(challenger);
  const diffs = [...a.keys()].map((id) => (b.get(id) ?? 0) - (a.get(id) ?? 0));
  const diff = mean(diffs);
  const seDiff = standardError(diffs);
  const chosen = diff > pairedZ * (Number.isFinite(seDiff) ? seDiff : 0) && diff > 0 ? challenger : incumbent;
  return { chosen, diff, seDiff, newRollouts, spent };
}

export interface HarnessPhaseResult {
  harness: string;
  stopped: boolean;
}

/**
 * One Meta-Harness phase: seed the archive with h_k (re-scored under the current version — a cache
 * miss after a weight update, a hit otherwise), then rounds of propose → archive → validate →
 * score, then accept the archive-wide best (or the paired rule's choice). A round is the unit of
 * resume: a proposal is journaled as soon as it exists (never paid for twice), scoring is cached.
 */
export async function runHarnessPhase(
  ctx: RunContext,
  plan: PhasePlan,
  incumbent: string,
  proposer: Proposer,
  shouldStop: () => string | undefined,
): Promise<HarnessPhaseResult> {
  const phase = plan.index;
  const version = ctx.backend.currentVersion();
  const phaseDir = join(ctx.runDir, 'phases', `${phase}-harness`);
  const inPhase = <T extends { phase: number }>(type: string) => ctx.journal.ofType<T>(type).filter((e) => e.phase === phase);

  if (!inPhase<ScoredEvent>('candidate_scored').some((e) => e.round === 0)) {
    ctx.log(`phase ${phase} (harness, ${plan.mode}): scoring the incumbent ${incumbent.slice(0, 12)} under policy ${version}`);
    await score(ctx, incumbent, phase, 0);
  }
  if (await scoreSubmissions(ctx, phase, plan.mode, shouldStop)) return { harness: incumbent, stopped: true };
  // The archive's best after each of the first `iterations` iterations. Every iteration counts, a
  // round whose candidates were all invalid (or that proposed none) too: J_max and the patience
  // rule count rounds, not scored candidates, so a proposer that keeps failing still ends the phase.
  const bestAfter = (iterations: number): number[] => {
    const scored = inPhase<ScoredEvent>('candidate_scored').filter((e) => e.version === version);
    return Array.from({ length: iterations }, (_, r) => Math.max(...scored.filter((e) => e.round <= r).map((e) => e.mean)));
  };
  const { min, max } = plan.iterations!;
  const validations = new ValidationCache(async () => ({
    runtime: ctx.runtime,
    domain: ctx.domain,
    mode: plan.mode,
    h0Dir: await h0Dir(ctx),
    smokeTask: ctx.searchTasks[0],
  }));
  for (let round = 1; ; round++) {
    const iterationsDone = round; // the seed evaluation is iteration 1
    const done = plan.adaptive
      ? harnessPhaseShouldStop(bestAfter(iterationsDone), { min, max, patience: ctx.config.schedule.adaptive.patienceIterations })
      : iterationsDone >= max;
    if (done) break;
    if (inPhase<{ phase: number; round: number }>('round_done').some((e) => e.round === round)) continue;
    const why = shouldStop();
    if (why) return { harness: incumbent, stopped: true };

    let proposal = inPhase<{ phase: number; round: number } & Proposal>('proposal').find((e) => e.round === round);
    if (!proposal) {
      const outDir = join(phaseDir, `round-${round}`);
      rmSync(outDir, { recursive: true, force: true });
      mkdirSync(outDir, { recursive: true });
      const candidates = await candidateRecords(ctx);
      // A person's "propose from here" for the llm proposer (archive/proposalSeed.ts), if its candidate is archived.
      // The person chose it, so it joins this run's view even when another run archived it.
      const pending = proposer.kind === 'llm' ? readProposalSeed(ctx.storeDir) : undefined;
      const chosen = pending && !candidates.some((c) => c.treeHash === pending.treeHash) ? await ctx.archive.get(pending.treeHash) : undefined;
      if (chosen)
        candidates.push({
          treeHash: chosen.treeHash,
          parents: chosen.parents,
          round: 0,
          origin: chosen.meta.origin ?? 'proposer',
          hypothesis: chosen.meta.hypothesis ?? chosen.message,
          valid: true,
          invalidReasons: [],
          scores: [],
        });
      const seed =
        pending && candidates.some((c) => c.treeHash === pending.treeHash) ? { treeHash: pending.treeHash, direction: pending.direction } : undefined;
      const view = {
        domain: { id: ctx.domain.id, searchSpace: ctx.domain.searchSpace },
        mode: plan.mode,
        candidates,
        incumbent,
        policyVersion: version,
        materialize: (h: string) => candidateDir(ctx, h),
        taskResults: (k: string) => ctx.results.taskResults(k) ?? [],
        trajectoriesFile: (k: string) => ctx.results.trajectoriesFile(k),
        annotations: readAnnotations(ctx),
        pastReports: ctx.journal.ofType<{ round: number; report: string }>('proposal').map((p) => ({ round: p.round, text: p.report })),
        ...(seed ? { seed } : {}),
      };
      ctx.log(`phase ${phase} round ${round}: asking the ${proposer.kind} proposer for ${ctx.config.search.candidatesPerRound} candidates`);
      const logFile = sessionLogFile(ctx.runDir, phase, round);
      chargeLostSession(ctx, phase, round, logFile);
      const budget = ctx.config.budget.dollars;
      const dollarsLeft = budget === undefined ? undefined : Math.max(0, budget - ledgerOf(ctx.journal.all()).proposerDollars);
      const validate = async (dir: string) => {
        const v = await validations.validate(dir);
        return { ok: v.ok, reasons: v.ok ? [] : v.reasons, warnings: v.warnings };
      };
      let p: Proposal;
      try {
        p = await proposer.propose({
          round,
          count: ctx.config.search.candidatesPerRound,
          view,
          outDir,
          seed: hashSeed(`propose/${ctx.config.seed}/${phase}/${round}`),
          signal: ctx.signal,
          validate,
          logFile,
          ...(dollarsLeft !== undefined ? { dollarsLeft } : {}),
        });
      } catch (e) {
        chargeLostSession(ctx, phase, round, logFile); // what the failed session spent is in the ledger now
        throw e;
      }
      saveSessionLog(logFile, p.log);
      ctx.log(`  ${proposer.kind} proposer: ${p.candidates.length} candidate(s), $${p.dollars.toFixed(4)}`);
      proposal = ctx.journal.append('proposal', {
        phase,
        round,
        candidates: p.candidates,
        report: p.report,
        dollars: p.dollars,
        proposer: proposer.kind,
        ...(p.stopped ? { stopped: p.stopped } : {}),
        sessionLog: relative(ctx.runDir, logFile),
        ...(seed ? { seed } : {}),
      });
      if (seed) clearProposalSeed(ctx.storeDir); // consumed: journaled with the proposal it shaped
      if (p.stopped) ctx.log(`  the proposer stopped early: ${p.stopped}`);
    }
    for (const c of proposal.candidates) {
      if (!existsSync(join(c.dir, 'harness.json')) && !existsSync(c.dir)) {
        ctx.journal.append('candidate_invalid', {
          phase,
          round,
          treeHash: null,
          dir: c.dir,
          reasons: ['the proposer reported a folder that does not exist'],
          newRollouts: 0,
        });
        continue;
      }
      const added = await ctx.archive.add(c.dir, {
        parents: c.parents,
        message: c.hypothesis.split('\n')[0] || 'candidate',
        meta: { run: ctx.runId, round, origin: 'proposer', proposer: proposer.kind, hypothesis: c.hypothesis },
      });
      const treeHash = added.treeHash;
      if (
        inPhase<ScoredEvent>('candidate_scored').some((e) => e.treeHash === treeHash) ||
        inPhase<{ treeHash: string; phase: number }>('candidate_invalid').some((e) => e.treeHash === treeHash)
      )
        continue;
      const v = await validations.validate(await candidateDir(ctx, treeHash), treeHash);
      if (!v.ok) {
        ctx.journal.append('candidate_invalid', {
          phase,
          round,
          treeHash,
          reasons: v.reasons,
          newRollouts: v.smokeRollouts ?? 0,
          spent: [{ key: `smoke/${phase}/${treeHash}`, rollouts: v.smokeRollouts ?? 0 }],
        });
        ctx.log(`  candidate ${treeHash.slice(0, 8)} invalid: ${v.reasons.join('; ')}`);
        continue;
      }
      const s = await score(ctx, treeHash, phase, round, v.smokeRollouts ?? 0);
      ctx.log(`  candidate ${treeHash.slice(0, 8)}: ${(100 * s.mean).toFixed(1)}% ± ${(100 * s.se).toFixed(1)} (${c.hypothesis.split('\n')[0]})`);
    }
    const best = archiveBest(ctx.journal.ofType<ScoredEvent>('candidate_scored'), version)!;
    ctx.journal.append('round_done', { phase, round, bestTreeHash: best.treeHash, bestMean: best.mean });
  }

  return { harness: await acceptPhase(ctx, phase, incumbent), stopped: false };
}

/**
 * Accepts the phase's harness: the archive-wide best under the current version, or the paired
 * rule's choice. Also closes a phase the budget cut short, so the rounds already paid for still
 * count; then a paired re-evaluation that no longer fits the budget keeps the incumbent (the rule
 * accepts a challenger only on evidence) and says so. Idempotent: a journaled acceptance is reused.
 */
export async function acceptPhase(ctx: RunContext, phase: number, incumbent: string, pairedFits: (rollouts: number) => boolean = () => true): Promise<string> {
  const done = ctx.journal.ofType<{ phase: number; chosen: string }>('acceptance').find((e) => e.phase === phase);
  if (done) return done.chosen;
  const version = ctx.backend.currentVersion();
  const best = archiveBest(ctx.journal.ofType<ScoredEvent>('candidate_scored'), version)!;
  let chosen = best.treeHash;
  const acceptance: Record<string, unknown> = {
    phase,
    rule: ctx.config.search.acceptance,
    archiveBest: best.treeHash,
    archiveBestMean: best.mean,
    incumbent,
    newRollouts: 0,
  };
  if (ctx.config.search.acceptance === 'paired' && best.treeHash !== incumbent) {
    if (pairedFits(2 * ctx.config.search.pairedSamples * ctx.searchTasks.length)) {
      const p = await pairedChoice(ctx, incumbent, best.treeHash, phase);
      chosen = p.chosen;
      Object.assign(acceptance, {
        pairedChoice: p.chosen,
        diff: p.diff,
        seDiff: p.seDiff,
        newRollouts: p.newRollouts,
        spent: p.spent,
        changedChoice: p.chosen !== best.treeHash,
      });
    } else {
      chosen = incumbent;
      Object.assign(acceptance, {
        pairedChoice: incumbent,
        changedChoice: true,
        note: 'the paired re-evaluation did not fit the remaining budget: the incumbent stays',
      });
    }
  }
  ctx.journal.append('acceptance', { ...acceptance, chosen });
  await ctx.archive.setRef(`runs/${ctx.runId}/accepted/${phase}`, chosen);
  return chosen;
}

/**
 * Hand-made candidates (submissions.ts) this run has not seen: validated and scored like round-0
 * proposals, so the archive-wide acceptance can pick them. Returns true when asked to stop first.
 */
async function scoreSubmissions(ctx: RunContext, phase: number, mode: PhasePlan['mode'], shouldStop: () => string | undefined): Promise<boolean> {
  const seen = new Set(
    [...ctx.journal.ofType<{ treeHash: string | null }>('candidate_scored'), ...ctx.journal.ofType<{ treeHash: string | null }>('candidate_invalid')].map(
      (e) => e.treeHash,
    ),
  );
  for (const treeHash of await submittedCandidates(ctx.archive)) {
    if (seen.has(treeHash)) continue;
    if (shouldStop()) return true;
    const v = await validateCandidate(await candidateDir(ctx, treeHash), {
      runtime: ctx.runtime,
      domain: ctx.domain,
      mode,
      h0Dir: await h0Dir(ctx),
      smokeTask: ctx.searchTasks[0],
    });
    if (!v.ok) {
      ctx.journal.append('candidate_invalid', {
        phase,
        round: 0,
        treeHash,
        origin: 'human',
        reasons: v.reasons,
        newRollouts: v.smokeRollouts ?? 0,
        spent: [{ key: `smoke/${phase}/${treeHash}`, rollouts: v.smokeRollouts ?? 0 }],
      });
      ctx.log(`  hand-made candidate ${treeHash.slice(0, 8)} invalid: ${v.reasons.join('; ')}`);
      continue;
    }
    const s = await score(ctx, treeHash, phase, 0, v.smokeRollouts ?? 0);
    ctx.log(`  hand-made candidate ${treeHash.slice(0, 8)}: ${(100 * s.mean).toFixed(1)}% ± ${(100 * s.se).toFixed(1)}`);
  }
  return false;
}

async function h0Dir(ctx: RunContext): Promise<string> {
  const start = ctx.journal.all().find((e) => e.type === 'run_started');
  return candidateDir(ctx, String(start?.h0));
}

/** Annotations people wrote on this run's trajectories, deleted ones left out (the proposer reads them). */
export function readAnnotations(ctx: Pick<RunContext, 'runDir'>): Annotation[] {
  return readStoredAnnotations(ctx.runDir);
}
