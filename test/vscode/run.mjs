#!/usr/bin/env node
// Runs the mocha suites of test/vscode/suite/ inside a real VS Code: code-server's VS Code server
// build (installed by scripts/setup-vscode-it.sh) opened by headless Chromium through
// playwright-core. The suites run in the real Node extension host; their output is relayed here and
// the exit code comes back through the smoke-test driver's codeAutomationExit. Works offline.
// How to use it and how to add a suite: test/vscode/README.md.
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { format, parseArgs } from 'node:util';
import { launchBrowser, locateRig, startServer, teardownOnExit, testHostExtension, WORKBENCH_NOISE } from './workbench.mjs';
import { builtSuites, defaultFixture, repo, suitesOut, untrustedSuite, vsixSuite } from './workspace.mjs';

const USAGE = `usage: node test/vscode/run.mjs [options]
  --suite NAME          run only suite NAME (file test/vscode/suite/NAME.test.ts); repeatable.
                        Default: every suite, one VS Code session per kind: the development
                        folder trusted, then *.untrusted suites, then *.vsix suites (installed)
  --trusted true|false  false keeps Workspace Trust on and the folder untrusted (default: true,
                        except for suites named *.untrusted, which always run untrusted)
  --workspace DIR       fixture folder; a fresh temp copy is opened (default test/vscode/fixtures/project)
  --extension DIR       extensionDevelopmentPath (default: the repository)
  --installed-vsix FILE the session of *.vsix suites installs this .vsix (offline, with
                        code-server --install-extension) and tests the INSTALLED extension
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
      suite: { type: 'string', multiple: true },
      trusted: { type: 'string' },
      workspace: { type: 'string' },
      extension: { type: 'string' },
      'installed-vsix': { type: 'string' },
      screenshot: { type: 'string', multiple: true },
      env: { type: 'string', multiple: true },
      timeout: { type: 'string', default: '600' },
      keep: { type: 'boolean' },
      verbose: { type: 'boolean' },
      help: { type: 'boolean' },
    },
  }).values;
} catch (e) {
  console.error(`run.mjs: ${e.message}\n${USAGE}`);
  process.exit(2);
}
if (args.help) {
  console.log(USAGE);
  process.exit(0);
}
const fail = (msg) => {
  console.error(`run.mjs: ${msg}`);
  process.exit(2);
};

let rig;
try {
  rig = locateRig();
} catch (e) {
  fail(e.message);
}
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

// Sessions: one VS Code per kind of suite, told by its name: the development folder trusted, then
// untrusted (*.untrusted), then the extension installed from a .vsix (*.vsix). A suite that checks
// the untrusted behaviour can never run trusted by accident.
const built = builtSuites();
const wanted = args.suite ?? built;
for (const s of wanted) if (!built.includes(s)) fail(`no built suite '${s}' in ${suitesOut} (built: ${built.join(', ') || 'none'})`);
if (!vsix && args.suite?.some(vsixSuite))
  fail(`suite(s) ${args.suite.filter(vsixSuite).join(', ')} test an installed .vsix: pass --installed-vsix FILE (npm run package makes one)`);
const isUntrusted = (s) => untrustedSuite(s) || args.trusted === 'false';
const sessions = [
  { trusted: true, suites: wanted.filter((s) => !isUntrusted(s) && !vsixSuite(s)) },
  { trusted: false, suites: wanted.filter((s) => isUntrusted(s) && !vsixSuite(s)) },
  { trusted: args.trusted !== 'false', vsix, suites: vsix ? wanted.filter(vsixSuite) : [] },
].filter((s) => s.suites.length > 0);
const notRun = vsix ? [] : wanted.filter(vsixSuite);
if (notRun.length) console.log(`[run] not running ${notRun.join(', ')}: they need --installed-vsix FILE`);

const t0 = Date.now();
const say = (...a) => console.log(`[run +${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);
const teardown = teardownOnExit();

async function runSession(session, index) {
  const env = { ...process.env, ...extraEnv, WHALE_IT_SUITES: session.suites.join(','), WHALE_IT_TRUSTED: String(session.trusted) };
  let server;
  try {
    server = await startServer({ rig, teardown, fixture, trusted: session.trusted, vsix: session.vsix, env, keep: args.keep, verbose: args.verbose, say });
  } catch (e) {
    return { code: 2, passed: 0, failed: 1, why: `session ${index + 1}: ${e.message}` };
  }
  const label = `session ${index + 1}/${sessions.length} (${session.vsix ? 'installed .vsix, ' : ''}${session.trusted ? 'trusted' : 'UNTRUSTED'}: ${session.suites.join(', ')})`;
  say(`${label}: code-server on ${server.host}, workspace ${server.workspace}`);
  const browser = await launchBrowser({ rig, teardown });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  let finish;
  const finished = new Promise((r) => (finish = r));
  let summary;
  await page.exposeFunction('codeAutomationLog', (type, logArgs) => {
    const line = format(...logArgs);
    if (WORKBENCH_NOISE.some((r) => r.test(line))) return;
    const m = /^(\d+) passed, (\d+) failed/.exec(line);
    if (m) summary = { passed: Number(m[1]), failed: Number(m[2]) };
    (type === 'error' || type === 'warn' ? console.error : console.log)(line);
  });
  await page.exposeFunction('codeAutomationExit', (code) => finish(code));
  page.on('console', (m) => {
    if (args.verbose) console.error('[browser]', m.type(), m.text().slice(0, 2000));
  });
  page.on('pageerror', (e) => {
    if (args.verbose) console.error('[page error]', e.message);
  });

  const payload = [
    // To test the INSTALLED extension, the extension under development is an empty one with another id.
    ['extensionDevelopmentPath', server.remote(session.vsix ? testHostExtension(join(server.tmp, 'test-host-extension')) : resolve(args.extension ?? repo))],
    ['extensionTestsPath', server.remote(testsEntry)],
    ['skipWelcome', 'true'],
    ['skipReleaseNotes', 'true'],
    // Client log level: console output of the extension host reaches codeAutomationLog only at info.
    ['logLevel', process.env.VSCODE_IT_CLIENT_LOG ?? 'info'],
  ];
  await page.goto(server.url(payload));
  const timer = setTimeout(() => finish('timeout'), timeoutS * 1000);
  let code = await finished;
  clearTimeout(timer);
  const shot = args.screenshot?.[index];
  if (shot) {
    mkdirSync(dirname(resolve(shot)), { recursive: true });
    await page.screenshot({ path: shot }).then(
      () => say(`screenshot ${shot}`),
      (e) => console.error(`screenshot failed: ${e.message}`),
    );
  }
  await browser.close().catch(() => {});
  await server.stop();
  if (args.keep) say(`kept ${server.tmp}`);
  if (code === 'timeout') {
    console.error(server.output().slice(-4000));
    return { code: 3, passed: summary?.passed ?? 0, failed: (summary?.failed ?? 0) + 1, why: `${label}: timed out after ${timeoutS}s` };
  }
  code = typeof code === 'number' ? code : 1;
  if (!summary) return { code: code || 1, passed: 0, failed: 1, why: `${label}: exited ${code} without a mocha summary (the suite index did not run)` };
  if (code !== 0 && summary.failed === 0) return { code, passed: summary.passed, failed: 1, why: `${label}: exit code ${code} with no failed test` };
  return { code, ...summary, why: code ? `${label}: ${summary.failed} failed` : undefined };
}

let passed = 0,
  failed = 0,
  exitCode = 0;
for (const [i, s] of sessions.entries()) {
  const r = await runSession(s, i);
  passed += r.passed;
  failed += r.failed;
  if (r.code && !exitCode) exitCode = r.code;
  if (r.why) console.error(`[run] ${r.why}`);
}
say(`done in ${((Date.now() - t0) / 1000).toFixed(0)}s`);
console.log(`${passed} passed, ${failed} failed`);
teardown.runAll();
process.exit(exitCode || (failed ? 1 : 0));
