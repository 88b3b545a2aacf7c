// The native parts a platform-specific .vsix ships (esbuild's binary, resvg's addon) per VS Code
// target, and the .vscodeignore that puts back only that target's. package-vsix.mjs refuses a target
// whose native packages are not installed here, so a package never carries another platform's binaries.
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
