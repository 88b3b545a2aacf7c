// `npm run package`: builds, then packages a platform-specific .vsix for one VS Code target (default:
// this machine's). The engine ships esbuild's binary and resvg's addon for that target only
// (scripts/vsix-targets.mjs narrows .vscodeignore); a target whose native packages are not installed
// here is refused rather than packaged with this machine's binaries, and so is a native binary whose
// first bytes are another platform's (ELF/Mach-O/PE and the CPU). Build each target on a machine of
// that platform (a CI matrix), or pass --fetch: the target's native packages are then installed from
// the npm registry at package-lock.json's versions and integrity hashes (vsix-targets.mjs).
// Prints the file and its size. Options: --out FILE, --target TARGET, --fetch, --skip-build (dist/ is
// already built), --readme-path FILE (default docs/marketplace/README.md).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { binaryKind, expectedKind, fetchNatives, ignoreFor, nativeFiles } from './vsix-targets.mjs';

const { values } = parseArgs({
  options: {
    out: { type: 'string' },
    target: { type: 'string' },
    fetch: { type: 'boolean' },
    'skip-build': { type: 'boolean' },
    'readme-path': { type: 'string' },
  },
});
// VS Code's target names: win32-x64, linux-arm64, darwin-arm64, alpine-x64, ... (musl Linux is 'alpine').
const musl = process.platform === 'linux' && !process.report?.getReport()?.header?.glibcVersionRuntime;
const target = values.target ?? `${musl ? 'alpine' : process.platform}-${process.arch}`;
const { name, version } = JSON.parse(readFileSync('package.json', 'utf8'));
const out = values.out ?? `${name}-${version}-${target}.vsix`;

let natives;
try {
  natives = nativeFiles(target);
} catch (e) {
  console.error(`package-vsix: ${e.message}`);
  process.exit(2);
}
if (values.fetch) {
  try {
    for (const p of fetchNatives(target)) console.error(`package-vsix: installed ${p} for ${target} from the npm registry`);
  } catch (e) {
    console.error(`package-vsix: could not install ${target}'s native packages: ${e.message}`);
    process.exit(1);
  }
}
const missing = [...natives.esbuild, ...natives.resvg].filter((f) => !existsSync(f));
if (missing.length > 0) {
  console.error(
    `package-vsix: refusing to package for ${target}: its native binaries are not installed here (missing ${missing.join(', ')}). Package on a ${target} machine, where npm ci installs them, or pass --fetch.`,
  );
  process.exit(1);
}
const want = expectedKind(target);
for (const f of [natives.esbuild[1], natives.resvg[1]]) {
  const kind = binaryKind(readFileSync(f));
  if (kind !== want) {
    console.error(`package-vsix: refusing to package for ${target}: ${f} is ${kind ?? 'not a native binary'}, not ${want}`);
    process.exit(1);
  }
}

const run = (cmd, args) => {
  const r = spawnSync(cmd, args, { stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`package-vsix: ${cmd} ${args.join(' ')} failed (exit ${r.status ?? r.signal})`);
    process.exit(1);
  }
};
if (!values['skip-build']) run(process.execPath, ['scripts/build.mjs']);
// vsce does not create the folder of --out (a fresh clone has no out/).
mkdirSync(dirname(out), { recursive: true });
const tmp = mkdtempSync(join(tmpdir(), 'whale-vsix-'));
const ignoreFile = join(tmp, '.vscodeignore');
writeFileSync(ignoreFile, ignoreFor(readFileSync('.vscodeignore', 'utf8'), target));
// The package's README is the one written for people who install the extension; its pictures are
// docs/screenshots/*.png inside the package. Without a repository URL vsce cannot make them absolute
// for the Marketplace web page, so they stay relative (VS Code shows them from the package).
const { repository } = JSON.parse(readFileSync('package.json', 'utf8'));
const readme = ['--readme-path', values['readme-path'] ?? 'docs/marketplace/README.md', ...(repository ? [] : ['--no-rewrite-relative-links'])];
try {
  run(process.execPath, [
    'node_modules/@vscode/vsce/vsce',
    'package',
    '--target',
    target,
    '--ignoreFile',
    ignoreFile,
    ...readme,
    '--allow-missing-repository',
    '--skip-license',
    '--out',
    out,
  ]);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
console.log(`package-vsix: ${out} (${target}, ${(statSync(out).size / 1024 / 1024).toFixed(1)} MiB)`);
