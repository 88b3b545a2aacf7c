// The native parts a platform-specific .vsix ships (esbuild's binary, resvg's addon) per VS Code
// target, and the .vscodeignore that puts back only that target's. package-vsix.mjs refuses a target
// whose native packages are not installed here, so a package never carries another platform's binaries;
// with --fetch it installs them first (fetchNatives), and it checks every native binary's first bytes.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export const NATIVE = {
  'linux-x64': { esbuild: 'linux-x64/bin/esbuild', resvg: 'linux-x64-gnu' },
  'linux-arm64': { esbuild: 'linux-arm64/bin/esbuild', resvg: 'linux-arm64-gnu' },
  'linux-armhf': { esbuild: 'linux-arm/bin/esbuild', resvg: 'linux-arm-gnueabihf' },
  'alpine-x64': { esbuild: 'linux-x64/bin/esbuild', resvg: 'linux-x64-musl' },
  'alpine-arm64': { esbuild: 'linux-arm64/bin/esbuild', resvg: 'linux-arm64-musl' },
  'darwin-x64': { esbuild: 'darwin-x64/bin/esbuild', resvg: 'darwin-x64' },
  'darwin-arm64': { esbuild: 'darwin-arm64/bin/esbuild', resvg: 'darwin-arm64' },
  'win32-x64': { esbuild: 'win32-x64/esbuild.exe', resvg: 'win32-x64-msvc' },
  'win32-arm64': { esbuild: 'win32-arm64/esbuild.exe', resvg: 'win32-arm64-msvc' },
};

/** The files of `target`'s native parts, relative to the package root. */
export function nativeFiles(target) {
  const n = NATIVE[target];
  if (!n) throw new Error(`unknown target '${target}' (known: ${Object.keys(NATIVE).join(', ')})`);
  const esbuildPkg = n.esbuild.split('/')[0];
  return {
    esbuild: [`node_modules/@esbuild/${esbuildPkg}/package.json`, `node_modules/@esbuild/${n.esbuild}`],
    resvg: [`node_modules/@resvg/resvg-js-${n.resvg}/package.json`, `node_modules/@resvg/resvg-js-${n.resvg}/resvgjs.${n.resvg}.node`],
  };
}

/** .vscodeignore with its wildcard native lines (`@esbuild/*`, `@resvg/resvg-js-*`) narrowed to `target`. */
export function ignoreFor(vscodeignore, target) {
  const { esbuild, resvg } = nativeFiles(target);
  const out = [];
  for (const line of vscodeignore.split('\n')) {
    if (/^!node_modules\/@esbuild\/\*\//.test(line)) {
      if (line.endsWith('package.json')) out.push(...esbuild.map((f) => `!${f}`));
    } else if (/^!node_modules\/@resvg\/resvg-js-\*\//.test(line)) {
      if (line.endsWith('package.json')) out.push(...resvg.map((f) => `!${f}`));
    } else out.push(line);
  }
  return out.join('\n');
}

/** What a native binary is, from its first bytes: 'ELF x86-64', 'Mach-O arm64', 'PE x64', ...; undefined for anything else. */
export function binaryKind(bytes) {
  const b = Buffer.from(bytes);
  if (b.length >= 20 && b.readUInt32BE(0) === 0x7f454c46) {
    const machine = { 0x3e: 'x86-64', 0xb7: 'aarch64', 0x28: 'arm', 0x03: 'i386' }[b.readUInt16LE(18)] ?? `machine 0x${b.readUInt16LE(18).toString(16)}`;
    return `ELF ${machine}`;
  }
  if (b.length >= 8 && b.readUInt32LE(0) === 0xfeedfacf) {
    const cpu = { 0x01000007: 'x86_64', 0x0100000c: 'arm64' }[b.readUInt32LE(4)] ?? `cpu 0x${b.readUInt32LE(4).toString(16)}`;
    return `Mach-O ${cpu}`;
  }
  if (b.length >= 8 && b.readUInt32BE(0) === 0xcafebabe && b.readUInt32BE(4) < 20) return 'Mach-O universal';
  if (b.length >= 64 && b.toString('latin1', 0, 2) === 'MZ') {
    const pe = b.readUInt32LE(0x3c);
    if (b.length >= pe + 6 && b.toString('latin1', pe, pe + 4) === 'PE\0\0') {
      const machine = { 0x8664: 'x64', 0xaa64: 'arm64', 0x14c: 'x86' }[b.readUInt16LE(pe + 4)] ?? `machine 0x${b.readUInt16LE(pe + 4).toString(16)}`;
      return `PE ${machine}`;
    }
  }
  return undefined;
}

/** The kind binaryKind gives every native binary of `target` (musl and glibc Linux look alike by their first bytes). */
export function expectedKind(target) {
  const [os, arch] = target.split('-');
  const format = os === 'darwin' ? 'Mach-O' : os === 'win32' ? 'PE' : 'ELF';
  const names = {
    ELF: { x64: 'x86-64', arm64: 'aarch64', armhf: 'arm' },
    'Mach-O': { x64: 'x86_64', arm64: 'arm64' },
    PE: { x64: 'x64', arm64: 'arm64' },
  };
  return `${format} ${names[format][arch]}`;
}

/**
 * Installs `target`'s native packages that are missing here from the npm registry, at the versions
 * package-lock.json pins, each tarball checked against the lock's integrity hash: what `npm ci` on a
 * machine of that platform would install. Returns the packages it installed.
 */
export function fetchNatives(target, root = process.cwd()) {
  const { esbuild, resvg } = nativeFiles(target);
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
  const installed = [];
  for (const dir of [esbuild[0], resvg[0]].map((f) => dirname(f))) {
    if ([...esbuild, ...resvg].filter((f) => f.startsWith(`${dir}/`)).every((f) => existsSync(join(root, f)))) continue;
    const entry = lock.packages?.[dir];
    if (!entry?.version || !entry.integrity) throw new Error(`${dir} has no version and integrity in package-lock.json`);
    const name = dir.slice('node_modules/'.length);
    const tmp = mkdtempSync(join(tmpdir(), 'whale-natives-'));
    try {
      const r = spawnSync('npm', ['pack', `${name}@${entry.version}`, '--json', '--pack-destination', tmp], {
        cwd: root,
        encoding: 'utf8',
        shell: process.platform === 'win32',
      });
      if (r.status !== 0) throw new Error(`npm pack ${name}@${entry.version} failed: ${(r.stderr || r.error?.message || '').trim()}`);
      const tarball = join(tmp, JSON.parse(r.stdout)[0].filename);
      const [algo] = entry.integrity.split('-');
      const integrity = `${algo}-${createHash(algo).update(readFileSync(tarball)).digest('base64')}`;
      if (integrity !== entry.integrity)
        throw new Error(`${name}@${entry.version}: the registry's tarball is ${integrity}, package-lock.json says ${entry.integrity}`);
      rmSync(join(root, dir), { recursive: true, force: true });
      mkdirSync(join(root, dir), { recursive: true });
      const x = spawnSync('tar', ['-xzf', tarball, '-C', join(root, dir), '--strip-components=1'], { encoding: 'utf8' });
      if (x.status !== 0) throw new Error(`unpacking ${tarball} failed: ${x.stderr.trim()}`);
      installed.push(`${name}@${entry.version}`);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  return installed;
}
