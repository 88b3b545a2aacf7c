/**
 * Storage failures (disk full, no permission, a file where a folder should be, an I/O error) as
 * messages a person can act on: what failed, on which file, and that nothing already paid for is
 * lost — never an "internal error" with a stack trace.
 */
import { WhaleError } from '../core/errors.js';

const FAULTS: Record<string, string> = {
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is exhausted',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'the file system is read-only',
  ENOTDIR: 'a file is where a folder should be',
  EISDIR: 'a folder is where a file should be',
  EEXIST: 'something else already exists there',
  EIO: 'an I/O error',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files',
};

export class StorageError extends WhaleError {
  constructor(
    readonly file: string,
    readonly errno: string,
    message: string,
  ) {
    super(message, 'storage');
  }
}

/** True for a file-system error a person must fix (not a bug of ours). */
export function isStorageFault(e: unknown): e is NodeJS.ErrnoException {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' && code in FAULTS;
}

export function storageError(e: NodeJS.ErrnoException, file: string, action: string): StorageError {
  const code = e.code ?? 'EIO';
  const where = e.path && e.path !== file ? `${file} (at ${e.path})` : file;
  return new StorageError(
    file,
    code,
    `storage error: cannot ${action} ${where}: ${FAULTS[code] ?? code} (${code}). Nothing already stored is lost; fix it and run the same command again to resume.`,
  );
}

/** Runs a storage operation; a file-system fault becomes a StorageError naming `file`. */
export function guardStorage<T>(file: string, action: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof StorageError || !isStorageFault(e)) throw e;
    throw storageError(e, file, action);
  }
}
