/**
 * `whale data fetch chess`: downloads the Lichess puzzle database (CC0, a zstd-compressed CSV of
 * about 5 million puzzles) and writes it decompressed — whole or its first N puzzles — as a CSV the
 * chess domain reads (`domain.options.files`). Streams end to end: fzstd (pure JS; Node 20's zlib has
 * no zstd) decompresses chunk by chunk, so memory stays flat whatever the size. A plain CSV at the
 * URL is copied as it is. The file appears only when complete (temp file + rename).
 */
import { createWriteStream, mkdirSync, renameSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { once } from 'node:events';
import { WhaleError } from '../../core/errors.js';

export const LICHESS_PUZZLES_URL = 'https://database.lichess.org/lichess_db_puzzle.csv.zst';
const ZSTD_MAGIC = [0x28, 0xb5, 0x2f, 0xfd];

export interface FetchPuzzlesOptions {
  url?: string;
  /** The CSV to write. */
  out: string;
  /** Keep the header and the first maxRows puzzles, then stop downloading. */
  maxRows?: number;
  onProgress?: (p: { bytesIn: number; rows: number }) => void;
}

export async function fetchChessPuzzles(o: FetchPuzzlesOptions): Promise<{ file: string; rows: number; bytesIn: number; compressed: boolean }> {
  const url = o.url ?? LICHESS_PUZZLES_URL;
  let res: Response;
  try {
    res = await fetch(url);
  } catch (e) {
    throw new WhaleError(
      `cannot download ${url}: ${(e as Error).message}${(e as { cause?: Error }).cause ? ` (${(e as { cause: Error }).cause.message})` : ''}`,
      'fetch',
    );
  }
  if (!res.ok || !res.body) throw new WhaleError(`cannot download ${url}: HTTP ${res.status} ${res.statusText}`, 'fetch');
  const file = path.resolve(o.out);
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.part`;
  const sink = createWriteStream(tmp);
  let bytesIn = 0;
  let rows = -1; // the header is not a puzzle
  let done = false;
  let compressed: boolean | null = null;
  const pending: Uint8Array[] = [];
  // Keeps whole lines only, up to maxRows puzzles after the header.
  const take = (data: Uint8Array) => {
    if (done) return;
    let end = data.length;
    for (let i = 0; i < data.length; i++) {
      if (data[i] !== 0x0a) continue;
      rows++;
      if (o.maxRows !== undefined && rows >= o.maxRows) {
        end = i + 1;
        done = true;
        break;
      }
    }
    pending.push(end === data.length ? data : data.subarray(0, end));
  };
  const { Decompress } = await import('fzstd');
  const zstd = new Decompress((chunk) => take(chunk));
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      bytesIn += chunk.length;
      compressed ??= ZSTD_MAGIC.every((b, i) => chunk[i] === b);
      if (compressed) zstd.push(chunk);
      else take(chunk);
      for (const p of pending.splice(0)) if (!sink.write(p)) await once(sink, 'drain');
      o.onProgress?.({ bytesIn, rows: Math.max(0, rows) });
      if (done) break; // leaving the loop cancels the body: the rest is never downloaded
    }
    if (compressed && !done) zstd.push(new Uint8Array(0), true);
    for (const p of pending.splice(0)) sink.write(p);
    sink.end();
    await once(sink, 'finish');
  } catch (e) {
    sink.destroy();
    rmSync(tmp, { force: true });
    throw new WhaleError(`cannot read ${url}: ${(e as Error).message}`, 'fetch');
  }
  if (rows < 1) {
    rmSync(tmp, { force: true });
    throw new WhaleError(`${url} holds no puzzles`, 'fetch');
  }
  renameSync(tmp, file);
  return { file, rows, bytesIn, compressed: compressed === true };
}
