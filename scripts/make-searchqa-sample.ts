/**
 * Writes SearchQA's shipped sample, deterministically, in the field's real formats:
 *   resources/domains/searchqa/sample/corpus.jsonl   wiki-18 layout {"id", "contents": "\"Title\"\ntext"}
 *   resources/domains/searchqa/sample/train.parquet  Search-R1 layout (nq 1-hop + hotpotqa 2-hop, as Search-R1 trains)
 *   resources/domains/searchqa/sample/test.parquet   Search-R1 layout, the 7 QA sets' names, 24 questions each
 *   resources/domains/searchqa/sample/flashrag/popqa/test.jsonl   FlashRAG layout {id, question, golden_answers, metadata}
 * The world is synthetic: the project's 300 invented names with a pet, city, colour, job, friend and
 * boss each (words of the embedded model's vocabulary), one passage per fact plus distractor passages
 * that name a person beside other values. Run: node --import tsx scripts/make-searchqa-sample.ts
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parquetWriteFile } from 'hyparquet-writer';
import { Rng } from '../src/core/rng.js';
import { ENTITY_ATTRIBUTES, NAMES, VALUES, VALUE_ATTRIBUTES, FILLER } from '../src/domains/vocab.js';

const OUT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'resources', 'domains', 'searchqa', 'sample');
const rng = new Rng(20261201);

type World = Map<string, Record<string, string>>;
const world: World = new Map();
for (const n of NAMES) {
  const rec: Record<string, string> = {};
  for (const a of VALUE_ATTRIBUTES) rec[a] = rng.pick(VALUES[a]);
  for (const a of ENTITY_ATTRIBUTES) rec[a] = rng.pick(NAMES.filter((m) => m !== n));
  world.set(n, rec);
}

// One passage per fact, then distractors: a person beside values that are not their own.
const passages: { id: string; contents: string }[] = [];
for (const n of NAMES) {
  const rec = world.get(n)!;
  for (const a of [...VALUE_ATTRIBUTES, ...ENTITY_ATTRIBUTES])
    passages.push({ id: '', contents: `"${n}"\n${n} is a person . the ${a} of ${n} is ${rec[a]} .` });
}
const allValues = VALUE_ATTRIBUTES.flatMap((a) => VALUES[a]);
for (let i = 0; i < 1200; i++) {
  const n = rng.pick(NAMES);
  const other = rng.pick(NAMES.filter((m) => m !== n));
  const v = rng.pick(allValues);
  const filler = rng.sample(FILLER, 4).join(' ');
  passages.push({ id: '', contents: `"${n}"\n${n} and ${other} talked about ${v} . ${filler} .` });
}
rng.shuffle(passages);
passages.forEach((p, i) => (p.id = String(i)));

// Questions without repeats across files: 1-hop (attribute, name) and 2-hop (attribute, relation, name).
const oneHop = rng.shuffle(NAMES.flatMap((n) => VALUE_ATTRIBUTES.map((a) => ({ n, a }))));
const twoHop = rng.shuffle(NAMES.flatMap((n) => ENTITY_ATTRIBUTES.flatMap((r) => VALUE_ATTRIBUTES.map((a) => ({ n, r, a })))));
function question(hops: 1 | 2): { question: string; answer: string } {
  if (hops === 1) {
    const { n, a } = oneHop.pop()!;
    return { question: `What is the ${a} of ${n} ?`, answer: world.get(n)![a] };
  }
  const { n, r, a } = twoHop.pop()!;
  return { question: `What is the ${a} of the ${r} of ${n} ?`, answer: world.get(world.get(n)![r])![a] };
}

// Search-R1's prompt (scripts/data_process/nq_search.py, make_prefix, template 'base').
const searchR1Prompt = (q: string) =>
  `Answer the given question. You must conduct reasoning inside <think> and </think> first every time you get new information. After reasoning, if you find you lack some knowledge, you can call a search engine by <search> query </search> and it will return the top searched results between <information> and </information>. You can search as many times as your want. If you find no further external knowledge needed, you can directly provide the answer inside <answer> and </answer>, without detailed illustrations. For example, <answer> Beijing </answer>. Question: ${q}\n`;

const MULTI_HOP = new Set(['hotpotqa', '2wikimultihopqa', 'musique', 'bamboogle']);
interface Row {
  id: string;
  question: string;
  golden_answers: string[];
  data_source: string;
}
function rows(split: 'train' | 'test', sources: string[], perSource: number): Row[] {
  const out: Row[] = [];
  for (const s of sources)
    for (let i = 0; i < perSource; i++) {
      const { question: q, answer } = question(MULTI_HOP.has(s) ? 2 : 1);
      out.push({ id: `${split}_${i}`, question: q, golden_answers: [answer], data_source: s });
    }
  return out;
}

// An explicit schema so the nested columns are real Parquet lists and structs, as pyarrow writes
// Search-R1's files (without it the writer stores them as JSON strings).
const str = (name: string) => ({ name, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' });
const list = (name: string, element: object[]) => [
  { name, repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
  { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
  ...element,
];
const SEARCH_R1_SCHEMA = [
  { name: 'root', num_children: 8 },
  str('id'),
  str('question'),
  ...list('golden_answers', [str('element')]),
  str('data_source'),
  ...list('prompt', [{ name: 'element', repetition_type: 'OPTIONAL', num_children: 2 }, str('content'), str('role')]),
  str('ability'),
  { name: 'reward_model', repetition_type: 'OPTIONAL', num_children: 2 },
  { name: 'ground_truth', repetition_type: 'OPTIONAL', num_children: 1 },
  ...list('target', [str('element')]),
  str('style'),
  { name: 'extra_info', repetition_type: 'OPTIONAL', num_children: 2 },
  { name: 'index', type: 'INT64', repetition_type: 'OPTIONAL' },
  str('split'),
];

function writeSearchR1(file: string, split: 'train' | 'test', rs: Row[]): void {
  parquetWriteFile({
    filename: file,
    schema: SEARCH_R1_SCHEMA as never,
    columnData: [
      { name: 'id', data: rs.map((r) => r.id) },
      { name: 'question', data: rs.map((r) => r.question) },
      { name: 'golden_answers', data: rs.map((r) => r.golden_answers) },
      { name: 'data_source', data: rs.map((r) => r.data_source) },
      { name: 'prompt', data: rs.map((r) => [{ content: searchR1Prompt(r.question), role: 'user' }]) },
      { name: 'ability', data: rs.map(() => 'fact-reasoning') },
      { name: 'reward_model', data: rs.map((r) => ({ ground_truth: { target: r.golden_answers }, style: 'rule' })) },
      { name: 'extra_info', data: rs.map((_, i) => ({ index: BigInt(i), split })) },
    ],
  });
}

mkdirSync(path.join(OUT, 'flashrag', 'popqa'), { recursive: true });
writeFileSync(path.join(OUT, 'corpus.jsonl'), passages.map((p) => JSON.stringify(p)).join('\n') + '\n');
writeSearchR1(path.join(OUT, 'train.parquet'), 'train', rows('train', ['nq', 'hotpotqa'], 96));
writeSearchR1(path.join(OUT, 'test.parquet'), 'test', rows('test', ['nq', 'triviaqa', 'popqa', 'hotpotqa', '2wikimultihopqa', 'musique', 'bamboogle'], 24));
const flash = rows('test', ['popqa'], 60).map((r) => ({ id: r.id, question: r.question, golden_answers: r.golden_answers, metadata: {} }));
writeFileSync(path.join(OUT, 'flashrag', 'popqa', 'test.jsonl'), flash.map((r) => JSON.stringify(r)).join('\n') + '\n');
console.log(`wrote ${passages.length} passages, 192 train rows, 168 test rows, 60 FlashRAG rows to ${OUT}`);
