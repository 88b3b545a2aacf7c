#!/usr/bin/env node
// Drives the real workbench like a person — explorer clicks, context menus, the command palette —
// with the extension INSTALLED from the .vsix, and saves a PNG after each step into
// docs/screenshots/. Uses the rig of test/vscode/ (scripts/setup-vscode-it.sh).
//   node scripts/ui-screenshots.mjs [--vsix FILE] [--out DIR] [--only STEP]... [--keep] [--verbose]
// Without --vsix it packages one first (npm run package). To add a screenshot, add a step to STEPS:
// `run(ui)` does what a person would do and waits for what they would see; `shot` names the PNG.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { launchBrowser, locateRig, startServer, teardownOnExit } from '../test/vscode/workbench.mjs';
import { defaultFixture, repo } from '../test/vscode/workspace.mjs';

const STEPS = [
  {
    name: 'project',
    shot: 'project-config.png',
    caption: 'A WHALE project opened in VS Code: whale.config.json and the h0 harness',
    async run(ui) {
      await ui.expandInExplorer('harnesses');
      await ui.expandInExplorer('h0');
      await ui.openFile('whale.config.json', '"backend"');
    },
  },
  {
    name: 'evaluate',
    shot: 'evaluate-candidate.png',
    caption: 'Explorer context menu: Evaluate Candidate runs the harness on the embedded policy',
    async run(ui) {
      await ui.expandInExplorer('harnesses');
      await ui.contextMenu('h0', 'Evaluate Candidate');
      await ui.notification(/WHALE: mean@\d+ = [\d.]+%/, 180_000);
    },
  },
  {
    name: 'log',
    shot: 'whale-log.png',
    caption: 'WHALE: Show Logs — the engine process reports into one log channel',
    async run(ui) {
      await ui.palette('WHALE: Show Logs');
      await ui.page.locator('.part.panel .view-lines', { hasText: 'engine:' }).first().waitFor({ timeout: 30_000 });
    },
  },
  {
    name: 'next-phase',
    shot: 'sidebar-after-next-phase.png',
    caption: 'WHALE: Next Phase runs one phase in the engine process; the side bar shows the paused run, the archive, failing trajectories and notes',
    async run(ui) {
      await ui.palette('WHALE: Next Phase');
      await ui.palette('View: Show WHALE');
      // The run is 'paused' once its phase is done (Next Phase runs exactly one).
      await ui.page.locator('.part.sidebar .monaco-list-row', { hasText: /-whale-[a-z0-9]{4}\s*paused/ }).first().waitFor({ timeout: 420_000 });
    },
  },
  {
    name: 'dashboard',
    shot: 'dashboard.png',
    caption: 'WHALE: Open Dashboard — best-so-far validation mean@k against cumulative rollouts, and the ledger',
    async run(ui) {
      await ui.palette('WHALE: Open Dashboard');
      await ui.page.locator('.editor-group-container .tab.active', { hasText: /Dashboard/ }).waitFor({ timeout: 60_000 });
      await ui.page.waitForTimeout(4_000); // the webview draws after its ready handshake
    },
  },
];

const { values: args } = parseArgs({
  options: { vsix: { type: 'string' }, out: { type: 'string' }, only: { type: 'string', multiple: true }, keep: { type: 'boolean' }, verbose: { type: 'boolean' } },
});
const fail = (msg) => { console.error(`ui-screenshots: ${msg}`); process.exit(1); };
const outDir = resolve(args.out ?? join(repo, 'docs/screenshots'));
const unknown = (args.only ?? []).filter((n) => !STEPS.some((s) => s.name === n));
if (unknown.length) fail(`no step ${unknown.join(', ')} (steps: ${STEPS.map((s) => s.name).join(', ')})`);
const steps = args.only ? STEPS.filter((s) => args.only.includes(s.name)) : STEPS;

let vsix = args.vsix && resolve(args.vsix);
if (!vsix) {
  vsix = join(repo, 'out/whale-ui.vsix');
  const r = spawnSync(process.execPath, [join(repo, 'scripts/package-vsix.mjs'), '--out', vsix], { cwd: repo, stdio: 'inherit' });
  if (r.status !== 0) fail('packaging the .vsix failed');
}
if (!existsSync(vsix)) fail(`${vsix} does not exist`);

