/**
 * The `search` tool: a client of a retriever speaking Search-R1's `POST /retrieve` API (Search-R1's
 * own retrieval_server.py with e5 or BM25, or `whale retriever serve`). The observation is the
 * retriever's ranking as JSON, so the harness decides what the model sees (how many passages, how
 * long, in what form). A retriever that is down, slow, answers 5xx or answers garbage makes the
 * rollout an infrastructure failure, never a wrong answer.
 */
import { InfraError } from '../../core/errors.js';
import type { ToolSpec } from '../types.js';

/** Documents one search may return, whatever the harness asks (the h0 shows one of them). */
export const SEARCH_MAX_TOPK = 10;
/** Queries one search call may send. */
export const SEARCH_MAX_QUERIES = 5;

export interface RetrievedPassage {
  id: string;
  /** wiki-18 layout: `"Title"\ntext`. */
  contents: string;
  score: number | null;
}

/** The observation text of a search: one list of passages per query, best first. */
export interface SearchObservation {
  results: { query: string; passages: RetrievedPassage[] }[];
}

function asPassage(x: unknown): RetrievedPassage | null {
  const wrapped = x as { document?: unknown; score?: unknown };
  const doc = (wrapped && typeof wrapped === 'object' && 'document' in wrapped ? wrapped.document : x) as { id?: unknown; contents?: unknown } | null;
  if (!doc || typeof doc !== 'object' || typeof doc.contents !== 'string') return null;
  return { id: String(doc.id ?? ''), contents: doc.contents, score: typeof wrapped.score === 'number' ? wrapped.score : null };
}

/** Truncates a passage to its first n whitespace-separated tokens. */
export function truncateTokens(text: string, n: number): string {
  let count = 0;
  for (const m of text.matchAll(/\S+/g)) {
    if (++count === n) return text.slice(0, m.index + m[0].length);
  }
  return text;
}

/** One POST /retrieve; transport failures, timeouts, 5xx and malformed replies are InfraErrors (source 'tool'). */
export async function retrieve(url: string, queries: string[], topk: number, timeoutMs: number): Promise<RetrievedPassage[][]> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ queries, topk, return_scores: true }),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (e) {
    if ((e as Error).name === 'TimeoutError') throw new InfraError('tool', `retriever at ${url} did not answer within ${timeoutMs} ms`);
    const cause = (e as { cause?: { code?: string } }).cause?.code;
    throw new InfraError('tool', `retriever at ${url} unreachable: ${cause ?? (e as Error).message}`);
  }
  const body = await res.text().catch(() => '');
  if (res.status >= 500 || res.status === 429) throw new InfraError('tool', `retriever at ${url} answered HTTP ${res.status}: ${body.slice(0, 200)}`);
  if (!res.ok) throw new Error(`retriever refused the request (HTTP ${res.status}): ${body.slice(0, 200)}`);
  let parsed: { result?: unknown };
  try {
    parsed = JSON.parse(body) as { result?: unknown };
  } catch {
    throw new InfraError('tool', `retriever at ${url} answered something that is not JSON: ${body.slice(0, 200)}`);
  }
  const result = parsed.result;
  if (!Array.isArray(result) || result.length !== queries.length || !result.every(Array.isArray))
    throw new InfraError('tool', `retriever at ${url} answered without a result list per query`);
  return (result as unknown[][]).map((list) =>
    list.map((x) => {
      const p = asPassage(x);
      if (!p) throw new InfraError('tool', `retriever at ${url} answered a document without contents`);
      return p;
    }),
  );
}

export interface SearchToolOptions {
  url: string;
  timeoutMs: number;
}

/** `search {query_list, topk?, max_doc_tokens?}` (a single `query` string is accepted too). */
export function makeSearchTool(o: SearchToolOptions): ToolSpec {
  return {
    name: 'search',
    description: `search(query_list, topk = 3, max_doc_tokens): the retriever's top passages for each query (topk at most ${SEARCH_MAX_TOPK}, at most ${SEARCH_MAX_QUERIES} queries), best first, each cut to max_doc_tokens whitespace tokens when given. Observation: JSON {"results": [{"query", "passages": [{"id", "contents": "\\"Title\\"\\ntext", "score"}]}]}.`,
    parameters: {
      type: 'object',
      properties: {
        query_list: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: SEARCH_MAX_QUERIES },
        query: { type: 'string' },
        topk: { type: 'integer', minimum: 1, maximum: SEARCH_MAX_TOPK, default: 3 },
        max_doc_tokens: { type: 'integer', minimum: 1 },
      },
      additionalProperties: false,
    },
    async call(args: unknown): Promise<string> {
      const a = (args ?? {}) as { query_list?: unknown; query?: unknown; topk?: unknown; max_doc_tokens?: unknown };
      const list = a.query_list ?? (a.query !== undefined ? [a.query] : undefined);
      if (!Array.isArray(list) || list.length === 0 || !list.every((q) => typeof q === 'string' && q.trim() !== ''))
        return 'error: search needs {query_list: [non-empty strings], topk?: integer, max_doc_tokens?: integer}';
      const queries = (list as string[]).slice(0, SEARCH_MAX_QUERIES).map((q) => q.trim());
      const topk = typeof a.topk === 'number' && Number.isFinite(a.topk) ? Math.max(1, Math.min(SEARCH_MAX_TOPK, Math.floor(a.topk))) : 3;
      const maxTokens = typeof a.max_doc_tokens === 'number' && a.max_doc_tokens >= 1 ? Math.floor(a.max_doc_tokens) : null;
      const ranked = await retrieve(o.url, queries, topk, o.timeoutMs);
      const obs: SearchObservation = {
        results: queries.map((query, i) => ({
          query,
          passages: ranked[i].slice(0, topk).map((p) => (maxTokens === null ? p : { ...p, contents: truncateTokens(p.contents, maxTokens) })),
        })),
      };
      return JSON.stringify(obs);
    },
  };
}

/** The passages in a search observation (for diagnostics); [] when it is not one (a tool error). */
export function passagesOf(observation: string): RetrievedPassage[] {
  try {
    const o = JSON.parse(observation) as SearchObservation;
    return Array.isArray(o.results) ? o.results.flatMap((r) => (Array.isArray(r.passages) ? r.passages : [])) : [];
  } catch {
    return [];
  }
}
