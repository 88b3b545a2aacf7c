import * as vscode from 'vscode';
import { join } from 'node:path';
import { HarnessArchive } from '../archive/harnessArchive.js';

export const ARCHIVE_SCHEME = 'whale-archive';

/** `whale-archive:/<tree hash>/<path>`: a file of an archived candidate, read-only. */
export function toUri(treeHash: string, path = ''): vscode.Uri {
  return vscode.Uri.from({ scheme: ARCHIVE_SCHEME, path: `/${treeHash}${path ? '/' + path.replace(/^\/+/, '') : ''}` });
}

export function fromUri(uri: vscode.Uri): { treeHash: string; path: string } {
  if (uri.scheme !== ARCHIVE_SCHEME) throw new Error(`not a ${ARCHIVE_SCHEME}: URI: ${uri.toString()}`);
  const [, treeHash = '', ...rest] = uri.path.split('/');
  if (!/^[0-9a-f]{40}$/.test(treeHash)) throw vscode.FileSystemError.FileNotFound(uri);
  return { treeHash, path: rest.join('/') };
}

const archives = new Map<string, Promise<HarnessArchive>>();

/** The archive of a run store, opened once per store. */
export function archiveOf(storeDir: string): Promise<HarnessArchive> {
  let a = archives.get(storeDir);
  if (!a) {
    a = HarnessArchive.open(join(storeDir, 'archive.git'));
    a.catch(() => archives.delete(storeDir));
    archives.set(storeDir, a);
  }
  return a;
}

/**
 * Candidates' sources at their commit, as a read-only file system: a candidate is identified by its
 * tree hash, so its content never changes and listings are cached.
 */
export class ArchiveFileSystem implements vscode.FileSystemProvider {
  private readonly files = new Map<string, Promise<string[]>>();
  private readonly emitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.emitter.event;

  constructor(private readonly storeDir: () => string | undefined) {}

  private async archive(): Promise<HarnessArchive> {
    const dir = this.storeDir();
    if (!dir) throw vscode.FileSystemError.Unavailable('no WHALE project is open');
    return archiveOf(dir);
  }

  private async list(treeHash: string, uri: vscode.Uri): Promise<string[]> {
    let l = this.files.get(treeHash);
    if (!l) {
      l = this.archive().then((a) => a.listFiles(treeHash));
      this.files.set(treeHash, l);
    }
    try {
      return await l;
    } catch {
      this.files.delete(treeHash);
      throw vscode.FileSystemError.FileNotFound(uri);
    }
  }

  async stat(uri: vscode.Uri): Promise<vscode.FileStat> {
    const { treeHash, path } = fromUri(uri);
    const files = await this.list(treeHash, uri);
    const dir = { type: vscode.FileType.Directory, ctime: 0, mtime: 0, size: 0, permissions: vscode.FilePermission.Readonly };
    if (path === '' || files.some((f) => f.startsWith(path + '/'))) return dir;
    if (!files.includes(path)) throw vscode.FileSystemError.FileNotFound(uri);
    const size = (await this.readFile(uri)).byteLength;
    return { type: vscode.FileType.File, ctime: 0, mtime: 0, size, permissions: vscode.FilePermission.Readonly };
  }

  async readDirectory(uri: vscode.Uri): Promise<[string, vscode.FileType][]> {
    const { treeHash, path } = fromUri(uri);
    const prefix = path ? path + '/' : '';
    const out = new Map<string, vscode.FileType>();
    for (const f of await this.list(treeHash, uri)) {
      if (!f.startsWith(prefix)) continue;
      const [name, ...more] = f.slice(prefix.length).split('/');
      out.set(name, more.length ? vscode.FileType.Directory : vscode.FileType.File);
    }
    return [...out];
  }

  async readFile(uri: vscode.Uri): Promise<Uint8Array> {
    const { treeHash, path } = fromUri(uri);
    try {
      return await (await this.archive()).readFileBuffer(treeHash, path);
    } catch {
      throw vscode.FileSystemError.FileNotFound(uri);
    }
  }

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => {});
  }

  private readOnly(uri: vscode.Uri): never {
    throw vscode.FileSystemError.NoPermissions(`${uri.toString()}: archived candidates are read-only; use "WHALE: Edit a Copy…" to edit one`);
  }
  createDirectory(uri: vscode.Uri): void {
    this.readOnly(uri);
  }
  writeFile(uri: vscode.Uri): void {
    this.readOnly(uri);
  }
  delete(uri: vscode.Uri): void {
    this.readOnly(uri);
  }
  rename(uri: vscode.Uri): void {
    this.readOnly(uri);
  }
}

export function registerArchiveFs(context: vscode.ExtensionContext, deps: { storeDir: () => string | undefined }): void {
  context.subscriptions.push(
    vscode.workspace.registerFileSystemProvider(ARCHIVE_SCHEME, new ArchiveFileSystem(deps.storeDir), { isReadonly: true, isCaseSensitive: true }),
  );
}
