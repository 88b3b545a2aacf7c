// A throwaway WHALE project for engine and CLI tests: a temp folder holding a copy of the domain's
// h0 as `h0/` and `whale.config.json` written from the test's own settings (small splits, k = 1),
// which stay in each test because they are what the test is about.
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/core/config.js';
import { getDomain } from '../../src/domains/index.js';
import type { EngineProject } from '../../src/engine/engine.js';

export interface SmallProject {
  dir: string;
  configFile: string;
  /** The project as the engine takes it (the config loaded and validated now). */
  engineProject(): EngineProject;
}

/**
 * Generated domains mix the project's secret into every task (archive/projectSecret.ts): a fresh
 * random one per test made outcomes vary from run to run (a weight step with 0 accepted rollouts
 * trains nothing). Tests get this fixed one instead, so each test sees the same tasks every time.
 */
export const TEST_SECRET = '3'.repeat(64);

/** Gives the project in `dir` the fixed test secret (before anything creates a random one). */
export function writeTestSecret(dir: string): void {
  mkdirSync(join(dir, '.whale'), { recursive: true });
  writeFileSync(join(dir, '.whale', 'secret'), TEST_SECRET + '\n', { mode: 0o600 });
}

/** `config` is the whole config but `harness`, which is always the copied `h0`; its `domain.id` picks the h0. */
export function smallProject(prefix: string, config: { domain: { id: string } & Record<string, unknown> } & Record<string, unknown>): SmallProject {
  const dir = mkdtempSync(join(tmpdir(), `whale-${prefix}-`));
  cpSync(getDomain(config.domain.id).h0Dir, join(dir, 'h0'), { recursive: true });
  const configFile = join(dir, 'whale.config.json');
  writeFileSync(configFile, JSON.stringify({ ...config, harness: 'h0' }));
  writeTestSecret(dir);
  return {
    dir,
    configFile,
    engineProject: () => ({ config: { ...loadConfig(configFile), harness: join(dir, 'h0') }, configFile, root: dir, storeDir: join(dir, '.whale') }),
  };
}
