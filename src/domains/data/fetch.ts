/**
 * `whale data fetch DOMAIN`: the full data sets of a paper domain on a connected machine, from the
 * Hugging Face hub (or any mirror / HTTP server: `endpoint`). One list of files per domain; each is
 * downloaded to `<dest>.part` and renamed when complete, so an interrupted fetch leaves no
 * half-file behind and a finished file is never fetched again.
 */
import { createWriteStream, existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream } from 'node:stream/web';
import { WhaleError } from '../../core/errors.js';

export interface RemoteFile {
  /** Hugging Face dataset repository and the file's path in it. */
  repo: string;
  file: string;
  /** Where it goes under the target folder. */
  local: string;
}

export interface DomainData {
  files: RemoteFile[];
  /** `domain.options` that use the fetched files, given the folder as the config names it. */
  options(dir: string): Record<string, unknown>;
}

const posix = (dir: string, f: string) => path.posix.join(dir.split(path.sep).join('/'), f);

export const DOMAIN_DATA: Record<string, DomainData> = {
  math: {
    // DAPO's training set (Parquet, chat prompt + reward_model.ground_truth; each problem ~100×),
    // DAPO's AIME 2024 in the same layout (each problem 32×), and AIME 2025 (problem, answer, id).
    files: [
      { repo: 'BytedTsinghua-SIA/DAPO-Math-17k', file: 'data/dapo-math-17k.parquet', local: 'dapo-math-17k.parquet' },
      { repo: 'BytedTsinghua-SIA/AIME-2024', file: 'data/aime-2024.parquet', local: 'aime-2024.parquet' },
      { repo: 'math-ai/aime25', file: 'test.jsonl', local: 'aime-2025.jsonl' },
    ],
    options: (dir) => ({
      // The first 51,200 DAPO rows (~1% of the file) feed the harness search, the rest RSFT (dedupe keeps a problem in the
      // first split that has it, so none is in both); AIME 2024 validates, AIME 2025 is the sealed test.
      files: {
        harness: { file: posix(dir, 'dapo-math-17k.parquet'), limit: 51_200 },
        weight: { file: posix(dir, 'dapo-math-17k.parquet'), offset: 51_200 },
        val: posix(dir, 'aime-2024.parquet'),
        test: posix(dir, 'aime-2025.jsonl'),
      },
      sandboxUrl: 'http://127.0.0.1:8080',
    }),
  },
};

/** https://huggingface.co/datasets/<repo>/resolve/main/<file>, under another endpoint when given (HF_ENDPOINT, a mirror, a test server). */
export function remoteUrl(f: RemoteFile, endpoint = 'https://huggingface.co'): string {
  return `${endpoint.replace(/\/+$/, '')}/datasets/${f.repo}/resolve/main/${f.file}`;
}

export interface FetchedFile {
  dest: string;
  bytes: number;
  how: 'present' | 'fetched';
}

async function download(url: string, dest: string, headers: Record<string, string>): Promise<FetchedFile> {
  if (existsSync(dest)) return { dest, bytes: statSync(dest).size, how: 'present' };
  mkdirSync(path.dirname(dest), { recursive: true });
  let res: Response;
  try {
    res = await fetch(url, { headers, redirect: 'follow' });
  } catch (e) {
    throw new WhaleError(`download of ${url} failed: ${(e as { cause?: { code?: string } }).cause?.code ?? (e as Error).message}`, 'download');
  }
  if (res.status !== 200 || !res.body) throw new WhaleError(`download of ${url} failed: HTTP ${res.status} ${res.statusText}`, 'download');
  const part = `${dest}.part`;
  let bytes = 0;
  const body = Readable.fromWeb(res.body as ReadableStream<Uint8Array>);
  body.on('data', (c: Buffer) => (bytes += c.length));
  try {
    await pipeline(body, createWriteStream(part));
  } catch (e) {
    throw new WhaleError(`download of ${url} interrupted after ${bytes} bytes: ${(e as Error).message}`, 'download');
  }
  const expected = Number(res.headers.get('content-length') ?? NaN);
  if (Number.isFinite(expected) && bytes !== expected) throw new WhaleError(`download of ${url} ended early: ${bytes} of ${expected} bytes`, 'download');
  renameSync(part, dest);
  return { dest, bytes, how: 'fetched' };
}

/** Downloads a domain's files into `dir`; files already there are kept. */
export async function fetchDomainData(domain: string, o: { dir: string; endpoint?: string; token?: string; log?: (line: string) => void }): Promise<FetchedFile[]> {
  const data = DOMAIN_DATA[domain];
  if (!data) throw new WhaleError(`no data to fetch for domain '${domain}' (known: ${Object.keys(DOMAIN_DATA).join(', ')})`, 'download');
  const out: FetchedFile[] = [];
  for (const f of data.files) {
    const r = await download(remoteUrl(f, o.endpoint), path.join(o.dir, f.local), o.token ? { authorization: `Bearer ${o.token}` } : {});
    o.log?.(`${r.how.padEnd(8)} ${String(r.bytes).padStart(12)}  ${r.dest}`);
    out.push(r);
  }
  return out;
}
