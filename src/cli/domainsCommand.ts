import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadConfig } from '../core/config.js';
import { listDomains } from '../domains/index.js';
import { domainRefLabel } from '../domains/load.js';
import { ownDomains } from './domainCommand.js';
import type { Values } from './command.js';

export async function run(values: Values): Promise<number> {
  const builtins = listDomains();
  const own = ownDomains(process.cwd());
  // The config's domain is named, not loaded: listing never runs a domain's code.
  const configFile = resolve('whale.config.json');
  const configured = existsSync(configFile) ? safeLabel(configFile) : undefined;
  if (values.json) {
    console.log(JSON.stringify({ builtins, own, configured: configured ?? null }, null, 2));
    return 0;
  }
  for (const d of builtins) console.log(`${d.id.padEnd(8)} ${d.regime.padEnd(18)} ${d.title}`);
  if (own.length) {
    console.log("\nthis project's own (domains/):");
    for (const d of own) console.log(`${d.name.padEnd(16)} ${d.kind.padEnd(5)} ${d.path}`);
  }
  if (configured) console.log(`\nwhale.config.json uses: ${configured}`);
  return 0;
}

function safeLabel(file: string): string | undefined {
  try {
    return domainRefLabel(loadConfig(file).domain);
  } catch {
    return undefined;
  }
}
