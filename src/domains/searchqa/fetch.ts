/**
 * The full SearchQA data on a connected machine, from where Search-R1 takes it: the QA sets as
 * FlashRAG publishes them (RUC-NLPIR/FlashRAG_datasets: nq + hotpotqa train, and the 7 evaluation
 * sets Search-R1 reports on), the wiki-18 corpus (PeterJinGo/wiki-18-corpus) and its e5 Flat index
 * in two parts (PeterJinGo/wiki-18-e5-index, for Search-R1's own retrieval_server.py).
 */
import * as path from 'node:path';

export type FetchGroup = 'data' | 'corpus' | 'index';

export interface RemoteFile {
  group: FetchGroup;
  /** Hugging Face dataset repository and the file's path in it. */
  repo: string;
  file: string;
  /** Where it goes under the target folder. */
  local: string;
}

const FLASHRAG = 'RUC-NLPIR/FlashRAG_datasets';
/** Search-R1's train files and evaluation files (dev where the set has no public test answers). */
export const SEARCHQA_TRAIN = ['nq/train.jsonl', 'hotpotqa/train.jsonl'];
export const SEARCHQA_TEST = [
  'nq/test.jsonl',
  'triviaqa/test.jsonl',
  'popqa/test.jsonl',
  'hotpotqa/dev.jsonl',
  '2wikimultihopqa/dev.jsonl',
  'musique/dev.jsonl',
  'bamboogle/test.jsonl',
];

export const SEARCHQA_REMOTE: readonly RemoteFile[] = [
  ...[...SEARCHQA_TRAIN, ...SEARCHQA_TEST].map((f): RemoteFile => ({ group: 'data', repo: FLASHRAG, file: f, local: path.join('flashrag', f) })),
  { group: 'corpus', repo: 'PeterJinGo/wiki-18-corpus', file: 'wiki-18.jsonl.gz', local: 'wiki-18.jsonl.gz' },
  { group: 'index', repo: 'PeterJinGo/wiki-18-e5-index', file: 'part_aa', local: path.join('e5-index', 'part_aa') },
  { group: 'index', repo: 'PeterJinGo/wiki-18-e5-index', file: 'part_ab', local: path.join('e5-index', 'part_ab') },
];

/** The domain options that use what `whale data fetch searchqa` wrote (paths relative to the config's folder). */
export function searchqaOptionsFor(dirFromConfig: string): { trainFiles: string[]; testFiles: string[]; retriever: { url: string } } {
  const p = (f: string) => path.posix.join(dirFromConfig.split(path.sep).join('/'), 'flashrag', f);
  return { trainFiles: SEARCHQA_TRAIN.map(p), testFiles: SEARCHQA_TEST.map(p), retriever: { url: 'http://127.0.0.1:8000/retrieve' } };
}
