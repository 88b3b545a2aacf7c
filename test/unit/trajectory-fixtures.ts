// Hand-made trajectories with the shapes the transcript must handle: several turns whose context
// grows, tool calls between turns, a rewritten context, a completion cut by max_tokens, errors.
import type { ModelCall, Trajectory } from '../../src/core/trajectory.js';

export function call(index: number, messages: ModelCall['messages'], completion: string, extra: Partial<ModelCall> = {}): ModelCall {
  return {
    index,
    policyVersion: 'v1',
    messages,
    params: { temperature: 1, max_tokens: 24 },
    completion,
    finishReason: 'stop',
    usage: { promptTokens: 10 + index, completionTokens: 3 },
    latencyMs: 40,
    logprobs: [-0.5, -1.5, -0.1],
    t: 10 + index * 100,
    ...extra,
  };
}

export function multiTurn(over: Partial<Trajectory> = {}): Trajectory {
  const sys = { role: 'system' as const, content: 'You answer questions about cities.' };
  const q = { role: 'user' as const, content: 'What is the city of Ziras?' };
  const obs = { role: 'tool' as const, content: 'Ziras: a town near Lima', name: 'search' };
  return {
    id: 'h1-task-7-2-abcd',
    runId: 'run-1',
    phase: '0',
    domain: 'kbqa',
    harnessHash: 'feedface'.repeat(5),
    policyVersion: 'v1',
    taskId: 'task-7',
    split: 'harness',
    sampleIndex: 2,
    seed: 42,
    modelCalls: [
      call(0, [sys, q], 'search Ziras'),
      call(1, [sys, q, { role: 'assistant', content: 'search Ziras' }, obs], 'answer Tokyo and then some more words', { finishReason: 'length' }),
      call(2, [sys, { role: 'user', content: 'Summary: Ziras near Lima. Answer.' }], 'answer Tokyo', { logprobs: undefined }),
    ],
    events: [
      { t: 5, type: 'log', name: 'sandbox', message: 'node harness', data: { startupMs: 12 } },
      { t: 150, type: 'tool', name: 'search', args: { q: 'Ziras' }, observation: 'Ziras: a town near Lima' },
      { t: 160, type: 'tool', name: 'lookup', args: { id: 3 }, message: 'error: no such id' },
      { t: 250, type: 'error', name: 'parse', message: 'could not parse the answer' },
    ],
    finalAnswer: 'Tokyo',
    termination: 'answered',
    verdict: { pass: false, score: 0, extracted: 'tokyo', reason: 'wrong answer' },
    timings: { startedAt: '2026-11-29T00:00:00.000Z', wallMs: 400, modelMs: 120, toolMs: 5 },
    ...over,
  };
}
