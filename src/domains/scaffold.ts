/**
 * `whale domain new NAME` (and VS Code's New Project → "My own task…"): a domain folder in the
 * project with a worked example — a code domain (`index.ts` with defineDomain) or a data-only one
 * (`domain.json`) — sample tasks, and a generic h0 harness to start the search from.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../core/errors.js';
import { harnessDir, resourcesDir } from './common.js';
import { resolveDomainSdkFile } from './module/assets.js';

export interface ScaffoldResult {
  dir: string;
  /** The `domain` section of whale.config.json that uses it (paths relative to the project). */
  domain: { module: string } | { data: string };
  /** The `harness` field: its h0 folder, relative to the project. */
  harness: string;
}

export const DOMAIN_NAME = /^[a-z0-9][a-z0-9_-]*$/;

/** 60 sample rows: arithmetic with a topic (public) and an answer (private). */
export function sampleTaskRows(): { id: string; question: string; answer: string; topic: string }[] {
  const rows = [];
  for (let i = 0; i < 60; i++) {
    const a = 3 + ((i * 7) % 17);
    const b = 2 + ((i * 5) % 11);
    const op = i % 3;
    const [sym, topic, ans] = op === 0 ? ['+', 'addition', a + b] : op === 1 ? ['-', 'subtraction', a - b] : ['*', 'multiplication', a * b];
    rows.push({ id: `q-${String(i + 1).padStart(3, '0')}`, question: `What is ${a} ${sym} ${b} ?`, answer: String(ans), topic });
  }
  return rows;
}

export function scaffoldDomain(projectDir: string, name: string, opts: { data?: boolean; force?: boolean } = {}): ScaffoldResult {
  if (!DOMAIN_NAME.test(name))
    throw new InputError({ file: '(command line)', field: 'NAME' }, `a domain name is lower-case letters, digits, '-' and '_' (got '${name}')`);
  const dir = join(projectDir, 'domains', name);
  if (existsSync(dir) && readdirSync(dir).length > 0 && !opts.force) throw new InputError({ file: dir }, 'exists and is not empty; pass --force to overwrite');
  mkdirSync(dir, { recursive: true });
  const template = join(resourcesDir(), 'domain-templates', opts.data ? 'data' : 'code');
  for (const f of readdirSync(template)) writeFileSync(join(dir, f), readFileSync(join(template, f), 'utf8').replaceAll('__ID__', name));
  writeFileSync(
    join(dir, 'tasks.jsonl'),
    sampleTaskRows()
      .map((r) => JSON.stringify(r))
      .join('\n') + '\n',
  );
  cpSync(harnessDir('qa-h0'), join(dir, 'h0'), { recursive: true, force: true });
  if (!opts.data) {
    // Types for the editor: `whale/domain` is a copy of the SDK beside the module (the engine bundles its own).
    cpSync(resolveDomainSdkFile(), join(dir, 'whale-domain.ts'));
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify(
        {
          compilerOptions: {
            target: 'ES2022',
            module: 'ESNext',
            moduleResolution: 'Bundler',
            strict: true,
            noEmit: true,
            skipLibCheck: true,
            paths: { 'whale/domain': ['./whale-domain.ts'] },
          },
          include: ['index.ts', 'whale-domain.ts'],
        },
        null,
        2,
      ) + '\n',
    );
  }
  const rel = `./domains/${name}`;
  return { dir, domain: opts.data ? { data: `${rel}/domain.json` } : { module: `${rel}/index.ts` }, harness: `domains/${name}/h0` };
}
