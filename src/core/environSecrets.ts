/**
 * Keeps API keys out of the engine's `/proc/<pid>/environ` (Linux) while the engine keeps using them.
 *
 * The kernel serves `/proc/<pid>/environ` from the environment block the process was started with,
 * readable by every process of the same user: an unconfined command harness (no bubblewrap) read
 * the engine's keys there. `process.env` is not that block: glibc's `environ` holds pointers, and
 * setting a variable points it at a fresh copy. So each key is first set again (its value moves to
 * the heap, where `process.env` keeps finding it), then its bytes in the start-up block are
 * overwritten through `/proc/self/mem`, which a process may always write for itself. Costs well
 * under a millisecond; no re-exec, no second process holding the keys.
 *
 * Where that fails (not Linux, a kernel that forbids /proc/self/mem writes) the keys stay readable
 * there, as before; the result says so and SECURITY.md documents it.
 */
import { closeSync, openSync, readFileSync, readSync, writeSync } from 'node:fs';

/** Environment variables treated as secrets whatever the config says (besides the ones it names). */
export const SECRET_NAME = /(API_KEY|_TOKEN|_SECRET|PASSWORD)$/i;

export interface HiddenSecrets {
  /** Variables whose values no longer appear in /proc/self/environ. */
  hidden: string[];
  /** Why nothing could be hidden, when it could not. */
  unavailable?: string;
}

export function hideSecretsFromEnviron(extraNames: readonly string[] = []): HiddenSecrets {
  const names = new Set(Object.keys(process.env).filter((k) => SECRET_NAME.test(k) || extraNames.includes(k)));
  for (const k of [...names]) if (!process.env[k]) names.delete(k);
  if (names.size === 0) return { hidden: [] };
  if (process.platform !== 'linux') return { hidden: [], unavailable: `not Linux (${process.platform})` };
  let start: number;
  let end: number;
  try {
    // Fields after the command name, which is in parentheses and may itself hold spaces or ')'.
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // env_start and env_end are fields 50 and 51 of stat(5); `fields` starts at field 3.
    [start, end] = [Number(fields[50 - 3]), Number(fields[51 - 3])];
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end <= start || end - start > 16 << 20)
      throw new Error('no environment block in /proc/self/stat');
  } catch (e) {
    return { hidden: [], unavailable: e instanceof Error ? e.message : String(e) };
  }
  let fd: number | undefined;
  try {
    fd = openSync('/proc/self/mem', 'r+');
    const block = Buffer.alloc(end - start);
    readSync(fd, block, 0, block.length, start);
    const hidden: string[] = [];
    for (let at = 0; at < block.length;) {
      let nul = block.indexOf(0, at);
      if (nul === -1) nul = block.length;
      const eq = block.indexOf(0x3d, at); // '='
      if (eq !== -1 && eq < nul) {
        const name = block.toString('utf8', at, eq);
        if (names.has(name)) {
          const value = process.env[name]!;
          // Set again: glibc copies it to the heap and repoints `environ`, so process.env keeps it.
          process.env[name] = value + ' ';
          process.env[name] = value;
          const blank = Buffer.alloc(nul - eq - 1); // zeros: the value reads as empty
          writeSync(fd, blank, 0, blank.length, start + eq + 1);
          hidden.push(name);
        }
      }
      at = nul + 1;
    }
    return { hidden };
  } catch (e) {
    return { hidden: [], unavailable: `cannot write /proc/self/mem: ${e instanceof Error ? e.message : String(e)}` };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
