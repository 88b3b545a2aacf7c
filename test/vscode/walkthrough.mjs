#!/usr/bin/env node
// The UI-only walkthrough: a person, with the extension INSTALLED from the .vsix, goes from an
// EMPTY folder to a finished WHALE phase, a candidate diff, an annotated failing trajectory and a
// dashboard curve, using only the workbench — the palette, quick picks, input boxes, tree clicks,
// context menus and the comment widget; no command is called with arguments. Then the faults a
// person meets: a missing API key (asked in a password box, never written to a file) and a window
// closed mid-run (the engine goes on; a new window shows the run live). Each step waits for what a
// person would see, asserts it, and saves a PNG. `npm run test:vscode` runs it after the mocha
// suites; `npm run screenshots` runs it into docs/screenshots/.
//   node --import tsx test/vscode/walkthrough.mjs --vsix FILE [--out DIR] [--keep] [--verbose]
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { FakeLlmServer } from '../support/fakeLlmServer.ts';
import { workbenchUi } from './ui.mjs';
import { launchBrowser, locateRig, startServer, teardownOnExit } from './workbench.mjs';
import { repo } from './workspace.mjs';

const USAGE = 'usage: node --import tsx test/vscode/walkthrough.mjs --vsix FILE [--out DIR] [--timeout SECONDS] [--keep] [--verbose]';
let args;
try {
  args = parseArgs({
    options: {
      vsix: { type: 'string' },
      out: { type: 'string' },
      timeout: { type: 'string', default: '900' },
      keep: { type: 'boolean' },
      verbose: { type: 'boolean' },
    },
  }).values;
} catch (e) {
  console.error(`walkthrough: ${e.message}\n${USAGE}`);
  process.exit(2);
}
const fail = (msg) => {
  console.error(`walkthrough: ${msg}`);
  process.exit(2);
};
if (!args.vsix) fail(`--vsix is required (npm run package makes one)\n${USAGE}`);
const vsix = resolve(args.vsix);
if (!existsSync(vsix)) fail(`${vsix} does not exist`);
const outDir = resolve(args.out ?? join(repo, 'out/walkthrough'));
mkdirSync(outDir, { recursive: true });
for (const f of readdirSync(outDir)) if (f.startsWith('FAILED-')) rmSync(join(outDir, f)); // from an earlier try

