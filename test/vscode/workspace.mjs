// What both runners (run.mjs for code-server, electron.mjs for desktop VS Code) prepare before a
// session: the list of built suites, a fresh copy of a fixture folder, quiet user settings.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const suitesOut = join(repo, 'out/test/vscode');
export const defaultFixture = join(repo, 'test/vscode/fixtures/project');

/** Names of the built suites (out/test/vscode/NAME.test.cjs), sorted. */
export function builtSuites() {
  if (!existsSync(suitesOut)) return [];
  return readdirSync(suitesOut)
    .filter((f) => f.endsWith('.test.cjs'))
    .map((f) => f.slice(0, -'.test.cjs'.length))
    .sort();
}

/** A suite named *.untrusted runs with Workspace Trust on and its folder untrusted. */
export const untrustedSuite = (name) => name.endsWith('.untrusted');
/** A suite named *.vsix runs against the extension installed from a .vsix, not the development folder. */
export const vsixSuite = (name) => name.endsWith('.vsix');

const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);
const deepMerge = (a, b) =>
  isObject(a) && isObject(b)
    ? Object.fromEntries([...new Set([...Object.keys(a), ...Object.keys(b)])].map((k) => [k, k in b ? deepMerge(a[k], b[k]) : a[k]]))
    : b;

/**
 * Copies `fixture` to a new folder under `parent` and returns its path. A fixture's optional
 * fixture.json may ask for a project scaffolded first by the real `whale init` ("init": {domain,
 * name}), so fixtures carry no copies of a domain's h0, and may merge "config" into the
 * whale.config.json it made (to shrink the template's sizes), and may fix the project secret ("secret").
 * Throws with the file at fault.
 */
export function prepareWorkspace(fixture, parent) {
  const ws = join(parent, basename(fixture));
  mkdirSync(ws, { recursive: true });
  const spec = join(fixture, 'fixture.json');
  if (!existsSync(spec)) {
    cpSync(fixture, ws, { recursive: true });
    return ws;
  }
  let init, config, secret;
  try {
    ({ init, config, secret } = JSON.parse(readFileSync(spec, 'utf8')));
  } catch (e) {
    throw new Error(`${spec}: ${e.message}`);
  }
  if (init) {
    if (typeof init.domain !== 'string') throw new Error(`${spec}: "init.domain" must be a domain id such as "kbqa"`);
    const r = spawnSync(
      process.execPath,
      [join(repo, 'bin/whale.js'), 'init', ws, '--domain', init.domain, '--force', ...(init.name ? ['--name', init.name] : [])],
      { encoding: 'utf8' },
    );
    if (r.status !== 0) throw new Error(`${spec}: whale init failed (exit ${r.status}):\n${r.stdout}${r.stderr}`);
  }
  cpSync(fixture, ws, { recursive: true, filter: (src) => basename(src) !== 'fixture.json' });
  if (secret !== undefined) {
    // Generated tasks depend on the project secret: a fixed one (as test/support/smallProject.ts's
    // TEST_SECRET) gives every session the same tasks, so a weight step trains the same way each time.
    if (typeof secret !== 'string' || !/^[0-9a-f]{64}$/.test(secret)) throw new Error(`${spec}: "secret" must be 64 hex digits`);
    mkdirSync(join(ws, '.whale'), { recursive: true });
    writeFileSync(join(ws, '.whale', 'secret'), secret + '\n', { mode: 0o600 });
  }
  if (config) {
    const file = join(ws, 'whale.config.json');
    if (!existsSync(file)) throw new Error(`${spec}: "config" is given but there is no whale.config.json to merge it into (add "init")`);
    writeFileSync(file, JSON.stringify(deepMerge(JSON.parse(readFileSync(file, 'utf8')), config), null, 2) + '\n');
  }
  return ws;
}

/** User settings that keep an offline test VS Code quiet; `trusted: false` keeps Workspace Trust on without a start-up dialog. */
export function seededSettings(userDataDir, { trusted }) {
  mkdirSync(join(userDataDir, 'User'), { recursive: true });
  writeFileSync(
    join(userDataDir, 'User', 'settings.json'),
    JSON.stringify(
      {
        'chat.disableAIFeatures': true,
        'extensions.autoCheckUpdates': false,
        'extensions.autoUpdate': false,
        'extensions.ignoreRecommendations': true,
        'telemetry.telemetryLevel': 'off',
        'update.mode': 'none',
        'workbench.startupEditor': 'none',
        'workbench.tips.enabled': false,
        'git.autoRepositoryDetection': false,
        'workbench.enableExperiments': false,
        'workbench.secondarySideBar.defaultVisibility': 'hidden',
        'explorer.compactFolders': false,
        'security.workspace.trust.enabled': !trusted,
        ...(trusted ? {} : { 'security.workspace.trust.startupPrompt': 'never', 'security.workspace.trust.emptyWindow': false }),
      },
      null,
      1,
    ),
  );
}
