/**
 * The harness archive: one git repository per project (bare, e.g. `<store>/archive.git`), each
 * candidate a commit whose tree is exactly the candidate folder, its parents the commits of the
 * candidates it was derived from (DESIGN.md, "Archive and run store").
 *
 *   const a = await HarnessArchive.open('.whale/archive.git');
 *   const { treeHash } = await a.add('cands/r1-0', { parents: [h0], message: 'topk 1→3', meta: { round: 1 } });
 *   await a.setRef(`runs/${run}/accepted/${phase}`, treeHash);
 *   await a.materialize(treeHash, '/tmp/view');              // the folder again, byte for byte
 *   const patch = await a.diff(h0, treeHash);                  // unified diff text
 *
 * Layout of the repository:
 * - `refs/whale/candidates/<treeHash>` → the candidate's commit. A candidate's identity is its tree
 *   hash (= gitTreeHash(folder)); adding an identical folder again returns the existing commit.
 * - any other `refs/whale/<name>` (setRef/getRef) → a candidate's commit, e.g.
 *   `refs/whale/runs/<run>/accepted/<phase>`.
 * - commit message: `<message>\n\n<META_MARKER>\n<JSON meta>` — the metadata known when the candidate
 *   was first added (hypothesis, proposer, round, run, validity + reasons, …). Immutable, like the
 *   commit.
 * - notes ref `refs/notes/whale` (one note per candidate commit, JSON): what was learnt later —
 *   `links` (each later add of the same tree: its parents, message, meta; a re-derivation) and `meta`
 *   (an overlay set by setMeta, merged over the commit's meta on read).
 *
 * Git is run as a child process (real git ≥ 2.32; isolated from the user's global and system config,
 * so hooks, signing or excludes there cannot change what is stored). Trees are built with
 * `hash-object -w` and `mktree` from exactly the files gitTreeHash counts (no .gitignore applies).
 *
 * Concurrency: every write holds an in-process mutex (shared by all HarnessArchive objects on the
 * same folder) and a lock `<dir>/whale-archive.lock` (fileLock.ts: a heartbeat judged by time, so
 * it also works when two containers share the store; a dead holder's lock is taken over), so two processes never interleave writes. Reads take no lock:
 * objects are immutable and every ref update is atomic in git.
 */
import { spawn } from 'node:child_process';
import { LockHeldError, waitForLock } from './fileLock.js';
import { chmodSync, existsSync, renameSync, rmdirSync, lstatSync, mkdirSync, readdirSync, rmSync, statSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { WhaleError } from '../core/errors.js';
import { gitTreeHash } from '../core/treeHash.js';

export type Json = string | number | boolean | null | Json[] | { [k: string]: Json };

/**
 * Candidate metadata (free-form JSON object). The harness phase records at least these fields;
 * others are kept as given.
 */
export interface CandidateMeta {
  [k: string]: Json | undefined;
  run?: string;
  round?: number;
  origin?: 'seed' | 'proposer' | 'human';
  proposer?: string;
  hypothesis?: string;
  valid?: boolean;
  invalidReasons?: string[];
}

export interface AddOptions {
  /** Tree hashes of the candidates this one was derived from (each must be in the archive). */
  parents: string[];
  /** One line (the commit subject); longer text is allowed, its first line is the subject. */
  message: string;
  meta?: CandidateMeta;
}

export interface AddResult {
  treeHash: string;
  commit: string;
  /** False when an identical candidate was already in the archive (its commit is returned). */
  created: boolean;
}

/** A later add of an already archived candidate (another derivation of the same tree). */
export interface CandidateLink {
  parents: string[];
  message: string;
  meta: CandidateMeta;
  addedAt: string;
}

export interface ArchivedCandidate {
  treeHash: string;
  commit: string;
  /** Tree hashes of the parent candidates (the commit's parents). */
  parents: string[];
  message: string;
  /** The commit's meta with the setMeta overlay merged over it. */
  meta: CandidateMeta;
  addedAt: string;
  links: CandidateLink[];
}

/**
 * A candidate as one run derived it. The archive is shared by every run of a project and its commit
 * records whichever run added the tree first; a run that derived the same tree later has a link with
 * its own parents and meta. What a run's proposer is shown must be its own lineage, or one run's
 * search steers another's (the knob proposer credits edits along parent links), and the same run
 * gives other results in a store where other runs went first.
 */
export function derivationIn(c: ArchivedCandidate, run: string): ArchivedCandidate {
  if (c.meta.run === run) return c;
  const link = c.links.find((l) => l.meta.run === run);
  return link ? { ...c, parents: link.parents, message: link.message, meta: { ...c.meta, ...link.meta } } : c;
}

export class ArchiveError extends WhaleError {
  constructor(message: string) {
    super(message, 'archive');
  }
}

export const META_MARKER = 'whale-meta:';
const NOTES_REF = 'refs/notes/whale';
const CANDIDATE_PREFIX = 'refs/whale/candidates/';
const LOCK_FILE = 'whale-archive.lock';
/** Names never part of a candidate (the same list as treeHash.ts). */
const IGNORED = new Set(['.git', 'node_modules', '.whale-build', '.DS_Store']);
const HASH_RE = /^[0-9a-f]{40}$/;

interface NoteBody {
  links?: CandidateLink[];
  meta?: CandidateMeta;
}

// ---------------------------------------------------------------------------------------------
// git as a child process

interface GitResult {
  stdout: Buffer;
  stderr: string;
  code: number;
}

function gitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_')) env[k] = v;
  return {
    ...env,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: process.platform === 'win32' ? 'NUL' : '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_AUTHOR_NAME: 'whale',
    GIT_AUTHOR_EMAIL: 'whale@localhost',
    GIT_COMMITTER_NAME: 'whale',
    GIT_COMMITTER_EMAIL: 'whale@localhost',
    LC_ALL: 'C',
    ...extra,
  };
}

