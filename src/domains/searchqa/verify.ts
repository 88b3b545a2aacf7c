/**
 * SearchQA's verdict and diagnostics: normalised exact match against any gold answer (Search-R1's
 * em_check), token F1 reported beside it, and optionally an LLM judge through any OpenAI-compatible
 * endpoint (vLLM, llama.cpp server, OpenAI…) deciding semantic equivalence instead of EM.
 */
import { InfraError } from '../../core/errors.js';
import type { Verdict } from '../../core/trajectory.js';
import { exactMatch, normaliseQa, tokenF1 } from '../verifiers/qa.js';
import type { Diagnostics, RolloutRecord, Task } from '../types.js';
import { searchqaPrivate } from './data.js';
import { passagesOf } from './search.js';

export interface JudgeOptions {
  /** Base URL of an OpenAI-compatible API (the SDK appends /chat/completions), e.g. http://127.0.0.1:8001/v1. */
  url: string;
  model: string;
  /** Name of the environment variable holding the API key (the key itself never goes in a file). */
  keyEnv?: string;
  timeoutMs: number;
}

const ANSWER_TAG = /<answer>([\s\S]*?)<\/answer>/gi;

/** The text inside the last <answer>…</answer> of a completion, or null (Search-R1's extract_solution). */
export function extractTaggedAnswer(text: string): string | null {
  const all = [...text.matchAll(ANSWER_TAG)];
  return all.length === 0 ? null : all[all.length - 1][1].trim();
}

/** The harness may have returned the tags as well (candidates parse differently): score what is inside. */
function cleanAnswer(a: string): string {
  return extractTaggedAnswer(a) ?? a;
}

export function judgePrompt(question: string, gold: string[], answer: string): string {
  return [
    'You judge answers to factual questions. Reply with exactly one word: yes or no.',
    `Question: ${question}`,
    `Gold answers: ${gold.map((g) => JSON.stringify(g)).join(', ')}`,
    `Candidate answer: ${JSON.stringify(answer)}`,
    'Does the candidate answer mean the same as one of the gold answers?',
  ].join('\n');
}

/** Asks the judge; an unreachable judge or a reply that is neither yes nor no is an InfraError (verifier). */
export async function askJudge(o: JudgeOptions, question: string, gold: string[], answer: string): Promise<{ yes: boolean; said: string }> {
  const apiKey = (o.keyEnv ? process.env[o.keyEnv] : undefined) ?? 'none';
  const { default: OpenAI } = await import('openai');
  const client = new OpenAI({ apiKey, baseURL: o.url, maxRetries: 1, timeout: o.timeoutMs });
  let said: string;
  try {
    // Room for a reasoning model's <think> block before its one word.
    const res = await client.chat.completions.create({
      model: o.model,
      messages: [{ role: 'user', content: judgePrompt(question, gold, answer) }],
      temperature: 0,
      max_tokens: 512,
    });
    said = (res.choices[0]?.message?.content ?? '').trim();
  } catch (e) {
    throw new InfraError('verifier', `LLM judge at ${o.url} failed: ${(e as Error).message}`);
  }
  const final = said.replace(/<think>[\s\S]*?(<\/think>|$)/gi, ' ').toLowerCase();
  const words = final
    .replace(/[^a-z]/g, ' ')
    .trim()
    .split(/\s+/);
  // The first word, else the last yes/no of a reply that explains itself ("The answer is: no").
  const word = words[0] === 'yes' || words[0] === 'no' ? words[0] : [...words].reverse().find((w) => w === 'yes' || w === 'no');
  if (word !== 'yes' && word !== 'no')
    throw new InfraError('verifier', `LLM judge at ${o.url} answered neither yes nor no: ${JSON.stringify(said.slice(0, 80))}`);
  return { yes: word === 'yes', said };
}

export async function verifySearchqa(task: Task, rollout: RolloutRecord, judge: JudgeOptions | undefined): Promise<Verdict> {
  const { answers } = searchqaPrivate(task);
  if (rollout.finalAnswer === null) return { pass: false, score: 0, extracted: null, reason: 'no answer' };
  const answer = cleanAnswer(rollout.finalAnswer);
  const extracted = normaliseQa(answer);
  if (extracted === '') return { pass: false, score: 0, extracted: '', reason: 'empty answer' };
  const em = exactMatch(answer, answers);
  const f1 = tokenF1(answer, answers).toFixed(2);
  const gold = answers.slice(0, 3).map(normaliseQa).join(' | ');
  if (judge) {
    const j = await askJudge(judge, task.public.question, answers, answer);
    return { pass: j.yes, score: j.yes ? 1 : 0, extracted, reason: `judge ${j.yes ? 'yes' : 'no'} (EM ${em ? 1 : 0}, F1 ${f1}; gold ${gold})` };
  }
  return em
    ? { pass: true, score: 1, extracted, reason: `exact match (F1 ${f1})` }
    : { pass: false, score: 0, extracted, reason: `expected ${gold}, got ${extracted} (F1 ${f1})` };
}

/** `needle` occurs in `hay` as whole normalised words. */
function containsAnswer(hay: string, needle: string): boolean {
  const n = normaliseQa(needle);
  return n !== '' && ` ${normaliseQa(hay)} `.includes(` ${n} `);
}

/**
 * Per rollout: retrieval hit (a gold answer in a passage the retriever returned), format compliance
 * (the last completion has <answer>…</answer>), answer extracted, search calls, EM, F1, data_source.
 */
export function searchqaDiagnostics(task: Task, rollout: RolloutRecord & { termination: string }): Diagnostics {
  const { answers, dataSource } = searchqaPrivate(task);
  const searches = rollout.events.filter((e) => e.type === 'tool' && e.name === 'search');
  const passages = searches.flatMap((e) => passagesOf(e.observation ?? ''));
  const last = rollout.modelCalls[rollout.modelCalls.length - 1];
  const answer = rollout.finalAnswer === null ? null : cleanAnswer(rollout.finalAnswer);
  return {
    data_source: dataSource,
    retrieval_hit: passages.some((p) => answers.some((a) => containsAnswer(p.contents, a))),
    format_ok: last !== undefined && extractTaggedAnswer(last.completion) !== null,
    answer_extracted: answer !== null && normaliseQa(answer) !== '',
    search_calls: searches.length,
    passages_seen: passages.length,
    em: answer !== null && exactMatch(answer, answers) ? 1 : 0,
    f1: answer === null ? 0 : Math.round(tokenF1(answer, answers) * 1000) / 1000,
  };
}
