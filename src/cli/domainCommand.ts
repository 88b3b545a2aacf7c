import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, join, relative, resolve } from 'node:path';
import { DomainRefSchema, type DomainRef } from '../core/config.js';
import { setConfigSection } from '../core/configEdit.js';
import { InputError, WhaleError } from '../core/errors.js';
import type { ModelCall } from '../core/trajectory.js';
import { listDomains } from '../domains/index.js';
import { loadProjectDomain, type ProjectDomain } from '../domains/load.js';
import { scaffoldDomain } from '../domains/scaffold.js';
import { SPLITS, type RolloutRecord, type Task } from '../domains/types.js';
import { TEMPLATES } from './choices.js';
import { finishProject, templateConfig } from './initCommand.js';

type Template = (typeof TEMPLATES)[number];
import type { Values } from './command.js';
import { intFlag, resolveProject } from './project.js';

/** An answer no verifier should accept. */
export const WRONG_ANSWER = 'whale domain check: deliberately wrong';

/** The project's own domains: folders under domains/ with an index module or a domain.json. */
export function ownDomains(root: string): { name: string; kind: 'code' | 'data'; path: string }[] {
  const dir = join(root, 'domains');
  if (!existsSync(dir)) return [];
  const out: { name: string; kind: 'code' | 'data'; path: string }[] = [];
  for (const name of readdirSync(dir).sort()) {
    const found = domainInFolder(join(dir, name));
    if (found) out.push({ name, kind: found.module ? 'code' : 'data', path: relative(root, found.module ?? (found.data as string)) });
  }
  return out;
}

function domainInFolder(dir: string): { module?: string; data?: string } | undefined {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return undefined;
  for (const f of ['index.ts', 'index.mts', 'index.js', 'index.mjs']) if (existsSync(join(dir, f))) return { module: join(dir, f) };
  if (existsSync(join(dir, 'domain.json'))) return { data: join(dir, 'domain.json') };
  return undefined;
}

/** NAME as `whale domain check` takes it: a built-in id, a folder under domains/, or a path to a module, a folder or a domain.json. */
function refFor(name: string, root: string): DomainRef {
  if (listDomains().some((d) => d.id === name)) return DomainRefSchema.parse({ id: name });
  for (const p of [join(root, 'domains', name), resolve(name)]) {
    const inFolder = domainInFolder(p);
    if (inFolder) return DomainRefSchema.parse(inFolder.module ? { module: inFolder.module } : { data: inFolder.data });
    if (existsSync(p) && statSync(p).isFile()) return DomainRefSchema.parse(extname(p) === '.json' ? { data: p } : { module: p });
  }
  throw new InputError(
    { file: '(command line)', field: 'NAME' },
    `no domain '${name}': not a built-in (${listDomains()
      .map((d) => d.id)
      .join(', ')}), not a folder under ${join(root, 'domains')}, not a file`,
  );
}

/** A rollout whose model wrote `answer` and whose harness returned it. */
function scriptedRollout(task: Task, answer: string): RolloutRecord {
  const call: ModelCall = {
    index: 0,
    policyVersion: 'check',
    messages: [{ role: 'user', content: task.public.question }],
    params: {},
    completion: answer,
    finishReason: 'stop',
    usage: { promptTokens: 0, completionTokens: 0 },
    latencyMs: 0,
  };
  return { finalAnswer: answer, modelCalls: [call], events: [] };
}

async function judge(domain: ProjectDomain, task: Task, answer: string): Promise<{ pass: boolean; why: string }> {
  try {
    const rollout = scriptedRollout(task, answer);
    const v = await domain.verify(task, rollout);
    const broken = (await domain.checkRules?.(task, rollout)) ?? null;
    if (broken) return { pass: false, why: `rule: ${broken}` };
    return { pass: v.pass, why: v.reason };
  } catch (e) {
    return { pass: false, why: `threw: ${(e as Error).message}` };
  }
}

async function mapLimit<T, R>(items: T[], n: number, f: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await f(items[i]);
      }
    }),
  );
  return out;
}

const clip = (s: string, n: number) => (s.length > n ? s.slice(0, n - 1) + '…' : s).replace(/\n/g, ' ');

