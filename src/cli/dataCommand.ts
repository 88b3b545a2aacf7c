import { InputError } from '../core/errors.js';
import { LICHESS_PUZZLES_URL, fetchChessPuzzles } from '../domains/chess/fetch.js';
import type { CommandSpec } from './main.js';

/** The full data sets of the paper's domains, for a connected machine. */
export const dataCommand: CommandSpec = {
  summary: 'download a paper domain\'s full data set (chess: the Lichess puzzle database)',
  usage: `whale data fetch chess [--out data/lichess_db_puzzle.csv] [--max-rows N] [--url ${LICHESS_PUZZLES_URL}]`,
  options: { out: { type: 'string' }, 'max-rows': { type: 'string' }, url: { type: 'string' } },
  async run(values, positionals) {
    const [verb, what] = positionals;
    if (verb !== 'fetch' || what !== 'chess') throw new InputError({ file: 'command line', field: 'data' }, `unknown data set '${positionals.join(' ')}' (known: fetch chess)`);
    const maxRows = values['max-rows'] === undefined ? undefined : Number(values['max-rows']);
    if (maxRows !== undefined && (!Number.isInteger(maxRows) || maxRows <= 0)) throw new InputError({ file: 'command line', field: '--max-rows' }, `must be a positive integer, got '${String(values['max-rows'])}'`);
    const out = typeof values.out === 'string' ? values.out : 'data/lichess_db_puzzle.csv';
    let last = 0;
    const r = await fetchChessPuzzles({
      out,
      ...(typeof values.url === 'string' ? { url: values.url } : {}),
      ...(maxRows !== undefined ? { maxRows } : {}),
      onProgress: ({ bytesIn, rows }) => {
        if (bytesIn - last < 16 << 20) return;
        last = bytesIn;
        process.stderr.write(`  ${(bytesIn / 1048576).toFixed(0)} MB read, ${rows} puzzles\n`);
      },
    });
    console.log(`wrote ${r.rows} puzzles to ${r.file} (${(r.bytesIn / 1048576).toFixed(1)} MB ${r.compressed ? 'zstd' : 'csv'} read)`);
    console.log(`use it: "domain": { "id": "chess", "options": { "files": "${out}" } } in whale.config.json`);
    return 0;
  },
};
