import { listDomains } from '../domains/index.js';
import type { CommandSpec } from './main.js';

export const domainsCommand: CommandSpec = {
  summary: 'list the built-in domains',
  usage: 'whale domains',
  options: {},
  async run() {
    for (const d of listDomains()) console.log(`${d.id.padEnd(8)} ${d.regime.padEnd(18)} ${d.title}`);
    return 0;
  },
};