const t0 = Date.now();
const say = (...a) => console.log(`[walk +${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);
const teardown = teardownOnExit();
let rig;
try {
  rig = locateRig();
} catch (e) {
  fail(e.message);
}
setTimeout(
  () => {
    console.error(`walkthrough: timed out after ${args.timeout}s`);
    teardown.runAll();
    process.exit(3);
  },
  Number(args.timeout) * 1000,
).unref();

// A key nobody could mistake for anything else, looked for afterwards in every file the run left.
const FAKE_KEY = `sk-ant-whale-walkthrough-${process.pid}-${Date.now().toString(36)}`;
// The proposer's model: a local server speaking the Anthropic Messages API that never proposes.
const fakeLlm = await new FakeLlmServer(() => ({ text: 'The incumbent looks fine; no change proposed.', usage: { input: 200, output: 20 } })).start();
teardown.add(() => void fakeLlm.close());

const env = { ...process.env };
for (const k of ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY']) delete env[k]; // the key must come from the person
const server = await startServer({
  rig,
  teardown,
  fixture: join(repo, 'test/vscode/fixtures/empty'),
  vsix,
  env,
  logLevel: 'info',
  keep: args.keep,
  verbose: args.verbose,
  say,
  // A closed window's extension host is disposed after this many seconds (default: hours).
  serverArgs: ['--reconnection-grace-time', '5'],
});
const ws = server.workspace;
const store = join(ws, '.whale');
const browser = await launchBrowser({ rig, teardown });

async function openWindow() {
  // Wide enough for a side-by-side diff beside the side bar (VS Code goes inline under ~900 px).
  const page = await browser.newPage({ viewport: { width: 1440, height: 840 } });
  if (args.verbose) page.on('console', (m) => console.error('[browser]', m.type(), m.text().slice(0, 500)));
  await page.goto(server.url());
  await page.locator('.monaco-workbench .part.statusbar').waitFor({ timeout: 120_000 });
  return page;
}

const until = async (what, probe, timeout = 120_000, every = 500) => {
  const end = Date.now() + timeout;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeout / 1000}s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, every));
  }
};
const runIds = () => (existsSync(join(store, 'runs')) ? readdirSync(join(store, 'runs')).sort() : []);
const journal = (id) =>
  readFileSync(join(store, 'runs', id, 'journal.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
// Engines are detached from the server's process group on purpose (they outlive a window): a walk
// that fails half-way must not leave one running, so every engine a journal names is ended at exit.
teardown.add(() => {
  for (const id of runIds()) {
    try {
      const pid = journal(id)
        .filter((e) => e.type === 'session_started')
        .pop()?.pid;
      if (pid && alive(pid)) process.kill(-pid, 'SIGKILL');
    } catch {
      // a journal line half written, or the engine already gone
    }
  }
});
const whale = (...a) => spawnSync(process.execPath, [join(repo, 'bin/whale.js'), ...a], { cwd: ws, encoding: 'utf8', env });
const editConfig = (f) => {
  const file = join(ws, 'whale.config.json');
  const c = JSON.parse(readFileSync(file, 'utf8'));
  f(c);
  writeFileSync(file, JSON.stringify(c, null, 2) + '\n');
};
/** Files under `dir` (recursively) whose bytes contain `needle`. */
function filesContaining(dir, needle) {
  const hits = [];
  const walk = (d) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const s = statSync(p, { throwIfNoEntry: false });
      if (!s) continue;
      if (s.isDirectory()) walk(p);
      else if (s.isFile() && readFileSync(p).includes(needle)) hits.push(p);
    }
  };
  if (existsSync(dir)) walk(dir);
  return hits;
}
/** The processes under `pid` whose command line matches `re`. */
function descendants(pid, re) {
  const procs = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map((d) => {
      try {
        const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
        return {
          pid: Number(d),
          ppid: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]),
          cmd: readFileSync(`/proc/${d}/cmdline`, 'utf8').replace(/\0/g, ' '),
        };
      } catch {
        return undefined;
      }
    })
    .filter(Boolean);
  const out = [];
  const visit = (p) =>
    procs
      .filter((x) => x.ppid === p)
      .forEach((x) => {
        out.push(x);
        visit(x.pid);
      });
  visit(pid);
  return out.filter((x) => re.test(x.cmd));
}

let page = await openWindow();
let ui = workbenchUi(page, say);
const editor = () => page.locator('.editor-group-container .editor-instance .monaco-editor').first();

const STEPS = [
  {
    name: 'new-project',
    shot: 'project-config.png',
    caption: 'WHALE: New Project in an empty folder: domain and template picked in quick picks; whale.config.json and harnesses/h0 appear',
    async run() {
      assert.deepEqual(readdirSync(ws), [], 'the walkthrough starts from an empty folder');
      await ui.palette('WHALE: New Project');
      await ui.pick('kbqa');
      await ui.pick('tiny');
      await ui.expandInExplorer('harnesses');
      await ui.explorerRow('h0').waitFor({ timeout: 60_000 });
      await ui.explorerRow('whale.config.json').waitFor({ timeout: 60_000 });
      await page.locator('.editor-group-container .tab.active', { hasText: 'whale.config.json' }).waitFor({ timeout: 60_000 });
      await editor().locator('.view-lines', { hasText: '"kbqa"' }).waitFor({ timeout: 60_000 });
      assert.ok(existsSync(join(ws, 'harnesses/h0/harness.json')), 'h0 was scaffolded on disk');
      // New Project drew a random project secret, and kbqa's tasks depend on it: the unit tests' fixed
      // one (test/support/smallProject.ts) makes every later step see the same tasks on every machine.
      writeFileSync(join(ws, '.whale', 'secret'), '3'.repeat(64) + '\n', { mode: 0o600 });
    },
  },
  {
    name: 'evaluate',
    shot: 'evaluate-candidate.png',
    caption: 'Explorer context menu: Evaluate Candidate runs the harness on the embedded policy',
    async run() {
      await ui.contextMenu('h0', 'Evaluate Candidate');
      await ui.notification(/WHALE: mean@\d+( on the \w+ split)? = [\d.]+%/, 180_000);
    },
  },
  {
    name: 'log',
    shot: 'whale-log.png',
    caption: 'WHALE: Show Logs — the engine process reports into one log channel',
    async run() {
      await ui.palette('WHALE: Show Logs');
      await page.locator('.part.panel .view-lines', { hasText: 'engine:' }).first().waitFor({ timeout: 30_000 });
    },
  },
  {
    name: 'weight-phase',
    shot: 'sidebar-after-next-phase.png',
    caption:
      'WHALE: Next Phase runs one phase (here the weight phase) in the engine process; the Runs view shows the run paused after it, with val mean@k and rollouts',
    async run() {
      await ui.palette('View: Hide Panel');
      await ui.palette('WHALE: Next Phase');
      await ui.showView('Runs');
      await ui.resizeSideBar(560);
      const run = ui.paneRow('Runs', /-whale-[a-z0-9]{4}\s*paused/);
      await run.waitFor({ timeout: 300_000 });
      await ui.expandRow(run);
      await ui.paneRow('Runs', /phase 0: weight.*val mean@1 [\d.]+% .*\d+ rollouts/).waitFor({ timeout: 60_000 });
    },
  },
  {
    name: 'harness-phase',
    shot: 'runs-after-harness-phase.png',
    caption: 'A second Next Phase runs the harness phase: the knob proposer writes a candidate, scored on the harness split; the run is finished',
    async run() {
      await ui.palette('WHALE: Next Phase');
      await ui.paneRow('Runs', /-whale-[a-z0-9]{4}\s*finished/).waitFor({ timeout: 300_000 });
      await ui.paneRow('Runs', /phase 1: harness.*round \d+.*scored.*rollouts/).waitFor({ timeout: 60_000 });
    },
  },
  {
    name: 'diff',
    shot: 'candidate-diff.png',
    caption: "Harness Archive → a candidate's context menu → Diff with Parent: the candidate's change against h0",
    async run() {
      const archive = await ui.showView('Harness Archive');
      await ui.resizeSideBar(340); // the diff editor goes inline when it is narrow
      const root = archive.locator('.monaco-list-row[aria-level="1"]').first();
      await ui.expandRow(root);
      const child = archive.locator('.monaco-list-row[aria-level="2"]', { hasText: /^\s*[0-9a-f]{8} / }).first();
      await ui.contextMenu(child, 'Diff with Parent');
      const diff = page.locator('.monaco-diff-editor').first();
      await diff.waitFor({ timeout: 60_000 });
      const side = (which) => diff.locator(`.editor.${which} .view-lines`).first();
      await side('original').waitFor({ timeout: 30_000 });
      await side('modified').waitFor({ timeout: 30_000 });
      await until(
        'both sides of the diff to show text',
        async () => (await side('original').innerText()).trim() && (await side('modified').innerText()).trim(),
        30_000,
      );
      await diff.locator('.line-insert, .char-insert, .line-delete, .char-delete').first().waitFor({ timeout: 30_000 });
      assert.notEqual(await side('original').innerText(), await side('modified').innerText(), 'the two sides of the diff differ');
      const [left, right] = [await diff.locator('.editor.original').first().boundingBox(), await diff.locator('.editor.modified').first().boundingBox()];
      assert.ok(left && right && left.width > 100 && right.x >= left.x + left.width - 1, 'the diff shows its two sides next to each other');
      await page.locator('.editor-group-container .tab.active', { hasText: '↔' }).waitFor({ timeout: 10_000 });
    },
  },
  {
    name: 'trajectory',
    shot: 'failing-trajectory.png',
    caption: 'Failing Trajectories → run → candidate → task → a failing sample: the transcript, its FAIL verdict marked',
    async run() {
      const failing = await ui.showView('Failing Trajectories');
      // Grouped by run: the current run's row (open), its candidates, their failing tasks, the samples.
      await ui.expandRow(failing.locator('.monaco-list-row[aria-level="1"]', { hasText: 'current run' }).first());
      await ui.expandRow(failing.locator('.monaco-list-row[aria-level="2"]').first());
      await ui.expandRow(failing.locator('.monaco-list-row[aria-level="3"]').first());
      await failing.locator('.monaco-list-row[aria-level="4"]', { hasText: 'sample' }).first().click();
      const verdict = editor()
        .locator('.view-line', { hasText: /^verdict\s+FAIL/ })
        .first();
      await verdict.waitFor({ timeout: 60_000 });
      // The fail decoration: a whole-line background on the verdict's line, in the editor's overlays.
      const top = await verdict.evaluate((el) => el.style.top);
      await until(
        'the fail decoration on the verdict line',
        () =>
          editor().evaluate(
            (ed, t) =>
              [...ed.querySelectorAll('.view-overlays > div')].some(
                (line) =>
                  line.style.top === t &&
                  [...line.children].some((c) => !c.classList.contains('current-line') && getComputedStyle(c).backgroundColor !== 'rgba(0, 0, 0, 0)'),
              ),
            top,
          ),
        30_000,
      );
    },
  },
  {
    name: 'note',
    shot: 'trajectory-note.png',
    caption: 'A note through the comment widget (the "+" in the gutter): saved in the run store, listed in the Notes view',
    async run() {
      const text = `walkthrough note ${Date.now().toString(36)}: the agent answered before searching`;
      const verdict = editor()
        .locator('.view-line', { hasText: /^verdict\s+FAIL/ })
        .first();
      const top = await verdict.evaluate((el) => el.style.top);
      const gutterLine = editor()
        .locator('.margin-view-overlays > div')
        .filter({ has: page.locator('.comment-range-glyph') });
      const glyph = editor()
        .locator(
          `.margin-view-overlays > div[style*="top:${top.replace('px', '')}px"] .comment-range-glyph, .margin-view-overlays > div[style*="top: ${top}"] .comment-range-glyph`,
        )
        .first();
      await gutterLine.first().waitFor({ timeout: 30_000 }); // the commenting range is drawn
      await verdict.hover();
      await glyph.hover();
      await glyph.click();
      const form = page.locator('.review-widget .comment-form').first();
      await form.waitFor({ timeout: 30_000 });
      await form.locator('textarea, .monaco-editor').first().click();
      await page.keyboard.type(text);
      await page.locator('.review-widget .monaco-button', { hasText: 'Save Note' }).first().click();
      await page.locator('.review-widget .comment-body', { hasText: text }).first().waitFor({ timeout: 30_000 });
      const [run] = runIds().slice(-1);
      const file = join(store, 'runs', run, 'annotations.jsonl');
      const saved = await until(
        `the note in ${file}`,
        () =>
          existsSync(file) &&
          readFileSync(file, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l))
            .find((n) => n.text === text),
        30_000,
      );
      assert.ok(saved.trajectoryId, 'the stored note names its trajectory');
      const notes = await ui.showView('Notes');
      await notes
        .locator('.monaco-list-row', { hasText: text.split('\n')[0].slice(0, 30) })
        .first()
        .waitFor({ timeout: 60_000 });
    },
  },
  {
    name: 'dashboard',
    shot: 'dashboard.png',
    caption: 'WHALE: Open Dashboard — best-so-far validation mean@k against cumulative rollouts, and the ledger',
    async run() {
      await ui.palette('WHALE: Open Dashboard');
      await page.locator('.editor-group-container .tab.active', { hasText: /Dashboard/ }).waitFor({ timeout: 60_000 });
      const [run] = runIds().slice(-1);
      // The webview's document is an iframe in an iframe; find the one with the chart and count the
      // canvas pixels that were painted.
      const painted = await until(
        'the dashboard chart drawn on its canvas',
        async () => {
          for (const frame of page.frames()) {
            const r = await frame
              .evaluate(() => {
                const canvas = document.querySelector('canvas');
                if (!canvas || !canvas.width) return undefined;
                const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
                let n = 0;
                for (let i = 3; i < data.length; i += 4) if (data[i] > 0) n++;
                return { painted: n, text: document.body.innerText };
              })
              .catch(() => undefined);
            if (r && r.painted > 200 && r.text.includes(run)) return r;
          }
          return undefined;
        },
        90_000,
        1000,
      );
      say(`dashboard: ${painted.painted} painted pixels, the legend names ${run}`);
    },
  },
  ...researcherSteps(),
  {
    name: 'api-key',
    shot: 'api-key-prompt.png',
    caption: "With the llm proposer and no key anywhere, WHALE: Run asks for it in a password box; it goes to SecretStorage and the engine's environment only",
    async run() {
      editConfig((c) => {
        c.search = {
          ...c.search,
          proposer: 'llm',
          llm: {
            provider: 'anthropic',
            model: 'claude-walkthrough',
            baseUrl: fakeLlm.anthropicBaseUrl,
            price: { inputPerMillion: 1, outputPerMillion: 1 },
            retryBaseMs: 50,
            retryMaxMs: 200,
          },
        };
      });
      const before = runIds();
      await ui.palette('WHALE: Run');
      await ui.pick('Start a new run'); // the latest run is finished: Run asks before starting a new one
      const box = page.locator('.quick-input-widget', { hasText: /Anthropic API key for the llm proposer/ });
      await box.waitFor({ state: 'visible', timeout: 60_000 });
      await box.locator('input').first().fill(FAKE_KEY);
      await page.waitForTimeout(500); // the box fades in
      await page.screenshot({ path: join(outDir, 'api-key-prompt.png') });
      assert.equal(await box.locator('input').first().getAttribute('type'), 'password', 'the key is typed into a password box');
      await page.keyboard.press('Enter');
      // The engine got it — by environment, since nothing else carries it — and sent it to the model
      // (the SDK sends it as x-api-key or as a bearer token, by version).
      const call = await until(
        'the proposer to call the model with the key',
        () => fakeLlm.requests.find((r) => r.headers['x-api-key'] === FAKE_KEY || r.headers.authorization === `Bearer ${FAKE_KEY}`),
        120_000,
      ).catch((e) => {
        throw new Error(
          `${e.message}; the model got ${fakeLlm.requests.length} request(s), with key headers ${JSON.stringify(fakeLlm.requests.map((r) => [r.headers['x-api-key'], r.headers.authorization]))}`,
        );
      });
      say(`the fake model got ${fakeLlm.requests.length} request(s); the first with the typed key at request ${call.index}`);
      const run = await until('the new run', () => runIds().find((id) => !before.includes(id)), 60_000);
      await ui.showView('Runs');
      await ui.paneRow('Runs', new RegExp(`${run}\\s*finished`)).waitFor({ timeout: 300_000 });
      // Everything this VS Code wrote: the workspace with its run store and engine logs, the user
      // data with the extension's log, settings and state, the installed extension.
      const leaks = filesContaining(server.tmp, FAKE_KEY);
      assert.deepEqual(leaks, [], `the key was written to ${leaks.join(', ')}`);
    },
    // the picture is taken with the box showing, above
    noFinalShot: true,
  },
  ...llmFromHereSteps(),
  {
    name: 'window-close',
    shot: 'run-after-window-closed.png',
    caption: 'WHALE: Run, the window closed mid-run: the engine goes on; a new window shows the run live, and Stop ends it at a safe point',
    async run() {
      editConfig((c) => {
        c.schedule = { ...c.schedule, cycles: 50 };
        c.budget = { ...c.budget, rollouts: 100_000 };
      });
      const before = runIds();
      await ui.palette('WHALE: Run');
      await ui.pick('Start a new run'); // the latest run is finished: Run asks before starting a new one
      const run = await until('the new run', () => runIds().find((id) => !before.includes(id)), 60_000);
      // The key typed in the last step is in SecretStorage: no prompt this time.
      await ui.paneRow('Runs', new RegExp(`${run}\\s*running`)).waitFor({ timeout: 120_000 });
      assert.equal(await page.locator('.quick-input-widget', { hasText: /API key/ }).isVisible(), false, 'the stored key is not asked for again');
      const pid = journal(run)
        .filter((e) => e.type === 'session_started')
        .pop().pid;
      const hosts = descendants(server.pid, /extensionHost|bootstrap-fork.*--type=extensionHost/);
      assert.ok(hosts.length > 0, 'found no extension host process under the server');
      say(`run ${run}: engine pid ${pid}; extension host(s) ${hosts.map((h) => h.pid).join(', ')}; closing the window`);
      await page.close();
      await until("the closed window's extension host to end", () => hosts.every((h) => !alive(h.pid)), 120_000, 1000);
      const seen = journal(run).length;
      assert.ok(alive(pid), `the engine (pid ${pid}) was killed with the window`);
      await until('the engine to go on writing its journal without a window', () => journal(run).length > seen, 120_000, 1000);
      assert.ok(!journal(run).some((e) => e.type === 'run_completed'), 'the run was still going when the new window opened');
      page = await openWindow();
      ui = workbenchUi(page, say);
      await ui.showView('Runs');
      await ui.paneRow('Runs', new RegExp(`${run}\\s*running`)).waitFor({ timeout: 120_000 });
      const shown = journal(run).length;
      await until('the reopened window to follow the run live', async () => journal(run).length > shown, 120_000, 1000);
      await ui.palette('WHALE: Stop');
      await ui.paneRow('Runs', new RegExp(`${run}\\s*(stopped|paused)`)).waitFor({ timeout: 300_000 });
      await until(`the engine (pid ${pid}) to exit`, () => !alive(pid), 60_000);
      await ui.expandRow(ui.paneRow('Runs', run));
      const status = whale('status');
      assert.equal(status.status, 0, `whale status failed:\n${status.stdout}${status.stderr}`);
      assert.match(status.stdout, new RegExp(`run ${run}: (in progress or resumable|stop requested)`));
      for (const [i, line] of readFileSync(join(store, 'runs', run, 'journal.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .entries()) {
        assert.doesNotThrow(() => JSON.parse(line), `journal line ${i + 1} of ${run} is not JSON`);
      }
      say(`whale status: ${status.stdout.trim().split('\n')[0]}`);
    },
  },
];

// ---- The researcher's dashboard and `whale report` beside it (issue #16, items 2 and 7) ----------
// Right after the dashboard step: the same dashboard read at 1400×900 (curves with phases, training
// signals, candidates per round, diagnostics, the ledger), then its Open Report button.
function researcherDashboardSteps() {
  const VIEWPORT = { width: 1440, height: 840 }; // openWindow's, restored after these steps
  /** The frame holding the dashboard's document (an iframe in the webview's iframe). */
  const dashboardFrame = () =>
    until('the dashboard webview document', async () => {
      for (const f of page.frames())
        if (
          (await f
            .locator('#chart-curve')
            .count()
            .catch(() => 0)) > 0
        )
          return f;
      return undefined;
    });
  const texts = (frame, selector) => frame.locator(selector).allTextContents();
  return [
    {
      name: 'dashboard-detail',
      shot: 'dashboard-detail.png',
      caption:
        "The dashboard at 1400×900: best-so-far with ±se bands, the run's W/H phases shaded and its sealed test; training signals per weight step; candidates per round, the accepted one marked; diagnostics per phase; the whole ledger",
      async run() {
        await page.setViewportSize({ width: 1400, height: 900 });
        await ui.palette('View: Hide Panel'); // the note's Comments panel would take half the height
        const [run] = runIds().slice(-1);
        const entries = journal(run);
        const frame = await dashboardFrame();
        for (const chart of ['#chart-curve', '#chart-training', '#chart-rounds']) await frame.locator(`${chart} canvas`).first().waitFor({ timeout: 60_000 });
        await frame.locator('#ledger tbody tr', { hasText: run }).waitFor({ timeout: 60_000 });
        const legend = (id) => texts(frame, `#${id} .u-legend .u-series:not(.whale-hidden) .u-label`);
        const [curve, training, rounds] = [await legend('chart-curve'), await legend('chart-training'), await legend('chart-rounds')];
        assert.deepEqual(curve.slice(1), ['whale seed 0', 'sealed test · whale seed 0'], `curve legend: ${curve}`);
        assert.deepEqual(training.slice(1, 4), ['mean reward', 'accepted', 'truncation']);
        assert.deepEqual(rounds.slice(1), ['candidate', 'accepted']);
        assert.equal(await frame.locator('#focus').inputValue(), run, 'the detail charts show the run');
        const acceptance = entries.find((e) => e.type === 'acceptance');
        const [accepted] = await texts(frame, '#acceptances li');
        assert.match(accepted, new RegExp(`^H${acceptance.phase}: ${acceptance.rule}: ${acceptance.chosen.slice(0, 8)}`));
        const diagnostics = await frame.locator('#diagnostics tbody tr').evaluateAll((rows) => rows.map((r) => [...r.cells].map((c) => c.textContent)));
        assert.deepEqual(
          diagnostics.map((r) => `${r[0]} ${r[1]}`),
          ['start val', 'W0 weight', 'W0 val', 'H1 harness', 'H1 val', 'test test'],
        );
        const status = JSON.parse(whale('status', '--json').stdout)[0].state.ledger;
        const row = await frame.locator('#ledger tbody tr', { hasText: run }).locator('td').allTextContents();
        const int = (x) => Math.round(x).toLocaleString('en-US');
        assert.deepEqual(row.slice(7, 11), [
          int(status.trainingRollouts),
          int(status.searchRollouts),
          int(status.trainingRollouts + status.searchRollouts),
          int(status.evalRollouts),
        ]);
        // Reads at a glance: two columns of cards, and the ledger whole without scrolling sideways,
        // once the webview has laid itself out at the new window size. A ledger still cut after the
        // wait is a real overflow (stop 18: unwrappable cells); the message says by how many pixels.
        const measure = () =>
          frame.evaluate(() => ({
            columns: getComputedStyle(document.querySelector('.grid')).gridTemplateColumns.split(' ').length,
            ledgerCut: document.querySelector('#ledger').scrollWidth > document.querySelector('#ledger').parentElement.clientWidth + 1,
          }));
        const widths = () =>
          frame.evaluate(() => {
            const table = document.querySelector('#ledger');
            table.style.width = 'min-content';
            const least = table.offsetWidth;
            table.style.width = '';
            return `the ledger needs ${least} of ${table.parentElement.clientWidth} px`;
          });
        await until(
          'the dashboard laid out in two columns with the ledger whole',
          async () => {
            const l = await measure();
            return l.columns === 2 && !l.ledgerCut ? true : undefined;
          },
          15_000,
        ).catch(() => {});
        const layout = await measure();
        assert.deepEqual(layout, { columns: 2, ledgerCut: false }, `${await widths()}; ledger row: ${JSON.stringify(row)}`);
        await page.mouse.move(900, 500); // no tab tooltip over the picture
        say(
          `dashboard detail: ${curve.length - 1} curve series, ${diagnostics.length} diagnostics rows, ledger ${row.slice(7, 11).join(' / ')}, ${await widths()}`,
        );
      },
    },
    {
      name: 'report-preview',
      shot: 'report-preview.png',
      noFinalShot: true,
      caption: "The dashboard's Open Report: the real whale report of the picked runs, rendered as a Markdown preview beside the dashboard, charts included",
      async run() {
        const [run] = runIds().slice(-1);
        const frame = await dashboardFrame();
        await frame.locator('#report').click();
        await page.locator('.tab', { hasText: 'Preview report.md' }).waitFor({ timeout: 120_000 });
        const shown = await until(
          'the rendered report with its charts loaded',
          async () => {
            for (const f of page.frames()) {
              const r = await f
                .evaluate(() => {
                  const h1 = document.querySelector('h1');
                  if (!h1 || !/WHALE report/.test(h1.textContent ?? '')) return undefined;
                  const imgs = [...document.images];
                  return { images: imgs.length, loaded: imgs.filter((i) => i.complete && i.naturalWidth > 0).length, text: document.body.innerText };
                })
                .catch(() => undefined);
              if (r && r.images >= 2 && r.loaded === r.images) {
                // The picture shows the first chart, not only the table above it.
                await f.evaluate(() => document.images[0].scrollIntoView({ block: 'center' }));
                return r;
              }
            }
            return undefined;
          },
          120_000,
          1000,
        );
        assert.match(shown.text, new RegExp(run));
        // Beside the dashboard: two editor groups, the dashboard in one and the preview in the other.
        const groups = await page
          .locator('.editor-group-container')
          .evaluateAll((gs) => gs.map((g) => [...g.querySelectorAll('.tab')].map((t) => t.textContent)));
        const withPreview = groups.findIndex((tabs) => tabs.some((t) => /Preview report\.md/.test(t)));
        const withDashboard = groups.findIndex((tabs) => tabs.some((t) => /WHALE Dashboard/.test(t)));
        assert.ok(withPreview >= 0 && withDashboard >= 0 && withPreview !== withDashboard, JSON.stringify(groups));
        // In its half of the editor the dashboard reflows to one column of cards.
        await until('the dashboard in one column', async () =>
          (await frame.evaluate(() => getComputedStyle(document.querySelector('.grid')).gridTemplateColumns.split(' ').length)) === 1 ? true : undefined,
        );
        await page.waitForTimeout(500);
        await page.screenshot({ path: join(outDir, 'report-preview.png') });
        say(`report preview: ${shown.images} charts loaded beside the dashboard`);
        // Leave the workbench as the next steps expect it: the preview closed, the window its usual size.
        // By its tab's close button: the palette from inside the preview's webview raced its forwarded keys.
        const previewTab = page.locator('.tab', { hasText: 'Preview report.md' });
        await previewTab.hover();
        await previewTab.locator('.tab-actions .action-label').click();
        await previewTab.waitFor({ state: 'detached', timeout: 30_000 });
        await page.setViewportSize(VIEWPORT);
      },
    },
  ];
}
// ── A researcher's steps (issue #16, items 5, 6, 9, 10 and the proposer session): the walkthrough's
// state checked, Evaluate from an archive row, Compare as a preview, the Runs rows that open what
// they name, and the llm proposer seeded from a candidate. One block, after the shared steps.
/** The webview frame whose document shows `text` (a Markdown preview, the walkthrough page). */
async function frameShowing(text, timeout = 60_000) {
  const end = Date.now() + timeout;
  for (;;) {
    for (const frame of page.frames()) {
      const body = await frame.evaluate(() => document.body?.innerText ?? '').catch(() => '');
      if (text.test(body)) return { frame, body };
    }
    if (Date.now() > end) throw new Error(`no webview showed ${text} after ${timeout / 1000}s`);
    await page.waitForTimeout(500);
  }
}
/** The quick pick's rows as a person reads them (label and description). */
const pickRows = () => page.locator('.quick-input-widget .quick-input-list .monaco-list-row').allInnerTexts();
const latestRun = () => runIds().slice(-1)[0];
/** A Runs row by its exact label (a row's text runs label and description together: "round 11 scored"). */
const runsRowLabelled = (label) =>
  ui
    .pane('Runs')
    .locator('.monaco-list-row', { has: page.locator('.label-name', { hasText: new RegExp(`^\\s*${label}\\s*$`) }) })
    .first();

