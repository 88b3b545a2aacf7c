// Synthetic trajectories that pass TrajectorySchema, for the benches and for the editor tests that
// need sizes a real tiny run never makes (thousands of rollouts, one rollout of tens of MB).
import type { ModelCall, Trajectory } from '../../src/core/trajectory.js';

/** A four-turn tool-using rollout of realistic size (token ids and logprobs included). */
export function synthetic(i: number): Trajectory {
  const sys = { role: 'system' as const, content: 'You are a careful assistant. Use search NAME to look things up, then answer VALUE. '.repeat(3) };
  const messages: ModelCall['messages'] = [sys, { role: 'user', content: `Question ${i}: what is the capital of region ${i % 97}?` }];
  const calls: ModelCall[] = [];
  for (let c = 0; c < 4; c++) {
    const completion = c < 3 ? `search region ${i % 97} part ${c}` : `answer City${i % 13}`;
    const ids = Array.from({ length: 40 + 10 * c }, (_, k) => (k * 7 + i) % 500);
    calls.push({
      index: c,
      policyVersion: 'v3',
      messages: [...messages],
      params: { temperature: 1 },
      completion,
      finishReason: 'stop',
      promptTokenIds: ids,
      completionTokenIds: ids.slice(0, 8),
      logprobs: ids.slice(0, 8).map((k) => -k / 250),
      usage: { promptTokens: ids.length, completionTokens: 8 },
      latencyMs: 12,
      t: 100 * c,
    });
    messages.push(
      { role: 'assistant', content: completion },
      { role: 'tool', content: `Result ${c}: region ${i % 97} borders ${'several other regions, '.repeat(4)}`, name: 'search' },
    );
  }
  return {
    id: `bench-${i}`,
    runId: 'bench',
    phase: '1',
    domain: 'kbqa',
    harnessHash: 'ab'.repeat(20),
    policyVersion: 'v3',
    taskId: `task-${i % 500}`,
    split: 'harness',
    sampleIndex: Math.floor(i / 500),
    seed: i,
    modelCalls: calls,
    events: calls.slice(0, 3).map((c, k) => ({ t: 100 * k + 50, type: 'tool' as const, name: 'search', args: { q: c.completion }, observation: 'Result' })),
    finalAnswer: `City${i % 13}`,
    termination: 'answered',
    verdict: { pass: i % 3 === 0, score: i % 3 === 0 ? 1 : 0, extracted: `city${i % 13}`, reason: i % 3 === 0 ? 'correct' : 'wrong city' },
    timings: { startedAt: '2026-11-29T00:00:00.000Z', wallMs: 900, modelMs: 48, toolMs: 3 },
  };
}

/**
 * One rollout of about `megabytes` MB: `turns` model calls, each with a long tool observation in its
 * prompt (a harness that pastes whole documents into the context), answered wrong — a FAIL.
 */
export function hugeTrajectory(megabytes: number, turns = 400): Trajectory {
  const base = synthetic(1);
  const chunk = Math.ceil((megabytes * 1e6) / turns);
  const calls: ModelCall[] = Array.from({ length: turns }, (_, c) => ({
    ...base.modelCalls[0],
    index: c,
    messages: [
      base.modelCalls[0].messages[0],
      {
        role: 'tool',
        name: 'search',
        content: `page ${c}:\n${'lorem ipsum dolor sit amet, consectetur adipiscing elit\n'.repeat(Math.ceil(chunk / 56)).slice(0, chunk)}`,
      },
    ],
    completion: `search page ${c + 1}`,
    t: c,
  }));
  return {
    ...base,
    id: `huge-${megabytes}mb`,
    taskId: 'task-huge',
    modelCalls: calls,
    events: [],
    verdict: { pass: false, score: 0, extracted: null, reason: 'no answer before the turn limit' },
    finalAnswer: null,
    termination: 'turn_limit',
  };
}