function runGit(
  gitDir: string,
  args: string[],
  opts: { input?: string | Buffer; env?: Record<string, string>; allowFail?: boolean; cwd?: string } = {},
): Promise<GitResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('git', ['--git-dir', gitDir, ...args], { env: gitEnv(opts.env), cwd: opts.cwd ?? gitDir, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.on('error', (e) => reject(new ArchiveError(`cannot run git (${e.message}); the harness archive needs git on PATH`)));
    child.on('close', (code) => {
      const r = { stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8'), code: code ?? -1 };
      if (r.code !== 0 && !opts.allowFail) reject(new ArchiveError(`git ${args.slice(0, 3).join(' ')} failed (${r.code}): ${r.stderr.trim()}`));
      else resolvePromise(r);
    });
    child.stdin.on('error', () => undefined); // git may exit before reading all input; the exit code says what happened
    child.stdin.end(opts.input ?? '');
  });
}

// ---------------------------------------------------------------------------------------------
// locks

const mutexes = new Map<string, Promise<void>>();

async function withMutex<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const prev = mutexes.get(key) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((r) => (release = r));
  const chained = prev.then(() => mine);
  mutexes.set(key, chained);
  await prev;
  try {
    return await fn();
  } finally {
    release();
    if (mutexes.get(key) === chained) mutexes.delete(key);
  }
}

// ---------------------------------------------------------------------------------------------

function parseMessage(raw: string): { message: string; meta: CandidateMeta } {
  const idx = raw.lastIndexOf(`\n${META_MARKER}\n`);
  if (idx < 0) return { message: raw.trim(), meta: {} };
  const message = raw.slice(0, idx).trim();
  try {
    return { message, meta: JSON.parse(raw.slice(idx + META_MARKER.length + 2)) as CandidateMeta };
  } catch {
    return { message, meta: {} };
  }
}

function checkHash(h: string, what = 'tree hash'): void {
  if (!HASH_RE.test(h)) throw new ArchiveError(`not a ${what}: '${h}'`);
}

export class HarnessArchive {
  private readonly lockFile: string;

  private constructor(readonly dir: string) {
    this.lockFile = join(dir, LOCK_FILE);
  }

  /** Opens the archive at `dir`, creating a bare repository there if there is none. */
  static async open(dir: string): Promise<HarnessArchive> {
    const abs = resolve(dir);
    if (!existsSync(join(abs, 'HEAD'))) {
      await withMutex(abs, () => HarnessArchive.create(abs));
    } else {
      const r = await runGit(abs, ['rev-parse', '--is-bare-repository'], { allowFail: true });
      if (r.code !== 0) throw new ArchiveError(`${abs} is not a git repository: ${r.stderr.trim()}`);
    }
    return new HarnessArchive(abs);
  }