function researcherSteps() {
  return [
    {
      name: 'onboarding',
      shot: 'walkthrough-progress.png',
      caption: "Welcome → Get started with WHALE in a project that has a run: the steps done are checked from the project's state, each with its picture",
      async run() {
        // The Comments panel of the note step: room for the page. An earlier step may have hidden it
        // already, and then the palette has no 'View: Hide Panel' to offer.
        if (await page.locator('.part.panel').isVisible()) await ui.palette('View: Hide Panel');
        await ui.palette('Welcome: Open Walkthrough...');
        await ui.pick('Get started with WHALE');
        const steps = page.locator('.getting-started-step');
        await steps.first().waitFor({ timeout: 60_000 });
        // New project, a run, a derived candidate: three steps checked without clicking them.
        const checked = page.locator('.getting-started-step[aria-checked="true"]');
        await until('three steps checked from the state', async () => (await checked.count()) >= 3, 60_000);
        const done = (await checked.locator('.step-title').allInnerTexts()).map((t) => t.trim());
        say(`walkthrough steps checked: ${done.join(' | ')}`);
        for (const t of ['Create a project', 'Run one phase', 'Read the archive']) assert.ok(done.includes(t), `'${t}' is checked (${done.join(', ')})`);
        const img = page.locator('.getting-started-media img').first();
        await img.waitFor({ timeout: 30_000 });
        await until('the step picture loaded', () => img.evaluate((el) => el.complete && el.naturalWidth > 100), 30_000);
      },
    },
    {
      name: 'evaluate-row',
      shot: 'evaluate-from-archive.png',
      caption:
        'Harness Archive → a candidate → Evaluate Candidate: the policy and split picked, progress in the status bar, the result named and a row of the tree',
      async run() {
        await ui.palette('View: Close All Editors');
        const archive = await ui.showView('Harness Archive');
        await ui.resizeSideBar(560);
        await ui.expandRow(archive.locator('.monaco-list-row[aria-level="1"]').first());
        const child = archive.locator('.monaco-list-row[aria-level="2"]', { hasText: /^\s*[0-9a-f]{8} / }).first();
        const hash = (await child.innerText()).trim().slice(0, 8);
        await ui.contextMenu(child, 'Evaluate Candidate');
        await page.locator('.quick-input-widget', { hasText: 'under which policy?' }).waitFor({ timeout: 60_000 });
        const policies = await pickRows();
        say(`policies offered: ${policies.map((r) => r.replace(/\s+/g, ' ')).join(' | ')}`);
        assert.ok(policies.some((r) => /^base/.test(r)) && policies.some((r) => /policy after phase \d/.test(r)), 'policies are offered by name');
        await ui.pick('base'); // never measured on val under base: real rollouts, so the progress shows
        await ui.pick('val');
        const bar = page.locator('.part.statusbar .statusbar-item', { hasText: /WHALE: evaluating/ }).first();
        await bar.waitFor({ timeout: 60_000 });
        say(`status bar: ${(await bar.innerText()).trim()}`);
        assert.match(await bar.innerText(), new RegExp(`WHALE: evaluating ${hash} on val under base`));
        await page.screenshot({ path: join(outDir, 'evaluate-progress.png') });
        await ui.notification(new RegExp(`WHALE: ${hash}: mean@\\d+ on the val split = [\\d.]+% ± [\\d.]+ · under base`), 180_000);
        await ui.palette('Notifications: Clear All Notifications');
        await ui.expandRow(child);
        await archive
          .locator('.monaco-list-row[aria-level="3"]', { hasText: /mean@1 on val\s*[\d.]+% ± [\d.]+ under base/ })
          .first()
          .waitFor({ timeout: 60_000 });
      },
    },
    {
      name: 'compare',
      shot: 'compare-preview.png',
      caption:
        'Compare Candidates: a picker sorted by score with accepted and incumbent marked; the diff beside a rendered table that says which figures are like with like',
      async run() {
        await ui.palette('WHALE: Compare Candidates');
        await page.locator('.quick-input-widget', { hasText: 'Compare Candidates (1/2)' }).waitFor({ timeout: 60_000 });
        const rows = await pickRows();
        say(`picker: ${rows.map((r) => r.replace(/\s+/g, ' ')).join(' | ')}`);
        assert.ok(
          rows.some((r) => /✓ accepted/.test(r)),
          'accepted candidates are marked in the picker',
        );
        assert.ok(/\d+\.\d% ± /.test(rows[0]), 'the best-scored candidate comes first');
        await page.screenshot({ path: join(outDir, 'compare-picker.png') });
        await page.keyboard.press('Enter');
        await page.locator('.quick-input-widget', { hasText: '(2/2)' }).waitFor({ timeout: 60_000 });
        await page.keyboard.press('Enter');
        await page.locator('.monaco-diff-editor').first().waitFor({ timeout: 60_000 });
        const { body } = await frameShowing(/Compared like with like|Not comparable yet/);
        assert.ok(!body.includes('|---|'), 'the table is rendered, not raw Markdown');
      },
    },
    {
      name: 'proposer-session',
      shot: 'proposer-session.png',
      caption:
        "Runs → a round's proposer row: the session as a rendered document (its candidates and their fate, the conversation, the report), not a JSONL log",
      async run() {
        await ui.palette('View: Close All Editors');
        await ui.showView('Runs');
        await ui.resizeSideBar(560);
        const run = ui.paneRow('Runs', new RegExp(`${latestRun()}\\s*finished`));
        await ui.expandRow(run);
        await ui.expandRow(ui.paneRow('Runs', /phase 1: harness/));
        await ui.expandRow(runsRowLabelled('round 1'));
        await runsRowLabelled('round 1: knob proposer').click();
        await frameShowing(/Proposer session — run .*, phase 1, round 1[\s\S]*Candidates it wrote[\s\S]*Report/);
      },
    },
    {
      name: 'phase-candidates',
      shot: 'phase-candidates.png',
      caption: "Runs → a harness phase's row: its candidates, the accepted one first, each with its score; picking one opens its change",
      async run() {
        await ui.palette('View: Close All Editors');
        await ui
          .paneRow('Runs', /phase 1: harness/)
          .locator('.label-name, .monaco-icon-label')
          .first()
          .click();
        await page.locator('.quick-input-widget', { hasText: /phase 1 \(harness\) of .*candidate\(s\) under/ }).waitFor({ timeout: 60_000 });
        const rows = await pickRows();
        say(`phase candidates: ${rows.map((r) => r.replace(/\s+/g, ' ')).join(' | ')}`);
        assert.match(rows[0], /round \d+ · [\d.]+% ± [\d.]+.*✓ accepted/, 'the accepted candidate first');
        await page.screenshot({ path: join(outDir, 'phase-candidates.png') });
        await page.keyboard.press('Escape');
      },
      noFinalShot: true,
    },
    {
      name: 'sealed-test',
      shot: 'sealed-test-transcripts.png',
      caption: "Runs → sealed test: the test split's rollouts, failures first; picking one opens its transcript",
      async run() {
        await ui.paneRow('Runs', /sealed test/).click();
        await page.locator('.quick-input-widget', { hasText: /sealed test of .*: \d+ of \d+ rollouts failed/ }).waitFor({ timeout: 60_000 });
        const rows = await pickRows();
        assert.match(rows[0], /^[✗✓?] \S+ · sample \d+/);
        await page.keyboard.press('Enter');
        await editor()
          .locator('.view-line', { hasText: /^verdict\s+(PASS|FAIL)/ })
          .first()
          .waitFor({ timeout: 60_000 });
      },
    },
  ];
}

