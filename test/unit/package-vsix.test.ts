// Per-target .vsix packaging (scripts/package-vsix.mjs): only the target's native binaries, and a
// refusal — not this machine's binaries — for a target whose native packages are not installed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
// @ts-expect-error a plain .mjs build script without types
import { NATIVE, ignoreFor } from '../../scripts/vsix-targets.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const host = `${process.platform}-${process.arch}`;
const targets = NATIVE as Record<string, { esbuild: string; resvg: string }>;
const other = ['linux-arm64', 'linux-x64', 'darwin-arm64', 'win32-x64'].find(
  (t) => t !== host && !existsSync(join(root, 'node_modules', '@esbuild', targets[t].esbuild.split('/')[0])),
)!;

test("the narrowed .vscodeignore puts back one target's natives and no other's", () => {
  const src = readFileSync(join(root, '.vscodeignore'), 'utf8');
  for (const target of Object.keys(targets)) {
    const lines = (ignoreFor(src, target) as string).split('\n').filter((l) => /@esbuild\/|resvg-js-/.test(l));
    assert.equal(lines.filter((l) => l.includes('*')).length, 0, `${target}: a wildcard native line survived`);
    assert.equal(lines.length, 4, `${target}: ${lines.join(', ')}`);
    const { esbuild, resvg } = targets[target];
    assert.ok(
      lines.every((l) => l.includes(`@esbuild/${esbuild.split('/')[0]}/`) || l.includes(`resvg-js-${resvg}/`)),
      `${target}: ${lines.join(', ')}`,
    );
  }
});

test(`packaging for a target whose natives are not installed (${other}) is refused, and nothing is written`, () => {
  const out = join(mkdtempSync(join(tmpdir(), 'whale-vsix-')), 'x.vsix');
  const r = spawnSync(process.execPath, ['scripts/package-vsix.mjs', '--target', other, '--out', out], { cwd: root, encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 1);
  assert.match(r.stderr, new RegExp(`refusing to package for ${other}: its native binaries are not installed here`));
  assert.ok(!existsSync(out));
  const bad = spawnSync(process.execPath, ['scripts/package-vsix.mjs', '--target', 'amiga-m68k'], { cwd: root, encoding: 'utf8' });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /unknown target 'amiga-m68k'/);
});

test(
  'the .vsix for this machine ships its natives only, the split engine bundle and the launcher',
  { timeout: 300_000, skip: spawnSync('unzip', ['-v']).status === 0 ? false : 'unzip is not installed' },
  () => {
    const out = join(mkdtempSync(join(tmpdir(), 'whale-vsix-')), 'host.vsix');
    const r = spawnSync(process.execPath, ['scripts/package-vsix.mjs', '--out', out], { cwd: root, encoding: 'utf8', timeout: 280_000 });
    assert.equal(r.status, 0, r.stderr);
    const files = spawnSync('unzip', ['-Z1', out], { encoding: 'utf8' }).stdout.split('\n');
    const natives = files.filter((f) => /node_modules\/(@esbuild\/|@resvg\/resvg-js-)/.test(f));
    assert.ok(natives.length === 4 && natives.every((f) => f.includes(host)), natives.join(', '));
    assert.ok(
      files.includes('extension/dist/cli.mjs') && files.some((f) => /^extension\/dist\/chunk-.*\.mjs$/.test(f)) && files.includes('extension/bin/whale.js'),
    );
    assert.ok(!files.some((f) => f.endsWith('.map') || f.startsWith('extension/src/')));
  },
);
