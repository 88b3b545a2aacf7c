import * as path from 'node:path';
import { InputError } from '../core/errors.js';
import { fetchSearchqa, searchqaOptionsFor, type FetchGroup } from '../domains/searchqa/fetch.js';
import type { CommandSpec } from './main.js';

const GROUPS: Record<string, FetchGroup[]> = { searchqa: ['data', 'corpus', 'index'] };

export const dataCommand: CommandSpec = {
  summary: "download a paper domain's full data sets (resumable)",
  usage: 'whale data fetch searchqa [--dir data/searchqa] [--what data,corpus,index] [--endpoint https://huggingface.co]',
  options: { dir: { type: 'string' }, what: { type: 'string' }, endpoint: { type: 'string' } },
  async run(values, positionals) {
    const [verb, domain] = positionals;
    if (verb !== 'fetch' || !domain || positionals.length !== 2) throw new InputError({ file: 'command line' }, `expected 'whale data fetch DOMAIN' (domains: ${Object.keys(GROUPS).join(', ')})`);
    const known = GROUPS[domain];
    if (!known) throw new InputError({ file: 'command line' }, `no download for domain '${domain}' (domains: ${Object.keys(GROUPS).join(', ')})`);
    const what = String(values.what ?? 'data').split(',').map((s) => s.trim()).filter(Boolean);
    const bad = what.filter((w) => !(known as string[]).includes(w));
    if (bad.length > 0) throw new InputError({ file: 'command line', field: '--what' }, `unknown part(s) ${bad.join(', ')} (parts: ${known.join(', ')})`);
    const dir = (values.dir as string | undefined) ?? path.join('data', domain);
    const endpoint = (values.endpoint as string | undefined) ?? process.env.HF_ENDPOINT;
    await fetchSearchqa({ dir: path.resolve(dir), groups: what as FetchGroup[], ...(endpoint ? { endpoint } : {}), ...(process.env.HF_TOKEN ? { token: process.env.HF_TOKEN } : {}), log: (l) => console.log(l) });
    console.log(`\nIn whale.config.json:\n"domain": { "id": "searchqa", "options": ${JSON.stringify(searchqaOptionsFor(dir))} }`);
    if (what.includes('corpus')) console.log(`Retriever: gunzip ${path.join(dir, 'wiki-18.jsonl.gz')}, then Search-R1's retrieval_server.py (e5, GPU) or, for small corpora, whale retriever serve --corpus FILE`);
    return 0;
  },
};
