import { InputError } from '../core/errors.js';
import { writeReport } from '../report/report.js';
import type { Values } from './command.js';
import { resolveStoreDir } from './project.js';

export async function run(values: Values): Promise<number> {
  const format = values.format ?? 'md';
  if (format !== 'md' && format !== 'html') throw new InputError({ file: '(command line)', field: '--format' }, `must be md or html, got '${String(format)}'`);
  const raw = (values as Record<string, unknown>).run;
  const ids = Array.isArray(raw) ? raw.map(String) : typeof raw === 'string' ? [raw] : [];
  if (values.all && ids.length > 0) throw new InputError({ file: '(command line)', field: '--all' }, 'give either --all or --run IDs, not both');
  const storeDir = resolveStoreDir(values);
  const r = await writeReport({
    storeDir,
    runIds: ids,
    format,
    outDir: typeof values.out === 'string' ? values.out : undefined,
    title: typeof values.title === 'string' ? values.title : undefined,
    log: (l) => console.error(`whale report: ${l}`),
  });
  if (r.runs === 0) console.error(`whale report: no runs in ${storeDir}/runs (the report says so)`);
  for (const s of r.skipped) console.error(`whale report: skipped ${s.id}: ${s.why}`);
  if (values.json) console.log(JSON.stringify({ file: r.file, runs: r.runs, skipped: r.skipped }));
  else console.log(r.file);
  return 0;
}
