import { join } from 'node:path';
import { HarnessArchive } from '../archive/harnessArchive.js';
import { InputError } from '../core/errors.js';
import { submitCandidate, submittedCandidates } from '../archive/submissions.js';
import type { Values } from './command.js';
import { resolveStoreDir } from './project.js';

const USAGE = 'whale candidate submit DIR [--parents HASH[,HASH]] [--message TEXT] [--json] | whale candidate submitted [--json]';

/** `whale candidate submit`: a person as the proposer (archive/submissions.ts). */
export async function run(values: Values, positionals: string[]): Promise<number> {
  const [action, dir] = positionals;
  const archive = await HarnessArchive.open(join(resolveStoreDir(values), 'archive.git'));
  if (action === 'submitted') {
    const hashes = await submittedCandidates(archive);
    console.log(values.json ? JSON.stringify(hashes) : hashes.join('\n') || 'no hand-made candidates');
    return 0;
  }
  if (action !== 'submit' || !dir) throw new InputError({ file: '(command line)' }, `usage: ${USAGE}`);
  const parents =
    typeof values.parents === 'string'
      ? values.parents
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : [];
  const s = await submitCandidate(archive, dir, { parents, message: typeof values.message === 'string' ? values.message : '' });
  if (values.json) console.log(JSON.stringify(s));
  else console.log(`submitted ${s.treeHash}${s.created ? '' : ' (already in the archive)'}: the next harness phase validates and scores it`);
  return 0;
}
