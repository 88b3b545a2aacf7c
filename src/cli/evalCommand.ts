import { join, resolve } from 'node:path';
import { HarnessArchive } from '../archive/harnessArchive.js';
import { projectSecret } from '../archive/projectSecret.js';
import { ResultStore } from '../archive/resultStore.js';
import { InputError } from '../core/errors.js';
import { domainH0Dir } from '../domains/index.js';
import { loadProjectDomain } from '../domains/load.js';
import { SPLITS, type Split } from '../domains/types.js';
import { candidateDir } from '../engine/context.js';
import { evaluate } from '../engine/evaluate.js';
import { HarnessRuntime } from '../harness/runtime.js';
import { createBackend } from '../policy/index.js';
import type { Values } from './command.js';
import { Progress } from './progress.js';
import { hideApiKeys, intFlag, numberFlag, resolveProject } from './project.js';

export async function run(values: Values): Promise<number> {
  const project = resolveProject(values, { harness: domainH0Dir });
  const { config } = project;
  hideApiKeys(config);
  // The CLI runs in the user's own terminal: a trusted place for the domain's code.
  const domain = await loadProjectDomain(config.domain, {
    baseDir: project.root,
    trusted: true,
    secret: projectSecret(project.storeDir),
    cacheDir: join(project.storeDir, 'cache'),
    ...(project.configFile ? { configFile: project.configFile } : {}),
  });
  if (typeof values.harness === 'string' && typeof values.candidate === 'string')
    throw new InputError({ file: '(command line)', field: '--candidate' }, 'give --harness DIR or --candidate HASH, not both');
  const harnessDir =
    typeof values.candidate === 'string'
      ? await archivedCandidateDir(project.storeDir, values.candidate)
      : typeof values.harness === 'string'
        ? resolve(values.harness)
        : config.harness;
  const split = (typeof values.split === 'string' ? values.split : config.evaluation.split) as Split;
  if (!SPLITS.includes(split)) throw new InputError({ file: '(command line)', field: '--split' }, `must be one of ${SPLITS.join(', ')}`);
  if (split === 'test' && !process.env.WHALE_UNSEAL_TEST) {
    throw new InputError(
      { file: '(command line)', field: '--split' },
      'the test split is sealed: it is evaluated only for reports (set WHALE_UNSEAL_TEST=1 to evaluate it by hand)',
    );
  }
  const k = intFlag(values, 'k') ?? config.evaluation.k;
  const seed = intFlag(values, 'seed') ?? config.evaluation.seed;
  const limit = intFlag(values, 'limit') ?? config.evaluation.limit;
  const concurrency = intFlag(values, 'concurrency') ?? config.evaluation.concurrency;
  const temperature = numberFlag(values, 'temperature');
  const sampling = { ...config.sampling, ...(temperature !== undefined ? { temperature } : {}) };
  const backendCfg = config.backend.kind === 'embedded' && typeof values.model === 'string' ? { ...config.backend, model: values.model } : config.backend;

  const backend = await createBackend(backendCfg, { storeDir: project.storeDir });
  if (typeof values.policy === 'string') await publishPolicy(backend, values.policy);
  const runtime = new HarnessRuntime({
    domain,
    backend,
    limits: config.sandbox,
    sampling,
    concurrency,
    cacheDir: join(project.storeDir, 'cache', 'bundles'),
  });
  try {
    const progress = new Progress(`eval ${domain.id}/${split}`);
    const result = await evaluate({
      store: new ResultStore(project.storeDir),
      runner: runtime,
      domain,
      harnessDir,
      policyVersion: backend.currentVersion(),
      split,
      k,
      seed,
      sampling,
      limits: config.sandbox,
      concurrency,
      limit,
      onProgress: (d, t) => progress.update(d, t),
      onInfra: (i) =>
        console.error(
          `infrastructure failure (${i.source}) on ${i.taskId}#${i.sampleIndex}, attempt ${i.attempt}: ${i.message}${i.willRetry ? ' — not scored, retrying' : ''}`,
        ),
    });
    const s = result.summary;
    if (values.json) {
      console.log(JSON.stringify({ ...s, cacheHit: result.cacheHit, newRollouts: result.newRollouts, trajectoriesFile: result.trajectoriesFile }, null, 2));
    } else {
      const pct = (x: number) => (100 * x).toFixed(1);
      console.log(`${domain.id} ${split} mean@${s.k} = ${pct(s.meanAtK)}% ± ${pct(s.standardError)} (se over ${s.tasks} tasks; ${s.rollouts} rollouts)`);
      console.log(
        `harness ${s.key.harnessHash.slice(0, 12)} (${harnessDir}), policy ${s.key.policyVersion}, temperature ${sampling.temperature}, seed ${seed}`,
      );
      console.log(
        `terminations: ${Object.entries(s.terminations)
          .map(([t, n]) => `${t} ${n}`)
          .join(', ')}; mean model calls ${s.meanTurns.toFixed(2)}`,
      );
      console.log(
        result.cacheHit ? 'cache hit: answered from the run store, 0 new rollouts' : `${result.newRollouts} new rollouts in ${(s.wallMs / 1000).toFixed(1)} s`,
      );
      console.log(`per-task results: ${join(new ResultStore(project.storeDir).dirFor(s.keyHash), 'tasks.json')}`);
      console.log(`trajectories:     ${result.trajectoriesFile}`);
      if (s.infraRetried) console.log(`infrastructure failures: ${s.infraRetried} rollout(s) failed on infrastructure and were run again (not scored)`);
    }
    return 0;
  } finally {
    await runtime.close();
    await backend.close();
    await domain.close();
  }
}

/** An archived candidate (full tree hash or a unique prefix), materialised where the engine keeps candidates. */
async function archivedCandidateDir(storeDir: string, hash: string): Promise<string> {
  const field = { file: '(command line)', field: '--candidate' };
  if (!/^[0-9a-f]{4,40}$/.test(hash)) throw new InputError(field, `'${hash}' is not a candidate's tree hash (4 to 40 hex digits)`);
  const archive = await HarnessArchive.open(join(storeDir, 'archive.git'));
  const matches = (await archive.list()).filter((c) => c.treeHash.startsWith(hash));
  if (matches.length === 0) throw new InputError(field, `no candidate ${hash} in ${join(storeDir, 'archive.git')}`);
  if (matches.length > 1) throw new InputError(field, `${hash} names ${matches.length} candidates: give more digits`);
  return candidateDir({ archive, storeDir }, matches[0].treeHash);
}

/** Samples a saved policy version (a run's "policy after phase N") instead of the backend's current one. */
async function publishPolicy(backend: { publish(v: string): Promise<void>; kind: string }, version: string): Promise<void> {
  try {
    await backend.publish(version);
  } catch (e) {
    throw new InputError(
      { file: '(command line)', field: '--policy' },
      `the ${backend.kind} backend cannot sample policy version ${version}: ${(e as Error).message}`,
    );
  }
}
