// `npm start`: the main job on the embedded default. Scaffolds a kbqa project in .whale-demo/kbqa/
// (`whale init`), runs WHALE on it (`whale run`: RSFT weight phases alternating with knob-proposer
// harness phases, validation after every phase, the sealed test of the best pair at the end), and
// writes the report (`whale report`). Everything is cached in .whale-demo/<domain>/.whale: a second run is
// answered from the store. Set WHALE_DEMO_DOMAIN=ramble for the weight-dominated domain.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const whale = fileURLToPath(new URL('../bin/whale.js', import.meta.url));
const domain = process.env.WHALE_DEMO_DOMAIN ?? 'kbqa';
const dir = fileURLToPath(new URL(`../.whale-demo/${domain}`, import.meta.url));
const config = `${dir}/whale.config.json`;

function step(args) {
  console.error(`\n$ whale ${args.join(' ')}`);
  const r = spawnSync(process.execPath, [whale, ...args], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

if (!existsSync(config)) step(['init', dir, '--domain', domain]);
step(['run', '--config', config]);
step(['report', '--config', config]);