function llmFromHereSteps() {
  return [
    {
      name: 'llm-from-here',
      shot: 'llm-proposer-session.png',
      caption:
        'Harness Archive → a candidate → Propose from Here with the LLM…: the next llm round starts from it (the model is told so); its session opens as a rendered document',
      async run() {
        const direction = 'quote the passage before answering';
        await ui.palette('View: Close All Editors');
        const archive = await ui.showView('Harness Archive');
        const child = archive.locator('.monaco-list-row[aria-level="2"]', { hasText: /^\s*[0-9a-f]{8} / }).first();
        const hash = (await child.innerText()).trim().slice(0, 8);
        await ui.contextMenu(child, 'Propose from Here with the LLM…');
        await ui.answerInputBox(direction, /Propose from [0-9a-f]{8} with the LLM/);
        await ui.notification(new RegExp(`the llm proposer's next round starts from ${hash} instead of the incumbent`));
        assert.equal(JSON.parse(readFileSync(join(store, 'proposal-seed.json'), 'utf8')).treeHash.slice(0, 8), hash);
        await ui.palette('Notifications: Clear All Notifications');
        const before = runIds();
        const seen = fakeLlm.requests.length;
        await ui.palette('WHALE: Next Phase');
        await ui.pick('Start a new run');
        const run = await until('the new run', () => runIds().find((id) => !before.includes(id)), 60_000);
        await ui.showView('Runs');
        await ui.paneRow('Runs', new RegExp(`${run}\\s*paused`)).waitFor({ timeout: 300_000 });
        await ui.palette('WHALE: Next Phase');
        await ui.paneRow('Runs', new RegExp(`${run}\\s*finished`)).waitFor({ timeout: 300_000 });
        const asked = fakeLlm.requests.slice(seen).find((r) => r.toolResults.length === 0);
        assert.ok(asked?.userText.includes(`derive from candidate ${hash}`) && asked.userText.includes(direction), asked?.userText);
        assert.ok(!existsSync(join(store, 'proposal-seed.json')), 'the seed was consumed by the round it shaped');
        await ui.expandRow(ui.paneRow('Runs', new RegExp(`${run}\\s*finished`)));
        await ui.expandRow(ui.paneRow('Runs', /phase 1: harness/));
        await ui.expandRow(runsRowLabelled('round 1'));
        await runsRowLabelled('round 1: llm proposer').click();
        await frameShowing(/llm proposer · anthropic claude-walkthrough[\s\S]*Model call 1/);
      },
    },
  ];
}
STEPS.splice(STEPS.findIndex((s) => s.name === 'dashboard') + 1, 0, ...researcherDashboardSteps());

