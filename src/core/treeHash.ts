import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, lstatSync } from 'node:fs';
import { join } from 'node:path';

/** Names never part of a candidate's identity. */
export const IGNORED = new Set(['.git', 'node_modules', '.whale-build', '.DS_Store']);

function gitObjectHash(type: string, body: Buffer): Buffer {
  return createHash('sha1').update(`${type} ${body.length}\0`).update(body).digest();
}

/**
 * The git tree hash of a folder (what `git write-tree` gives after `git add -A` of exactly that
 * folder), computed without git. A candidate's identity: identical folders are one candidate.
 */
export function gitTreeHash(dir: string): string {
  return treeHashRaw(dir).toString('hex');
}

function treeHashRaw(dir: string): Buffer {
  const entries: { name: string; sortKey: string; mode: string; hash: Buffer }[] = [];
  for (const name of readdirSync(dir)) {
    if (IGNORED.has(name)) continue;
    const full = join(dir, name);
    const st = lstatSync(full);
    if (st.isSymbolicLink()) continue; // candidates are plain files; links are not followed
    if (st.isDirectory()) {
      const hash = treeHashRaw(full);
      if (hash.equals(EMPTY_TREE)) continue; // git does not record empty folders
      entries.push({ name, sortKey: name + '/', mode: '40000', hash });
    } else if (st.isFile()) {
      const exec = (statSync(full).mode & 0o111) !== 0;
      entries.push({ name, sortKey: name, mode: exec ? '100755' : '100644', hash: gitObjectHash('blob', readFileSync(full)) });
    }
  }
  entries.sort((a, b) => (a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : 0));
  const body = Buffer.concat(entries.flatMap((e) => [Buffer.from(`${e.mode} ${e.name}\0`), e.hash]));
  return gitObjectHash('tree', body);
}

const EMPTY_TREE = gitObjectHash('tree', Buffer.alloc(0));

export function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}
