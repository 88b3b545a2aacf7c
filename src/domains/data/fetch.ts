/**
 * `whale data fetch DOMAIN`: the full data sets of a paper domain on a connected machine, from the
 * Hugging Face hub (or any mirror / HTTP server: `endpoint`). One table of files per domain, each
 * fetched with downloadFile (resumable, `<dest>.part` renamed when complete, a finished file never
 * fetched again); a domain whose files need more than a download brings its own `fetch`.
 */
import * as path from 'node:path';
import { WhaleError } from '../../core/errors.js';
import { fetchChessPuzzles } from '../chess/fetch.js';
import { SEARCHQA_REMOTE, searchqaOptionsFor } from '../searchqa/fetch.js';
import { downloadFile, type DownloadResult } from './download.js';

export interface RemoteFile {
  /** A part the user can pick with `--what` (e.g. data, corpus, index); absent = always fetched. */
  group?: string;
  /** Hugging Face dataset repository and the file's path in it. */
  repo: string;
  file: string;
  /** Where it goes under the target folder. */
  local: string;
}

export interface FetchOptions {
  dir: string;
  groups?: string[];
  endpoint?: string;
  token?: string;
  /** Where a domain's own fetch reads from instead of its default (chess: the .csv.zst URL). */
  url?: string;
  /** Stop after this many rows (a domain whose fetch streams rows: chess). */
  maxRows?: number;
  log?: (line: string) => void;
}

export interface DomainData {
  files: RemoteFile[];
  /** Parts fetched when `--what` is not given. */
  defaultGroups?: string[];
  /** `domain.options` that use the fetched files, given the folder as the config names it. */
  options(dir: string): Record<string, unknown>;
  /** What to do next, printed after the options. */
  notes?(dir: string, groups: string[]): string[];
  /** Files that need more than a download (chess: a zstd stream cut at maxRows); replaces `files`. */
  fetch?(o: FetchOptions): Promise<void>;
}

const posix = (dir: string, f: string) => path.posix.join(dir.split(path.sep).join('/'), f);

const LICHESS_CSV = 'lichess_db_puzzle.csv';

export const DOMAIN_DATA: Record<string, DomainData> = {
  chess: {
    // The Lichess puzzle database (CC0): one .csv.zst, decompressed as it streams, cut at --max-rows.
    files: [],
    options: (dir) => ({ files: posix(dir, LICHESS_CSV) }),
    fetch: async (o) => {
      let last = 0;
      const r = await fetchChessPuzzles({
        out: path.join(o.dir, LICHESS_CSV),
        ...(o.url ? { url: o.url } : {}),
        ...(o.maxRows !== undefined ? { maxRows: o.maxRows } : {}),
        onProgress: ({ bytesIn, rows }) => {
          if (bytesIn - last < 16 << 20) return;
          last = bytesIn;
          o.log?.(`  ${(bytesIn / 1048576).toFixed(0)} MB read, ${rows} puzzles`);
        },
      });
      o.log?.(`wrote ${r.rows} puzzles to ${r.file} (${(r.bytesIn / 1048576).toFixed(1)} MB ${r.compressed ? 'zstd' : 'csv'} read)`);
    },
  },
  searchqa: {
    files: [...SEARCHQA_REMOTE],
    defaultGroups: ['data'],
    options: (dir) => searchqaOptionsFor(dir),
    notes: (dir, groups) =>
      groups.includes('corpus')
        ? [
            `Retriever: gunzip ${path.join(dir, 'wiki-18.jsonl.gz')}, then Search-R1's retrieval_server.py (e5, GPU) or, for small corpora, whale retriever serve --corpus FILE`,
          ]
        : [],
  },
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

/** The parts a domain's files come in (empty when every file is always fetched). */
export function dataGroups(data: DomainData): string[] {
  return [...new Set(data.files.flatMap((f) => (f.group ? [f.group] : [])))];
}

/** https://huggingface.co/datasets/<repo>/resolve/main/<file>, under another endpoint when given (HF_ENDPOINT, a mirror, a test server). */
export function remoteUrl(f: RemoteFile, endpoint = 'https://huggingface.co'): string {
  return `${endpoint.replace(/\/+$/, '')}/datasets/${f.repo}/resolve/main/${f.file}`;
}

/** Downloads a domain's files (those of the chosen parts) into `dir`; files already there are kept. */
export async function fetchDomainData(domain: string, o: FetchOptions): Promise<DownloadResult[]> {
  const data = DOMAIN_DATA[domain];
  if (!data) throw new WhaleError(`no data to fetch for domain '${domain}' (known: ${Object.keys(DOMAIN_DATA).join(', ')})`, 'download');
  if (data.fetch) {
    await data.fetch(o);
    return [];
  }
  const groups = o.groups ?? data.defaultGroups ?? dataGroups(data);
  const out: DownloadResult[] = [];
  for (const f of data.files.filter((x) => !x.group || groups.includes(x.group))) {
    const dest = path.join(o.dir, f.local);
    const r = await downloadFile(remoteUrl(f, o.endpoint), dest, o.token ? { headers: { authorization: `Bearer ${o.token}` } } : {});
    o.log?.(`${r.how.padEnd(8)} ${String(r.bytes).padStart(12)}  ${dest}`);
    out.push(r);
  }
  return out;
}
