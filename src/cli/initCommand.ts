import { cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { WhaleConfigSchema } from '../core/config.js';
import { InputError } from '../core/errors.js';
import { projectSecret } from '../archive/projectSecret.js';
import { HarnessArchive } from '../archive/harnessArchive.js';
import { resourcesDir } from '../domains/common.js';
import { listDomains, loadDomain } from '../domains/index.js';
import type { Values } from './command.js';
import { TEMPLATES } from './choices.js';

type Template = (typeof TEMPLATES)[number];

/**
 * The project template: sized so a whole WHALE run (2 cycles) finishes in minutes on a 2-core CPU
 * with the embedded policy. Real runs on remote backends raise B, G, the splits and k. Search is
 * cheap beside a weight phase, as in the paper (≈ 5% of a cycle there): a weight phase of E 0.5 is
 * 8 steps × B 32 × G 8 = 2,048 rollouts, a harness phase of I 3, M 3 on 16 harness tasks is
 * 16 × (1 + 2 × 3) = 112 rollouts (+ a smoke rollout per candidate, 118 in all): 5.4% of the cycle's 2,166 rollouts.
 */
export function templateConfig(
  name: string,
  domain: string,
  template: Template = 'standard',
  own?: { domain: Record<string, unknown>; harness: string },
): Record<string, unknown> {
  const config: Record<string, unknown> = {
    $schema: './.whale-schema.json',
    name,
    domain: own?.domain ?? { id: domain, options: { sizes: { weight: 512, val: 128 } } },
    harness: own?.harness ?? 'harnesses/h0',
    // kbchain's habits live in its own continued checkpoint (src/domains/README.md).
    backend: { kind: 'embedded', model: domain === 'kbchain' ? 'kbchain' : 'base' },
    sampling: { temperature: 1, top_p: 1, max_tokens: 64 },
    evaluation: { k: 4, split: 'val', seed: 0, concurrency: 32 },
    method: 'whale',
    seed: 0,
    rsft: { batchPrompts: 32, groupSize: 8, learningRate: 1e-4, minibatch: 8, loss: 'token-mean' },
    search: { proposer: 'knob', candidatesPerRound: 3, acceptance: 'archive-best', harnessTasks: 16 },
    schedule: { epochs: 0.5, iterations: 3, cycles: 2 },
    budget: { mode: 'equal-total' },
  };
  if (template === 'tiny')
    Object.assign(config, { ...TINY, domain: own?.domain ?? { id: domain, options: { sizes: { weight: 32, harness: 8, val: 16, test: 16 } } } });
  WhaleConfigSchema.parse(config); // the template must always be a valid config
  return config;
}

/** 'tiny': a phase in a minute or two on a busy CPU — for a first look and for integration tests. */
const TINY = {
  evaluation: { k: 1, split: 'val', seed: 0, concurrency: 16, limit: 16 },
  // G 8: a step of 64 rollouts. With G 2 (16 rollouts) at the base model's ≈ 6% on kbqa, about one first
  // weight phase in three accepted nothing and trained nothing, which is all a first look would show.
  rsft: { batchPrompts: 8, groupSize: 8, learningRate: 1e-4, minibatch: 8, loss: 'token-mean' },
  search: { proposer: 'knob', candidatesPerRound: 1, acceptance: 'archive-best', harnessTasks: 8 },
  schedule: { epochs: 0.25, iterations: 2, cycles: 1 },
  budget: { mode: 'equal-total', rollouts: 400 },
};

/** What every new project gets besides its config: the schema, a fresh run pointer, h0 in the archive, a .gitignore. */
export async function finishProject(dir: string, h0: string): Promise<void> {
  const schema = join(resourcesDir(), 'whale.config.schema.json');
  if (existsSync(schema)) cpSync(schema, join(dir, '.whale-schema.json'));
  // A new config starts a new run: `whale step` must not continue a run made under the old one.
  rmSync(join(dir, '.whale', 'current-run'), { force: true });
  // The archive starts with h0, so the side bar shows the harness before the first run.
  const archive = await HarnessArchive.open(join(dir, '.whale', 'archive.git'));
  projectSecret(join(dir, '.whale')); // generated tasks depend on it (archive/projectSecret.ts)
  await archive.add(h0, { parents: [], message: 'h0: the initial harness', meta: { round: 0, origin: 'seed', hypothesis: 'the initial harness h0' } });
  if (!existsSync(join(dir, '.gitignore'))) writeFileSync(join(dir, '.gitignore'), '.whale/\n');
}

export async function run(values: Values, positionals: string[]): Promise<number> {
  const dir = resolve(positionals[0] ?? '.');
  const domainId = typeof values.domain === 'string' ? values.domain : 'kbqa';
  const domain = await loadDomain(domainId);
  const template = (typeof values.template === 'string' ? values.template : 'standard') as Template;
  if (!TEMPLATES.includes(template)) throw new InputError({ file: '(command line)', field: '--template' }, `must be one of ${TEMPLATES.join(', ')}`);
  const configFile = join(dir, 'whale.config.json');
  if (existsSync(configFile) && !values.force) throw new InputError({ file: configFile }, 'exists; pass --force to overwrite');
  mkdirSync(dir, { recursive: true });
  const h0 = join(dir, 'harnesses', 'h0');
  cpSync(domain.h0Dir, h0, { recursive: true, force: true });
  writeFileSync(
    configFile,
    JSON.stringify(templateConfig(typeof values.name === 'string' ? values.name : `${domainId}-agent`, domainId, template), null, 2) + '\n',
  );
  await finishProject(dir, h0);
  console.log(`created ${configFile} and ${h0} (domain ${domainId}: ${listDomains().find((d) => d.id === domainId)?.title ?? ''})`);
  console.log('next: `whale step` runs one phase, `whale run` the whole schedule, `whale status` shows where it is');
  return 0;
}
