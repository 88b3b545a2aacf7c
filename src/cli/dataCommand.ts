import * as path from 'node:path';
import { InputError } from '../core/errors.js';
import { DOMAIN_DATA, dataGroups, fetchDomainData } from '../domains/data/fetch.js';
import type { Values } from './command.js';

const DOMAINS = Object.keys(DOMAIN_DATA);

export async function run(values: Values, positionals: string[]): Promise<number> {
  const [verb, domain] = positionals;
  if (verb !== 'fetch' || !domain || positionals.length !== 2)
    throw new InputError({ file: '(command line)' }, `expected 'whale data fetch DOMAIN' (domains: ${DOMAINS.join(', ')})`);
  const data = DOMAIN_DATA[domain];
  if (!data) throw new InputError({ file: '(command line)' }, `no download for domain '${domain}' (domains: ${DOMAINS.join(', ')})`);
  const known = dataGroups(data);
  let groups: string[] | undefined;
  if (typeof values.what === 'string') {
    groups = values.what
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const bad = groups.filter((w) => !known.includes(w));
    if (bad.length > 0)
      throw new InputError(
        { file: '(command line)', field: '--what' },
        `unknown part(s) ${bad.join(', ')} (parts of ${domain}: ${known.join(', ') || 'none'})`,
      );
  }
  const maxRows = values['max-rows'] === undefined ? undefined : Number(values['max-rows']);
  if (maxRows !== undefined && (!Number.isInteger(maxRows) || maxRows <= 0))
    throw new InputError({ file: '(command line)', field: '--max-rows' }, `must be a positive integer, got '${String(values['max-rows'])}'`);
  const dir = typeof values.dir === 'string' ? values.dir : path.join('data', domain);
  const endpoint = typeof values.endpoint === 'string' ? values.endpoint : process.env.HF_ENDPOINT;
  await fetchDomainData(domain, {
    dir: path.resolve(dir),
    ...(groups ? { groups } : {}),
    ...(endpoint ? { endpoint } : {}),
    ...(typeof values.url === 'string' ? { url: values.url } : {}),
    ...(maxRows !== undefined ? { maxRows } : {}),
    ...(process.env.HF_TOKEN ? { token: process.env.HF_TOKEN } : {}),
    log: (l) => console.log(l),
  });
  console.log(`\nIn whale.config.json:\n"domain": { "id": "${domain}", "options": ${JSON.stringify(data.options(dir))} }`);
  for (const n of data.notes?.(dir, groups ?? data.defaultGroups ?? known) ?? []) console.log(n);
  return 0;
}