let failed = 0;
let passed = 0;
for (const step of STEPS) {
  const started = Date.now();
  try {
    await step.run();
    if (!step.noFinalShot) {
      await page.waitForTimeout(500); // let animations settle so the picture shows the end state
      await page.screenshot({ path: join(outDir, step.shot) });
    }
    passed++;
    say(`✔ ${step.name} (${((Date.now() - started) / 1000).toFixed(0)}s): ${join(outDir, step.shot)} — ${step.caption}`);
  } catch (e) {
    failed++;
    const shot = join(outDir, `FAILED-${step.shot}`);
    if (!page.isClosed()) await page.screenshot({ path: shot }).catch(() => {});
    console.error(`walkthrough: ✘ step '${step.name}' failed: ${e.stack ?? e.message}\n  (what the screen showed: ${shot})`);
    break; // later steps build on this one
  }
}
await browser.close().catch(() => {});
await server.stop();
await fakeLlm.close();
if (args.keep) say(`kept ${server.tmp}`);
else rmSync(server.tmp, { recursive: true, force: true });
say(`${failed ? 'FAILED' : 'done'} in ${((Date.now() - t0) / 1000).toFixed(0)}s`);
// The closing line CI reads: steps after a failed one are not run (each builds on the last).
console.log(`walkthrough: ${passed} passed, ${failed} failed, ${STEPS.length - passed - failed} not run`);
teardown.runAll();
process.exit(failed ? 1 : 0);
