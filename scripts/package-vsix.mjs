// `npm run package`: builds, then packages a platform-specific .vsix for this machine's platform
// (the engine ships esbuild's and resvg's native binaries for it; .vscodeignore lists them).
// Prints the file and its size. Options: --out FILE, --target TARGET (default: this platform).
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { out: { type: 'string' }, target: { type: 'string' } } });
// VS Code's target names: win32-x64, linux-arm64, darwin-arm64, alpine-x64, ... (musl Linux is 'alpine').
const musl = process.platform === 'linux' && !process.report?.getReport()?.header?.glibcVersionRuntime;
const target = values.target ?? `${musl ? 'alpine' : process.platform}-${process.arch}`;
const { name, version } = JSON.parse(readFileSync('package.json', 'utf8'));
const out = values.out ?? `${name}-${version}-${target}.vsix`;

const run = (cmd, args) => {
  const r = spawnSync(cmd, args, { stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`package-vsix: ${cmd} ${args.join(' ')} failed (exit ${r.status ?? r.signal})`);
    process.exit(1);
  }
};
run(process.execPath, ['scripts/build.mjs']);
// vsce does not create the folder of --out (a fresh clone has no out/).
mkdirSync(dirname(out), { recursive: true });
run(process.execPath, ['node_modules/@vscode/vsce/vsce', 'package', '--target', target, '--allow-missing-repository', '--skip-license', '--out', out]);
console.log(`package-vsix: ${out} (${target}, ${(statSync(out).size / 1024 / 1024).toFixed(1)} MiB)`);
