/**
 * An embedded BM25 retriever behind Search-R1's retrieval API, so the real HTTP path runs without a
 * GPU box: `POST /retrieve {"queries": [str], "topk": int, "return_scores": bool}` →
 * `{"result": [[{"document": {"id", "contents"}, "score"}, …] per query]}` (bare documents when
 * return_scores is false), as Search-R1's retrieval_server.py answers. Ranking is MiniSearch's BM25.
 * The corpus is wiki-18's layout: one JSON object a line, `{"id", "contents": "\"Title\"\ntext"}`.
 */
import { createReadStream } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import { InputError } from '../../../core/errors.js';
import { readRequestBody } from '../../../core/requestBody.js';

export interface Passage {
  id: string;
  contents: string;
}

export interface RetrieverIndex {
  size: number;
  search(query: string, topk: number): { document: Passage; score: number }[];
}

/** Reads a wiki-18-layout JSONL corpus (gzipped when it ends in .gz); a broken line is an InputError naming file, line and field. */
export async function readCorpus(file: string, baseDir?: string): Promise<Passage[]> {
  const abs = path.resolve(baseDir ?? process.cwd(), file);
  const out: Passage[] = [];
  const seen = new Set<string>();
  const stream = createReadStream(abs, 'utf8');
  const opened = new Promise<void>((resolve, reject) => {
    stream.once('open', () => resolve());
    stream.once('error', (e: NodeJS.ErrnoException) => reject(new InputError({ file: abs }, `cannot read corpus (${e.code ?? e.message})`)));
  });
  await opened;
  // wiki-18 is published gzipped (wiki-18.jsonl.gz).
  const input = abs.endsWith('.gz') ? stream.pipe(createGunzip()) : stream;
  let line = 0;
  for await (const text of createInterface({ input, crlfDelay: Infinity })) {
    line++;
    if (text.trim() === '') continue;
    let row: unknown;
    try {
      row = JSON.parse(text);
    } catch (e) {
      throw new InputError({ file: abs, line }, `not valid JSON: ${(e as Error).message}`);
    }
    const r = row as { id?: unknown; contents?: unknown };
    if (typeof row !== 'object' || row === null) throw new InputError({ file: abs, line }, 'each line must be a JSON object {"id", "contents"}');
    if (typeof r.contents !== 'string' || r.contents.trim() === '')
      throw new InputError({ file: abs, line, field: 'contents' }, 'must be a non-empty string ("\\"Title\\"\\ntext")');
    const id = typeof r.id === 'number' ? String(r.id) : r.id;
    if (typeof id !== 'string' || id === '') throw new InputError({ file: abs, line, field: 'id' }, 'must be a string or a number');
    if (seen.has(id)) throw new InputError({ file: abs, line, field: 'id' }, `duplicate passage id '${id}'`);
    seen.add(id);
    out.push({ id, contents: r.contents });
  }
  if (out.length === 0) throw new InputError({ file: abs }, 'the corpus has no passages');
  return out;
}

/**
 * Lucene's English stop set (what Pyserini's BM25, Search-R1's sparse retriever, drops too): without
 * it every question word ("the", "of", "is") matches every passage and a query scores the whole corpus.
 */
const STOP_WORDS = new Set([
  'a',
  'an',
  'and',
  'are',
  'as',
  'at',
  'be',
  'but',
  'by',
  'for',
  'if',
  'in',
  'into',
  'is',
  'it',
  'no',
  'not',
  'of',
  'on',
  'or',
  'such',
  'that',
  'the',
  'their',
  'then',
  'there',
  'these',
  'they',
  'this',
  'to',
  'was',
  'will',
  'with',
]);

/** A BM25 index over the passages (MiniSearch: BM25+, terms lower-cased, split on spaces and punctuation, stop words dropped). */
export async function buildIndex(passages: Passage[]): Promise<RetrieverIndex> {
  const { default: MiniSearch } = await import('minisearch');
  const processTerm = (term: string): string | null => {
    const t = term.toLowerCase();
    return STOP_WORDS.has(t) ? null : t;
  };
  const ms = new MiniSearch<{ i: number; contents: string }>({ idField: 'i', fields: ['contents'], storeFields: [], processTerm });
  ms.addAll(passages.map((p, i) => ({ i, contents: p.contents })));
  return {
    size: passages.length,
    search(query, topk) {
      return ms
        .search(query, { combineWith: 'OR', prefix: false, fuzzy: false })
        .slice(0, topk)
        .map((r) => ({ document: passages[r.id as number], score: r.score }));
    },
  };
}

/** The most documents one query may ask for (Search-R1's server has no cap; a bound keeps replies small). */
export const MAX_TOPK = 100;
const MAX_BODY_BYTES = 1 << 20;

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Validates a /retrieve body as FastAPI would (422 with a `detail` naming the field). */
function parseRequest(text: string): { queries: string[]; topk: number; returnScores: boolean } | { error: string } {
  let b: unknown;
  try {
    b = JSON.parse(text);
  } catch {
    return { error: 'body: not valid JSON' };
  }
  const r = b as { queries?: unknown; topk?: unknown; return_scores?: unknown };
  if (typeof b !== 'object' || b === null) return { error: 'body: must be an object {queries, topk, return_scores}' };
  if (!Array.isArray(r.queries) || !r.queries.every((q) => typeof q === 'string')) return { error: 'queries: must be a list of strings' };
  const topk = r.topk === undefined || r.topk === null ? 3 : r.topk;
  if (typeof topk !== 'number' || !Number.isInteger(topk) || topk < 1 || topk > MAX_TOPK) return { error: `topk: must be an integer in [1, ${MAX_TOPK}]` };
  const rs = r.return_scores ?? false;
  if (typeof rs !== 'boolean') return { error: 'return_scores: must be a boolean' };
  return { queries: r.queries as string[], topk, returnScores: rs };
}

export interface RunningRetriever {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** Serves the index on host:port (port 0 = any free port). */
export async function serveRetriever(index: RetrieverIndex, opts: { host?: string; port?: number } = {}): Promise<RunningRetriever> {
  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (req.method === 'GET' && (url.pathname === '/health' || url.pathname === '/')) return send(res, 200, { status: 'ok', passages: index.size });
      if (url.pathname !== '/retrieve') return send(res, 404, { detail: 'Not Found' });
      if (req.method !== 'POST') return send(res, 405, { detail: 'Method Not Allowed' });
      let text: string;
      try {
        text = await readRequestBody(req, MAX_BODY_BYTES);
      } catch (e) {
        return send(res, 413, { detail: (e as Error).message });
      }
      const p = parseRequest(text);
      if ('error' in p) return send(res, 422, { detail: p.error });
      const result = p.queries.map((q) => {
        const hits = index.search(q, p.topk);
        return p.returnScores ? hits : hits.map((h) => h.document);
      });
      send(res, 200, { result });
    })().catch((e: unknown) => send(res, 500, { detail: String(e) }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    url: `http://${host}:${addr.port}/retrieve`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Reads a corpus, indexes it and serves it: what `whale retriever serve` and the domain's embedded retriever run. */
export async function startRetriever(
  corpus: string,
  opts: { host?: string; port?: number; baseDir?: string } = {},
): Promise<RunningRetriever & { passages: number; indexMs: number }> {
  const t0 = Date.now();
  const passages = await readCorpus(corpus, opts.baseDir);
  const index = await buildIndex(passages);
  const indexMs = Date.now() - t0;
  const running = await serveRetriever(index, opts);
  return { ...running, passages: passages.length, indexMs };
}
