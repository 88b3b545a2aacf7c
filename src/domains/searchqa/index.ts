/**
 * SearchQA, the paper's harness-dominated domain: open-domain questions (Search-R1's 7 QA sets)
 * answered with a `search` tool over a retriever speaking Search-R1's API. With no options it runs
 * on the shipped sample (synthetic questions over a synthetic passage corpus, in the real formats)
 * with an embedded BM25 retriever started on 127.0.0.1, so the real HTTP path runs everywhere.
 */
import * as path from 'node:path';
import { z } from 'zod';
import { InputError } from '../../core/errors.js';
import { resourcesDir } from '../../core/resources.js';
import { type DomainContext, SplitSizes, answerFromModelRule, harnessDir, lazySplits } from '../common.js';
import type { Domain, Split } from '../types.js';
import { loadSplits, searchqaPrivate } from './data.js';
import { startRetriever, type RunningRetriever } from './retriever/server.js';
import { makeSearchTool } from './search.js';
import { type JudgeOptions, searchqaDiagnostics, verifySearchqa } from './verify.js';

export const SEARCHQA_ID = 'searchqa';
/** Where Search-R1's retrieval_server.py and `whale retriever serve` listen by default. */
export const DEFAULT_RETRIEVER_URL = 'http://127.0.0.1:8000/retrieve';
/** The paper's clamp on a candidate's turns. */
export const SEARCHQA_MAX_TURNS = 16;

export function sampleDir(): string {
  return path.join(resourcesDir(), 'domains', 'searchqa', 'sample');
}

const files = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).transform((v) => (typeof v === 'string' ? [v] : v));
const count = z.number().int().positive();

export const SearchqaOptions = z
  .object({
    /** Search-R1 / FlashRAG files of training questions: the harness split is drawn from them, the rest train the weights. */
    trainFiles: files.optional(),
    /** Test files (the 7 QA sets): the val split is drawn from them, the rest is the sealed test split. */
    testFiles: files.optional(),
    /** Instead of train/test files: files split four ways by a seeded hash of each task id. */
    files: files.optional(),
    harnessSize: count.default(256),
    valSize: count.default(256),
    /** Caps per split (a prefix of the seeded order). */
    sizes: SplitSizes.optional(),
    /** Changes which tasks land in which split (the order within each split too). */
    seed: z.string().default('v1'),
    retriever: z
      .object({
        /** A running retriever's /retrieve URL (Search-R1's retrieval_server.py or `whale retriever serve`). */
        url: z.string().url().optional(),
        /** Or: a wiki-18-layout corpus for an embedded BM25 retriever started with the domain. */
        corpus: z.string().min(1).optional(),
        timeoutMs: count.default(30_000),
      })
      .strict()
      .refine((r) => !(r.url && r.corpus), { message: 'give either url or corpus, not both' })
      .optional(),
    /** An LLM judge through any OpenAI-compatible endpoint decides the verdict instead of exact match. */
    judge: z
      .object({ url: z.string().url(), model: z.string().min(1), keyEnv: z.string().min(1).optional(), timeoutMs: count.default(60_000) })
      .strict()
      .optional(),
  })
  .strict()
  .refine((o) => !(o.files && (o.trainFiles || o.testFiles)), { message: 'give files, or trainFiles/testFiles, not both' });
export type SearchqaOptions = z.infer<typeof SearchqaOptions>;

export function parseSearchqaOptions(options: unknown): SearchqaOptions {
  const r = SearchqaOptions.safeParse(options ?? {});
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const field = ['domain', 'options', ...issue.path.map(String)].join('.');
  throw new InputError(
    { file: 'whale.config.json', field },
    `${issue.message} (options of domain 'searchqa': trainFiles, testFiles, files, harnessSize, valSize, sizes, seed, retriever {url | corpus, timeoutMs}, judge {url, model, keyEnv, timeoutMs})`,
  );
}

/** Embedded retrievers by corpus file, shared by every domain object of this process. */
const embedded = new Map<string, Promise<RunningRetriever>>();

async function embeddedRetriever(corpus: string): Promise<RunningRetriever> {
  let r = embedded.get(corpus);
  if (!r) {
    r = startRetriever(corpus).then((run) => {
      // It serves this process's rollouts only; it must not keep a finished CLI alive.
      run.server.unref();
      return run;
    });
    embedded.set(corpus, r);
    r.catch(() => embedded.delete(corpus));
  }
  return await r;
}

/** Stops the embedded retrievers (tests; a long-lived host switching projects). */
export async function closeEmbeddedRetrievers(): Promise<void> {
  const all = [...embedded.values()];
  embedded.clear();
  await Promise.all(all.map(async (p) => (await p.catch(() => null))?.close()));
}

