import * as path from 'node:path';
import { InputError } from '../core/errors.js';
import { DOMAIN_DATA, fetchDomainData } from '../domains/data/fetch.js';
import type { CommandSpec } from './main.js';

export const dataCommand: CommandSpec = {
  summary: "download a paper domain's full data sets (Hugging Face hub, or --endpoint / HF_ENDPOINT)",
  usage: `whale data fetch ${Object.keys(DOMAIN_DATA).join('|')} [--dir data/DOMAIN] [--endpoint https://huggingface.co]`,
  options: { dir: { type: 'string' }, endpoint: { type: 'string' } },
  async run(values, positionals) {
    const [verb, domain] = positionals;
    if (verb !== 'fetch' || !domain || positionals.length !== 2) throw new InputError({ file: '(command line)' }, `expected 'whale data fetch DOMAIN' (domains: ${Object.keys(DOMAIN_DATA).join(', ')})`);
    if (!DOMAIN_DATA[domain]) throw new InputError({ file: '(command line)' }, `no download for domain '${domain}' (domains: ${Object.keys(DOMAIN_DATA).join(', ')})`);
    const dir = typeof values.dir === 'string' ? values.dir : path.join('data', domain);
    const endpoint = typeof values.endpoint === 'string' ? values.endpoint : process.env.HF_ENDPOINT;
    await fetchDomainData(domain, { dir: path.resolve(dir), ...(endpoint ? { endpoint } : {}), ...(process.env.HF_TOKEN ? { token: process.env.HF_TOKEN } : {}), log: (l) => console.log(l) });
    console.log(`\nIn whale.config.json:\n"domain": { "id": "${domain}", "options": ${JSON.stringify(DOMAIN_DATA[domain].options(dir))} }`);
    return 0;
  },
};
