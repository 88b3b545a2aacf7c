import { InputError } from '../core/errors.js';
import { writeReport } from '../report/report.js';
import type { CommandSpec } from './main.js';
import { resolveProject } from './project.js';

export const reportCommand: CommandSpec = {
  summary: 'write a Markdown or HTML report (method table over seeds, curves, per-run detail) of runs in the store',
  usage: 'whale report [--config whale.config.json | --store DIR] [--run ID ...] [--all] [--format md|html] [--out DIR]',
  options: {
    config: { type: 'string' },
    store: { type: 'string' },
    run: { type: 'string', multiple: true },
    all: { type: 'boolean' },
    format: { type: 'string' },
    out: { type: 'string' },
    title: { type: 'string' },
  },
  async run(values) {
    const format = values.format ?? 'md';
    if (format !== 'md' && format !== 'html') throw new InputError({ file: '(command line)', field: '--format' }, `must be md or html, got '${String(format)}'`);
    const raw = (values as Record<string, unknown>).run;
    const ids = Array.isArray(raw) ? raw.map(String) : typeof raw === 'string' ? [raw] : [];
    if (values.all && ids.length > 0) throw new InputError({ file: '(command line)', field: '--all' }, 'give either --all or --run IDs, not both');
    const p = resolveProject({ ...values, run: undefined, domain: 'kbqa' });
    const r = await writeReport({
      storeDir: p.storeDir,
      runIds: ids,
      format,
      outDir: typeof values.out === 'string' ? values.out : undefined,
      title: typeof values.title === 'string' ? values.title : undefined,
      log: (l) => console.error(`whale report: ${l}`),
    });
    if (r.runs === 0) console.error(`whale report: no runs in ${p.storeDir}/runs (the report says so)`);
    for (const s of r.skipped) console.error(`whale report: skipped ${s.id}: ${s.why}`);
    console.log(r.file);
    return 0;
  },
};