export const SEARCHQA_SEARCH_SPACE = `searchqa: open-domain factual questions (Search-R1's 7 QA sets: nq, triviaqa, popqa, hotpotqa,
2wikimultihopqa, musique, bamboogle) answered with one tool, \`search\`, over a Wikipedia-style passage corpus.
Verdict: normalised exact match (lower case, no punctuation, no a/an/the) of the final answer against any gold answer.
The final answer is what the harness returns; the h0 takes it from the model's <answer>…</answer>.
The domain's tool (ctx.tool('search', {query_list, topk, max_doc_tokens})) returns JSON
{"results": [{"query", "passages": [{"id", "contents": "\\"Title\\"\\ntext", "score"}]}]}, topk at most 10.
h0 (the paper's contract): system prompt "Answer factual questions using search when needed.", a user template that
asks for the answer inside <answer>…</answer>, the model calls search(query_list, topk, max_doc_tokens) and is shown
exactly the top-1 passage (of each query) cut to 200 whitespace tokens whatever topk says, MAX_TURNS = 2 model calls.
What may change: the system and user prompts, how the tool is described to the model and how its results are formatted
(how many passages, how long, titles, numbering, deduplication), query rewriting, the number of turns (the domain clamps
every rollout to ${SEARCHQA_MAX_TURNS} model calls), answer parsing and format feedback.
Knobs of h0 (harness.json): maxTurns 1..16, passagesShown 1..5, honourTopk, maxDocTokens, passageFormat, answerParse,
formatRetries, lastTurnNudge; prompt variants for system and user.
What may not change: the model, its sampling settings, the retriever and its corpus, the verifier; a harness never sees
gold answers, and the final answer must come from the model's text (the harness may not write or look up an answer itself).`;

export async function createSearchqaDomain(options: unknown, ctx: DomainContext = {}): Promise<Domain> {
  const o = parseSearchqaOptions(options);
  const usesSample = !o.files && !o.trainFiles && !o.testFiles;
  const sample = sampleDir();
  const baseDir = usesSample ? sample : ctx.baseDir;
  const splits = await loadSplits(
    {
      trainFiles: usesSample ? ['train.parquet'] : (o.trainFiles ?? []),
      testFiles: usesSample ? ['test.parquet'] : (o.testFiles ?? []),
      files: o.files ?? [],
      harnessSize: usesSample ? Math.min(o.harnessSize, 64) : o.harnessSize,
      valSize: usesSample ? Math.min(o.valSize, 64) : o.valSize,
      sizes: o.sizes ?? {},
      seed: o.seed,
    },
    baseDir,
  );
  let url = o.retriever?.url;
  if (!url) {
    const corpus = o.retriever?.corpus
      ? path.resolve(ctx.baseDir ?? process.cwd(), o.retriever.corpus)
      : usesSample
        ? path.join(sample, 'corpus.jsonl')
        : undefined;
    url = corpus ? (await embeddedRetriever(corpus)).url : DEFAULT_RETRIEVER_URL;
  }
  const judge: JudgeOptions | undefined = o.judge
    ? { url: o.judge.url, model: o.judge.model, timeoutMs: o.judge.timeoutMs, ...(o.judge.keyEnv ? { keyEnv: o.judge.keyEnv } : {}) }
    : undefined;
  const sizes = Object.fromEntries(Object.entries(splits).map(([s, t]) => [s, t.length])) as Record<Split, number>;
  return {
    id: SEARCHQA_ID,
    title: 'searchqa — open-domain QA with a search tool (Search-R1 data)',
    description: `Search-R1's QA sets answered with a retriever behind its /retrieve API (${url}). Harness-dominated in the paper: retrieval accuracy 26.9% → 60.6% by harness search alone.`,
    regime: 'harness-dominated',
    splitSizes: sizes,
    tasks: lazySplits((split) => splits[split]),
    tools: [makeSearchTool({ url, timeoutMs: o.retriever?.timeoutMs ?? 30_000 })],
    verify: (task, rollout) => verifySearchqa(task, rollout, judge),
    checkRules: (_task, rollout) => answerFromModelRule(rollout),
    gold: (task) => searchqaPrivate(task).answers[0] ?? null,
    diagnostics: (task, rollout) => searchqaDiagnostics(task, rollout),
    limits: { maxTurns: SEARCHQA_MAX_TURNS, maxTokensPerCall: 512, ...(judge ? { verifierTimeoutMs: judge.timeoutMs + 5_000 } : {}) },
    h0Dir: harnessDir('searchqa-h0'),
    searchSpace: SEARCHQA_SEARCH_SPACE,
  };
}
