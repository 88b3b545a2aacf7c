/**
 * The per-project secret (`<store>/secret`, mode 0600): generated domains mix it into every task
 * seed and id, so that nothing a harness sees (a task id, the public generator) re-derives a task's
 * private half. It stays in the engine: never in the config snapshot, the journal, an environment
 * variable or a harness's folder. Created on first use (`whale init` or the first run/eval).
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { WhaleError } from '../core/errors.js';

export const SECRET_FILE = 'secret';

export function projectSecret(storeDir: string): string {
  const file = join(storeDir, SECRET_FILE);
  mkdirSync(storeDir, { recursive: true });
  // Written whole under a temporary name, then linked into place: link() fails if it exists, so two
  // processes starting at once agree on one secret and nobody reads a half-written one.
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    const fd = openSync(tmp, 'wx', 0o600);
    writeSync(fd, randomBytes(32).toString('hex') + '\n');
    fsyncSync(fd);
    closeSync(fd);
    linkSync(tmp, file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new WhaleError(`cannot create the project secret ${file}: ${(e as Error).message}`);
  } finally {
    rmSync(tmp, { force: true });
  }
  let secret: string;
  try {
    if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
    secret = readFileSync(file, 'utf8').trim();
  } catch (e) {
    throw new WhaleError(`cannot read the project secret ${file}: ${(e as Error).message}`);
  }
  if (secret.length < 32)
    throw new WhaleError(
      `the project secret ${file} is empty or too short; restore it from a backup (tasks and cached results depend on it) or delete it to start with new tasks`,
    );
  return secret;
}