const t0 = Date.now();
const say = (...a) => console.log(`[ui +${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);
const teardown = teardownOnExit();
let rig;
try {
  rig = locateRig();
} catch (e) {
  fail(e.message);
}
const server = await startServer({ rig, teardown, fixture: defaultFixture, vsix, logLevel: 'info', keep: args.keep, verbose: args.verbose, say });
const browser = await launchBrowser({ rig, teardown });
const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
if (args.verbose) page.on('console', (m) => console.error('[browser]', m.type(), m.text().slice(0, 500)));
await page.goto(server.url());
await page.locator('.monaco-workbench .part.statusbar').waitFor({ timeout: 120_000 });
const explorerRow = (label) => page.locator('.explorer-folders-view .monaco-list-row', { has: page.locator('.label-name', { hasText: new RegExp(`^${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) }) }).first();
await explorerRow('whale.config.json').waitFor({ timeout: 60_000 });

/** What a person does, with what they would wait for. */
const ui = {
  page,
  async palette(command) {
    await page.keyboard.press('Escape'); // close whatever menu or widget has the focus
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible' });
    await input.fill(`>${command}`);
    await page.locator('.quick-input-list .monaco-list-row', { hasText: command }).first().waitFor({ timeout: 30_000 });
    await page.keyboard.press('Enter');
  },
  async pick(label) {
    const row = page.locator('.quick-input-widget .quick-input-list .monaco-list-row', { hasText: new RegExp(`^\\s*${label}\\b`) }).first();
    await row.waitFor({ timeout: 60_000 });
    await row.click();
  },
  async expandInExplorer(label) {
    const row = explorerRow(label);
    await row.waitFor({ timeout: 30_000 });
    if ((await row.getAttribute('aria-expanded')) !== 'true') await row.click();
  },
  async openFile(label, showing) {
    await explorerRow(label).dblclick();
    await page.locator('.editor-group-container .tab.active', { hasText: label }).waitFor({ timeout: 30_000 });
    await page.locator('.editor-group-container .monaco-editor .view-lines', { hasText: showing }).first().waitFor({ timeout: 60_000 });
  },
  // Extension menu items appear only once the extension host has registered the extension, which
  // can take a while after the explorer shows: reopen the menu until the item is there.
  async contextMenu(label, item, timeout = 90_000) {
    const end = Date.now() + timeout;
    for (;;) {
      await explorerRow(label).click({ button: 'right' });
      const entry = page.locator('.monaco-menu .action-item', { hasText: item }).first();
      if (await entry.waitFor({ timeout: 5_000 }).then(() => true, () => false)) return entry.click();
      await page.keyboard.press('Escape');
      if (Date.now() > end) throw new Error(`no '${item}' in the context menu of '${label}' after ${timeout / 1000}s`);
      await page.waitForTimeout(2_000);
    }
  },
  // VS Code 1.139's workbench raises notifications without a toast in this headless page; the
  // screen reader alert always carries the text. Then open the notification centre, as a person
  // would from the bell, so the picture shows it.
  async notification(text, timeout = 60_000) {
    const alert = page.locator('.monaco-alert', { hasText: text }).or(page.locator('.notification-toast', { hasText: text })).first();
    await alert.waitFor({ state: 'attached', timeout });
    say(`notification: ${(await alert.textContent()).trim()}`);
    if (!(await page.locator('.notification-toast', { hasText: text }).first().isVisible())) {
      await ui.palette('Notifications: Show Notifications');
      await page.locator('.notifications-center .notification-list-item', { hasText: text }).first().waitFor({ timeout: 30_000 });
    }
  },
};

mkdirSync(outDir, { recursive: true });
let failed = 0;
for (const step of steps) {
  try {
    await step.run(ui);
    await page.waitForTimeout(500); // let animations settle so the picture shows the end state
    await page.screenshot({ path: join(outDir, step.shot) });
    say(`${step.name}: ${join(outDir, step.shot)} — ${step.caption}`);
  } catch (e) {
    failed++;
    const shot = join(outDir, `FAILED-${step.shot}`);
    await page.screenshot({ path: shot }).catch(() => {});
    console.error(`ui-screenshots: step '${step.name}' failed: ${e.message.split('\n')[0]} (what the screen showed: ${shot})`);
  }
}
await browser.close().catch(() => {});
await server.stop();
if (args.keep) say(`kept ${server.tmp}`);
say(`${steps.length - failed} of ${steps.length} steps done`);
teardown.runAll();
process.exit(failed ? 1 : 0);
