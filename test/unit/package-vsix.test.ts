// Per-target .vsix packaging (scripts/package-vsix.mjs): only the target's native binaries, and a
// refusal — not this machine's binaries — for a target whose native packages are not installed; with
// --fetch, a real package for each target users have, whose every native binary is that target's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
// @ts-expect-error a plain .mjs build script without types
import { NATIVE, binaryKind, expectedKind, ignoreFor, nativeFiles } from '../../scripts/vsix-targets.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const host = `${process.platform}-${process.arch}`;
const targets = NATIVE as Record<string, { esbuild: string; resvg: string }>;
const installed = (t: string) => {
  const { esbuild, resvg } = nativeFiles(t) as { esbuild: string[]; resvg: string[] };
  return [...esbuild, ...resvg].every((f) => existsSync(join(root, f)));
};
// The cross-target test below installs four targets' natives; one of the others stays missing.
const other = Object.keys(targets).find((t) => t !== host && !installed(t))!;
const hasUnzip = spawnSync('unzip', ['-v']).status === 0;

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
  { timeout: 300_000, skip: hasUnzip ? false : 'unzip is not installed' },
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

/** Every file under `dir` with the kind of native binary its first bytes say it is. */
function nativesIn(dir: string): { file: string; kind: string }[] {
  const out: { file: string; kind: string }[] = [];
  const head = Buffer.alloc(4096);
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    const path = join(e.parentPath, e.name);
    const fd = openSync(path, 'r');
    const n = readSync(fd, head, 0, head.length, 0);
    closeSync(fd);
    const kind = binaryKind(head.subarray(0, n)) as string | undefined;
    if (kind) out.push({ file: relative(dir, path), kind });
  }
  return out;
}

test(
  "--fetch: a .vsix for each of linux-x64, linux-arm64, darwin-arm64 and win32-x64 whose native binaries are that target's (by their first bytes) and no other's",
  { timeout: 1_800_000, skip: hasUnzip ? false : 'unzip is not installed' },
  (t) => {
    const tmp = mkdtempSync(join(tmpdir(), 'whale-vsix-targets-'));
    let built = false;
    t.after(() => rmSync(tmp, { recursive: true, force: true }));
    for (const target of ['linux-x64', 'linux-arm64', 'darwin-arm64', 'win32-x64']) {
      const out = join(tmp, `${target}.vsix`);
      // npm pack from the registry (CI reaches it) at the lock's versions; the first package builds dist/.
      const args: string[] = ['scripts/package-vsix.mjs', '--target', target, '--fetch', '--out', out, ...(built ? ['--skip-build'] : [])];
      const r = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8', timeout: 400_000 });
      assert.equal(r.status, 0, `${target}: ${r.stderr}`);
      built = true;
      const dir = join(tmp, target);
      const x = spawnSync('unzip', ['-q', out, '-d', dir], { encoding: 'utf8' });
      assert.equal(x.status, 0, x.stderr);
      const natives = nativesIn(dir);
      const want = expectedKind(target) as string;
      const { esbuild, resvg } = nativeFiles(target) as { esbuild: string[]; resvg: string[] };
      assert.deepEqual(
        natives.map((n) => n.file).sort(),
        [esbuild[1], resvg[1]].map((f) => `extension/${f}`).sort(),
        `${target}: the native binaries in the package`,
      );
      for (const n of natives) assert.equal(n.kind, want, `${target}: ${n.file}`);
    }
  },
);
