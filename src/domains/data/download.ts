/**
 * Resumable HTTP downloads of the field's published data files (Hugging Face `resolve` URLs and any
 * plain HTTP server): GET into `<dest>.part`, resume it with a Range request after an interruption,
 * rename to `<dest>` once complete. A finished file is never fetched again.
 */
import { createWriteStream, existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { WhaleError } from '../../core/errors.js';

export interface DownloadResult {
  dest: string;
  bytes: number;
  /** 'done' already there, 'fetched' from the start, 'resumed' from a partial file. */
  how: 'done' | 'fetched' | 'resumed';
}

export async function downloadFile(
  url: string,
  dest: string,
  opts: { headers?: Record<string, string>; timeoutMs?: number; onProgress?: (bytes: number) => void } = {},
): Promise<DownloadResult> {
  if (existsSync(dest)) return { dest, bytes: statSync(dest).size, how: 'done' };
  mkdirSync(dirname(dest), { recursive: true });
  const part = `${dest}.part`;
  const have = existsSync(part) ? statSync(part).size : 0;
  let res: Response;
  try {
    res = await fetch(url, {
      headers: { ...(opts.headers ?? {}), ...(have > 0 ? { range: `bytes=${have}-` } : {}) },
      redirect: 'follow',
      signal: AbortSignal.timeout(opts.timeoutMs ?? 24 * 3600_000),
    });
  } catch (e) {
    throw new WhaleError(
      `download of ${url} failed: ${(e as { cause?: { code?: string } }).cause?.code ?? (e as Error).message}${have > 0 ? ` (${have} bytes kept in ${part}; run again to resume)` : ''}`,
      'download',
    );
  }
  if (res.status === 416 && have > 0) {
    // The partial file already holds every byte.
    renameSync(part, dest);
    return { dest, bytes: have, how: 'resumed' };
  }
  if (res.status !== 200 && res.status !== 206) throw new WhaleError(`download of ${url} failed: HTTP ${res.status} ${res.statusText}`, 'download');
  const resumed = res.status === 206 && have > 0;
  if (res.status === 206 && !resumed) throw new WhaleError(`download of ${url}: the server sent a partial answer to a full request`, 'download');
  let bytes = resumed ? have : 0;
  const counted = Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>);
  counted.on('data', (c: Buffer) => {
    bytes += c.length;
    opts.onProgress?.(bytes);
  });
  try {
    // Append only to a 206; a 200 to a range request means the server ignored it, so start over.
    await pipeline(counted, createWriteStream(part, { flags: resumed ? 'a' : 'w' }));
  } catch (e) {
    throw new WhaleError(`download of ${url} interrupted after ${bytes} bytes (kept in ${part}; run again to resume): ${(e as Error).message}`, 'download');
  }
  const expected = Number(res.headers.get('content-length') ?? NaN);
  if (Number.isFinite(expected) && bytes - (resumed ? have : 0) < expected)
    throw new WhaleError(`download of ${url} ended early: ${bytes} bytes (kept in ${part}; run again to resume)`, 'download');
  renameSync(part, dest);
  return { dest, bytes, how: resumed ? 'resumed' : 'fetched' };
}