async function check(values: Values, name: string | undefined): Promise<number> {
  let ref: DomainRef;
  let root = process.cwd();
  let configFile: string | undefined;
  let storeDir = join(root, '.whale');
  if (name === undefined) {
    const p = resolveProject(values);
    if (!p.configFile) throw new InputError({ file: '(command line)', field: 'NAME' }, 'no whale.config.json here: name a domain (see `whale domains`)');
    ({ root, configFile, storeDir } = p);
    ref = p.config.domain;
  } else ref = refFor(name, root);
  const perSplit = intFlag(values, 'limit') ?? 100;
  // The CLI runs in the user's own terminal: a trusted place for the domain's code.
  const domain = await loadProjectDomain(ref, { baseDir: root, trusted: true, cacheDir: join(storeDir, 'cache'), ...(configFile ? { configFile } : {}) });
  try {
    console.log(`domain ${domain.id} — ${domain.title}`);
    console.log(
      `  ${SPLITS.map((s) => `${s} ${domain.tasks(s).length}`).join(', ')} tasks; tools: ${domain.tools.map((t) => t.name).join(', ') || 'none'}; h0: ${domain.h0Dir}`,
    );
    for (const s of SPLITS) for (const t of domain.tasks(s).slice(0, 2)) console.log(`  [${s}] ${t.id}: ${clip(t.public.question, 100)}`);
    const tasks = SPLITS.flatMap((s) => domain.tasks(s).slice(0, perSplit));
    if (tasks.length === 0) throw new WhaleError(`domain ${domain.id} has no tasks`);
    const golds = await mapLimit(tasks, 8, async (t) => ({ t, gold: (await domain.gold?.(t)) ?? null }));
    const missing = golds.filter((g) => g.gold === null).map((g) => g.t.id);
    const withGold = golds.filter((g): g is { t: Task; gold: string } => g.gold !== null);
    const right = await mapLimit(withGold, 8, async ({ t, gold }) => ({ id: t.id, gold, ...(await judge(domain, t, gold)) }));
    const wrong = await mapLimit(tasks, 8, async (t) => ({ id: t.id, ...(await judge(domain, t, WRONG_ANSWER)) }));
    const failing = right.filter((r) => !r.pass);
    const lenient = wrong.filter((r) => r.pass);
    const pct = (a: number, b: number) => (b === 0 ? 0 : (100 * a) / b).toFixed(1);
    console.log(
      `gold answers: ${right.length - failing.length}/${right.length} pass (${pct(right.length - failing.length, right.length)}%) on the first ${perSplit} tasks of each split`,
    );
    for (const f of failing.slice(0, 20)) console.log(`  FAIL ${f.id}: gold ${JSON.stringify(clip(f.gold, 60))} → ${clip(f.why, 160)}`);
    console.log(`a wrong answer (${JSON.stringify(WRONG_ANSWER)}): ${lenient.length}/${wrong.length} pass (must be 0)`);
    for (const f of lenient.slice(0, 20)) console.log(`  ACCEPTED ${f.id}: ${clip(f.why, 160)}`);
    if (missing.length)
      console.log(
        `no gold answer for ${missing.length} task(s) (${missing.slice(0, 10).join(', ')}${missing.length > 10 ? ', …' : ''}): give the definition gold(task), or private.answer`,
      );
    const ok = failing.length === 0 && lenient.length === 0 && right.length > 0;
    if (!ok) {
      const ids = [...failing, ...lenient].map((f) => f.id);
      console.error(
        `domain check failed${ids.length ? `: ${ids.slice(0, 20).join(', ')}${ids.length > 20 ? ` and ${ids.length - 20} more` : ''}` : ': no task has a gold answer'}`,
      );
      return 1;
    }
    console.log('domain check passed');
    return 0;
  } finally {
    await domain.close();
  }
}

async function create(values: Values, name: string | undefined): Promise<number> {
  if (!name) throw new InputError({ file: '(command line)', field: 'NAME' }, 'usage: whale domain new NAME [--data]');
  const root = resolve(typeof values.dir === 'string' ? values.dir : '.');
  const template = (typeof values.template === 'string' ? values.template : 'tiny') as Template;
  if (!TEMPLATES.includes(template)) throw new InputError({ file: '(command line)', field: '--template' }, `must be one of ${TEMPLATES.join(', ')}`);
  const configFile = join(root, 'whale.config.json');
  const hasConfig = existsSync(configFile);
  const s = scaffoldDomain(root, name, { data: !!values.data, force: !!values.force });
  console.log(`created ${s.dir} (${values.data ? 'data-only domain: domain.json, tasks.jsonl' : 'code domain: index.ts, tasks.jsonl'}, h0/)`);
  if (!hasConfig) {
    writeFileSync(configFile, JSON.stringify(templateConfig(`${name}-agent`, name, template, { domain: s.domain, harness: s.harness }), null, 2) + '\n');
    await finishProject(root, join(root, s.harness));
    console.log(`created ${configFile} using it`);
  } else {
    if (values.use) {
      let text = readFileSync(configFile, 'utf8');
      text = setConfigSection(text, configFile, 'domain', s.domain);
      text = setConfigSection(text, configFile, 'harness', s.harness);
      writeFileSync(configFile, text);
      // A new domain starts a new run, from its own h0 (also put in the archive).
      await finishProject(root, join(root, s.harness));
      console.log(`${basename(configFile)} now uses it (domain and harness)`);
    } else {
      console.log(
        `to use it, set in ${configFile}:\n  "domain": ${JSON.stringify(s.domain)},\n  "harness": ${JSON.stringify(s.harness)}\n(or run again with --use)`,
      );
    }
  }
  console.log(
    `next: \`whale domain check${hasConfig && !values.use ? ` ${name}` : ''}\` runs its verifier on the gold answers; edit ${join(dirname(s.dir), name)} to make it yours`,
  );
  return 0;
}

export async function run(values: Values, positionals: string[]): Promise<number> {
  const [sub, name, ...extra] = positionals;
  if (extra.length) throw new InputError({ file: '(command line)', field: extra[0] }, 'unexpected argument');
  if (sub === 'new') return create(values, name);
  if (sub === 'check') return check(values, name);
  throw new InputError({ file: '(command line)', field: 'SUBCOMMAND' }, `expected 'new' or 'check'${sub ? `, got '${sub}'` : ''}`);
}
