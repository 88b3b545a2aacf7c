import { listDomains } from '../domains/index.js';
import type { Values } from './command.js';

export async function run(values: Values): Promise<number> {
  const domains = listDomains();
  if (values.json) console.log(JSON.stringify(domains, null, 2));
  else for (const d of domains) console.log(`${d.id.padEnd(8)} ${d.regime.padEnd(18)} ${d.title}`);
  return 0;
}
