// The extension host loads this (built to out/test/vscode/index.cjs) and calls run(): it adds every
// built suite the runner asked for (WHALE_IT_SUITES, comma-separated names) and runs them with mocha.
// Under @vscode/test-electron (electron.mjs) the same variable selects the suites.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import Mocha from 'mocha';

export function run(): Promise<void> {
  const mocha = new Mocha({ ui: 'tdd', color: false, reporter: 'spec', timeout: 120_000, slow: 20_000 });
  const built = readdirSync(__dirname)
    .filter((f) => f.endsWith('.test.cjs'))
    .map((f) => f.slice(0, -'.test.cjs'.length));
  const wanted = process.env.WHALE_IT_SUITES
    ? process.env.WHALE_IT_SUITES.split(',').filter(Boolean)
    : built.filter((s) => !s.endsWith('.untrusted') && !s.endsWith('.vsix'));
  const missing = wanted.filter((s) => !built.includes(s));
  if (missing.length) return Promise.reject(new Error(`suites not built: ${missing.join(', ')} (built: ${built.join(', ')})`));
  for (const s of wanted.sort()) mocha.addFile(join(__dirname, `${s}.test.cjs`));
  return new Promise((resolve, reject) => {
    const runner = mocha.run((failures) => {
      const s = runner.stats;
      // test/vscode/run.mjs reads this line; keep its shape.
      console.log(`${s?.passes ?? 0} passed, ${s?.failures ?? failures} failed, ${s?.pending ?? 0} skipped`);
      if (failures > 0) reject(new Error(`${failures} test(s) failed`));
      else resolve();
    });
  });
}