  /**
   * Two engines starting at once on a fresh store (a comparison's first two jobs) would both see no
   * HEAD and run `git init` into one folder, and the second fails on the first's files. So the
   * repository is made whole under a name of its own and renamed into place: only one rename wins,
   * and whoever loses finds a finished archive there.
   */
  private static async create(abs: string): Promise<void> {
    if (existsSync(join(abs, 'HEAD'))) return;
    mkdirSync(dirname(abs), { recursive: true });
    const tmp = mkdtempSync(`${abs}.init-`);
    try {
      await runGit(tmp, ['init', '--bare', '--quiet', tmp], { cwd: dirname(abs) });
      await runGit(tmp, ['config', 'gc.auto', '0']); // no background gc racing a reader
      await runGit(tmp, ['config', 'core.logAllRefUpdates', 'false']);
      try {
        renameSync(tmp, abs); // also replaces an empty folder a user made for it
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (!['ENOTEMPTY', 'EEXIST', 'EPERM', 'EACCES'].includes(code ?? '') || !existsSync(join(abs, 'HEAD'))) {
          throw new ArchiveError(
            existsSync(abs)
              ? `${abs} exists and is not a git repository (no HEAD): move it away, or point the store elsewhere`
              : `cannot create the harness archive ${abs}: ${(e as Error).message}`,
          );
        }
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }

  private git(args: string[], opts: { input?: string | Buffer; env?: Record<string, string>; allowFail?: boolean } = {}): Promise<GitResult> {
    return runGit(this.dir, args, opts);
  }

  private async gitText(args: string[], opts: { input?: string | Buffer; env?: Record<string, string> } = {}): Promise<string> {
    return (await this.git(args, opts)).stdout.toString('utf8').trim();
  }

  /** Runs `fn` as the only writer (in this process and across processes). */
  private write<T>(fn: () => Promise<T>): Promise<T> {
    return withMutex(this.dir, async () => {
      let held;
      try {
        held = await waitForLock(this.lockFile, 'the harness archive', { timeoutMs: 60_000, pollMs: 25 });
      } catch (e) {
        throw e instanceof LockHeldError ? new ArchiveError(`${e.message} Two writers may not use one archive at once.`) : e;
      }
      try {
        return await fn();
      } finally {
        held.release();
      }
    });
  }

  private static refName(name: string): string {
    const full = name.startsWith('refs/') ? name : `refs/whale/${name}`;
    if (!full.startsWith('refs/whale/')) throw new ArchiveError(`archive refs live under refs/whale/, got '${name}'`);
    return full;
  }

  /** The commit of a candidate, or undefined. */
  async commitOf(treeHash: string): Promise<string | undefined> {
    checkHash(treeHash);
    const r = await this.git(['rev-parse', '--verify', '--quiet', `${CANDIDATE_PREFIX}${treeHash}^{commit}`], { allowFail: true });
    return r.code === 0 ? r.stdout.toString('utf8').trim() : undefined;
  }

  async has(treeHash: string): Promise<boolean> {
    return HASH_RE.test(treeHash) && (await this.commitOf(treeHash)) !== undefined;
  }

  /** Writes the folder's files as git objects and returns its tree hash (equal to gitTreeHash(dir)). */
  private async writeTree(dir: string): Promise<string> {
    const files: string[] = [];
    const walk = (d: string, rel: string) => {
      for (const name of readdirSync(d)) {
        if (IGNORED.has(name)) continue;
        const st = lstatSync(join(d, name));
        if (st.isDirectory()) walk(join(d, name), rel ? `${rel}/${name}` : name);
        else if (st.isFile()) files.push(rel ? `${rel}/${name}` : name);
      }
    };
    walk(dir, '');
    const blobs = new Map<string, string>();
    if (files.length > 0) {
      for (const f of files) if (/[\n\r]/.test(f)) throw new ArchiveError(`${join(dir, f)}: file names with line breaks cannot be archived`);
      const out = await this.gitText(['hash-object', '-w', '--no-filters', '--stdin-paths'], { input: files.map((f) => join(dir, f)).join('\n') + '\n' });
      const hashes = out.split('\n');
      if (hashes.length !== files.length) throw new ArchiveError(`git hash-object returned ${hashes.length} hashes for ${files.length} files`);
      files.forEach((f, i) => blobs.set(f, hashes[i]));
    }
    const mk = async (d: string, rel: string): Promise<string | null> => {
      const lines: string[] = [];
      for (const name of readdirSync(d)) {
        if (IGNORED.has(name)) continue;
        const full = join(d, name);
        const st = lstatSync(full);
        const path = rel ? `${rel}/${name}` : name;
        if (st.isDirectory()) {
          const sub = await mk(full, path);
          if (sub) lines.push(`040000 tree ${sub}\t${name}`);
        } else if (st.isFile()) {
          const exec = (statSync(full).mode & 0o111) !== 0;
          lines.push(`${exec ? '100755' : '100644'} blob ${blobs.get(path)}\t${name}`);
        }
      }
      if (lines.length === 0) return null;
      return this.gitText(['mktree', '-z'], { input: lines.join('\0') + '\0' });
    };
    return (await mk(dir, '')) ?? (await this.gitText(['mktree'], { input: '' }));
  }

  /**
   * Archives a candidate folder. Its commit's tree is the folder (tree hash = gitTreeHash(dir)) and
   * its parents are the parent candidates' commits. An identical candidate already archived is
   * returned as is (`created: false`); the new derivation is recorded as a link in its note.
   */
  async add(candidateDir: string, opts: AddOptions): Promise<AddResult> {
    const dir = resolve(candidateDir);
    if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new ArchiveError(`not a candidate folder: ${dir}`);
    for (const p of opts.parents) checkHash(p, 'parent tree hash');
    return this.write(async () => {
      const parentCommits: string[] = [];
      for (const p of [...new Set(opts.parents)]) {
        const c = await this.commitOf(p);
        if (!c) throw new ArchiveError(`parent candidate ${p} is not in the archive`);
        parentCommits.push(c);
      }
      const treeHash = await this.writeTree(dir);
      const expected = gitTreeHash(dir);
      if (treeHash !== expected)
        throw new ArchiveError(`git wrote tree ${treeHash} for ${dir}, but its tree hash is ${expected} (did the folder change while it was archived?)`);
      const addedAt = new Date().toISOString();
      const meta: CandidateMeta = { ...(opts.meta ?? {}), addedAt };
      const existing = await this.commitOf(treeHash);
      if (existing) {
        const note = await this.readNote(existing);
        note.links = [...(note.links ?? []), { parents: [...new Set(opts.parents)], message: opts.message, meta: opts.meta ?? {}, addedAt }];
        await this.writeNote(existing, note);
        return { treeHash, commit: existing, created: false };
      }
      const body = `${opts.message.trim() || 'candidate'}\n\n${META_MARKER}\n${JSON.stringify(meta)}\n`;
      const args = ['commit-tree', treeHash, ...parentCommits.flatMap((c) => ['-p', c])];
      const date = `${Math.floor(Date.parse(addedAt) / 1000)} +0000`;
      const commit = await this.gitText(args, { input: body, env: { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date } });
      // Create-only: the empty old value makes the update fail if the ref appeared meanwhile.
      await this.git(['update-ref', `${CANDIDATE_PREFIX}${treeHash}`, commit, '']);
      return { treeHash, commit, created: true };
    });
  }

  private async readNote(commit: string): Promise<NoteBody> {
    const r = await this.git(['notes', `--ref=${NOTES_REF}`, 'show', commit], { allowFail: true });
    if (r.code !== 0) return {};
    try {
      return JSON.parse(r.stdout.toString('utf8')) as NoteBody;
    } catch {
      return {};
    }
  }

  private async writeNote(commit: string, note: NoteBody): Promise<void> {
    await this.git(['notes', `--ref=${NOTES_REF}`, 'add', '-f', '-F', '-', commit], { input: JSON.stringify(note) + '\n' });
  }

  /** Merges `patch` over a candidate's metadata (kept in its note; the commit stays as it is). */
  async setMeta(treeHash: string, patch: CandidateMeta): Promise<void> {
    return this.write(async () => {
      const commit = await this.commitOf(treeHash);
      if (!commit) throw new ArchiveError(`candidate ${treeHash} is not in the archive`);
      const note = await this.readNote(commit);
      note.meta = { ...(note.meta ?? {}), ...patch };
      await this.writeNote(commit, note);
    });
  }

  /** One candidate with its parents, message, merged meta and later links; undefined if absent. */
  async get(treeHash: string): Promise<ArchivedCandidate | undefined> {
    const commit = await this.commitOf(treeHash);
    if (!commit) return undefined;
    return (await this.describe([commit]))[0];
  }

  /** Every candidate, in the order they were added (ties by tree hash). */
  async list(): Promise<ArchivedCandidate[]> {
    const out = await this.gitText(['for-each-ref', '--format=%(objectname)', CANDIDATE_PREFIX]);
    const commits = out ? out.split('\n') : [];
    const all = await this.describe(commits);
    return all.sort((a, b) => (a.addedAt < b.addedAt ? -1 : a.addedAt > b.addedAt ? 1 : a.treeHash < b.treeHash ? -1 : 1));
  }

  private async describe(commits: string[]): Promise<ArchivedCandidate[]> {
    if (commits.length === 0) return [];
    // One git call: commit, tree, parent commits, raw body, note (NUL-separated fields, RS between records).
    const raw = await this.git(['log', '--no-walk=unsorted', '--stdin', `--notes=${NOTES_REF}`, '--format=%H%x00%T%x00%P%x00%B%x00%N%x1e'], {
      input: commits.join('\n') + '\n',
    });
    const records = raw.stdout
      .toString('utf8')
      .split('\x1e')
      .map((r) => r.replace(/^\n/, ''))
      .filter((r) => r.trim() !== '');
    const rows = records.map((r) => {
      const [commit, tree, parents, body, note] = r.split('\0');
      return { commit, tree, parentCommits: parents.trim() ? parents.trim().split(' ') : [], body, note: note ?? '' };
    });
    const treeOfCommit = new Map(rows.map((r) => [r.commit, r.tree]));
    const missing = [...new Set(rows.flatMap((r) => r.parentCommits).filter((c) => !treeOfCommit.has(c)))];
    if (missing.length > 0) {
      const t = await this.gitText(['log', '--no-walk=unsorted', '--stdin', '--format=%H %T'], { input: missing.join('\n') + '\n' });
      for (const line of t.split('\n')) {
        const [c, tr] = line.split(' ');
        if (c && tr) treeOfCommit.set(c, tr);
      }
    }
    return rows.map((r) => {
      const { message, meta } = parseMessage(r.body);
      let note: NoteBody = {};
      if (r.note.trim()) {
        try {
          note = JSON.parse(r.note) as NoteBody;
        } catch {
          note = {};
        }
      }
      const addedAt = typeof meta.addedAt === 'string' ? meta.addedAt : '';
      const merged: CandidateMeta = { ...meta, ...(note.meta ?? {}) };
      delete merged.addedAt;
      return {
        treeHash: r.tree,
        commit: r.commit,
        parents: r.parentCommits.map((c) => treeOfCommit.get(c) ?? c),
        message,
        meta: merged,
        addedAt,
        links: note.links ?? [],
      };
    });
  }

  /** Points `refs/whale/<name>` (or a full `refs/whale/…` name) at a candidate. */
  async setRef(name: string, treeHash: string): Promise<void> {
    const ref = HarnessArchive.refName(name);
    return this.write(async () => {
      const commit = await this.commitOf(treeHash);
      if (!commit) throw new ArchiveError(`candidate ${treeHash} is not in the archive`);
      const ok = await this.git(['check-ref-format', ref], { allowFail: true });
      if (ok.code !== 0) throw new ArchiveError(`not a valid ref name: '${ref}'`);
      await this.git(['update-ref', ref, commit]);
    });
  }

  /** The tree hash a ref points at, or undefined. */
  async getRef(name: string): Promise<string | undefined> {
    const ref = HarnessArchive.refName(name);
    const r = await this.git(['rev-parse', '--verify', '--quiet', `${ref}^{tree}`], { allowFail: true });
    return r.code === 0 ? r.stdout.toString('utf8').trim() : undefined;
  }

  /** Refs under `refs/whale/<prefix>` (full names) with the tree hash each points at; candidates' own refs excluded unless asked for. */
  async listRefs(prefix = ''): Promise<{ ref: string; treeHash: string }[]> {
    const base = HarnessArchive.refName(prefix);
    const out = await this.gitText(['for-each-ref', '--format=%(refname) %(objectname)', base]);
    if (!out) return [];
    const lines = out.split('\n').map((l) => l.split(' ') as [string, string]);
    const filtered = lines.filter(([ref]) => base.startsWith(CANDIDATE_PREFIX) || !ref.startsWith(CANDIDATE_PREFIX));
    if (filtered.length === 0) return [];
    const trees = await this.gitText(['log', '--no-walk=unsorted', '--stdin', '--format=%H %T'], { input: filtered.map(([, c]) => c).join('\n') + '\n' });
    const treeOf = new Map(trees.split('\n').map((l) => l.split(' ') as [string, string]));
    return filtered.map(([ref, c]) => ({ ref, treeHash: treeOf.get(c) ?? '' }));
  }

  /** Removes a ref made by setRef (never a candidate's own ref). */
  async deleteRef(name: string): Promise<void> {
    const ref = HarnessArchive.refName(name);
    if (ref.startsWith(CANDIDATE_PREFIX)) throw new ArchiveError('candidates are never removed from the archive');
    return this.write(async () => {
      await this.git(['update-ref', '-d', ref]);
    });
  }

  private async requireTree(treeHash: string): Promise<void> {
    checkHash(treeHash);
    const r = await this.git(['cat-file', '-t', treeHash], { allowFail: true });
    if (r.code !== 0 || r.stdout.toString('utf8').trim() !== 'tree') throw new ArchiveError(`candidate ${treeHash} is not in the archive`);
  }

  /**
   * Writes the candidate folder out to `destDir` (must be empty or absent). Atomic: the files are
   * checked out into a sibling temporary folder that is then renamed to `destDir`, so a crash never
   * leaves a half-written candidate there. With `readOnly`, files are made read-only (folders stay
   * writable so the view can be removed). gitTreeHash(destDir) equals treeHash afterwards.
   */
  async materialize(treeHash: string, destDir: string, opts: { readOnly?: boolean } = {}): Promise<string> {
    await this.requireTree(treeHash);
    const dest = resolve(destDir);
    if (existsSync(dest) && readdirSync(dest).length > 0) throw new ArchiveError(`cannot materialize into ${dest}: the folder is not empty`);
    mkdirSync(dirname(dest), { recursive: true });
    const work = mkdtempSync(`${dest}.tmp-`);
    const index = mkdtempSync(join(tmpdir(), 'whale-index-'));
    try {
      const env = { GIT_INDEX_FILE: join(index, 'index') };
      await this.git(['read-tree', treeHash], { env });
      await this.git(['--work-tree', work, 'checkout-index', '--all', '--force'], { env });
      if (opts.readOnly) {
        const walk = (d: string) => {
          for (const name of readdirSync(d)) {
            const full = join(d, name);
            const st = lstatSync(full);
            if (st.isDirectory()) walk(full);
            else chmodSync(full, st.mode & 0o111 ? 0o555 : 0o444);
          }
        };
        walk(work);
      }
      if (existsSync(dest)) rmdirSync(dest); // empty (checked above)
      renameSync(work, dest);
    } catch (e) {
      rmSync(work, { recursive: true, force: true });
      throw e;
    } finally {
      rmSync(index, { recursive: true, force: true });
    }
    return dest;
  }

  /** A file of a candidate, as UTF-8 text. */
  async readFile(treeHash: string, path: string): Promise<string> {
    return (await this.readFileBuffer(treeHash, path)).toString('utf8');
  }

  async readFileBuffer(treeHash: string, path: string): Promise<Buffer> {
    await this.requireTree(treeHash);
    const clean = path.replace(/^\.?\/+/, '');
    const r = await this.git(['cat-file', 'blob', `${treeHash}:${clean}`], { allowFail: true });
    if (r.code !== 0) throw new ArchiveError(`candidate ${treeHash.slice(0, 12)} has no file '${clean}'`);
    return r.stdout;
  }

  /** Paths of every file of a candidate ('/'-separated, sorted as git sorts them). */
  async listFiles(treeHash: string): Promise<string[]> {
    await this.requireTree(treeHash);
    const out = (await this.git(['ls-tree', '-r', '-z', '--name-only', treeHash])).stdout.toString('utf8');
    return out.split('\0').filter(Boolean);
  }

  /** Unified diff (git's format, a/ and b/ prefixes) from candidate A to candidate B; '' when equal. */
  async diff(treeHashA: string, treeHashB: string, opts: { context?: number } = {}): Promise<string> {
    await this.requireTree(treeHashA);
    await this.requireTree(treeHashB);
    const args = ['diff-tree', '-p', '-r', '--no-color', '--no-ext-diff', `-U${opts.context ?? 3}`, treeHashA, treeHashB];
    return (await this.git(args)).stdout.toString('utf8');
  }
}
