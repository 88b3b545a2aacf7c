// Harness runtime overhead: trajectories/s of a two-turn harness (search, then answer) against an
// instant scripted policy, three ways —
//   direct:  the same calls made in-process (backend.chat + tool.call), no HTTP, no process;
//   gateway: the same calls as HTTP requests to the recording gateway, from this process;
//   sandbox: the real thing — one sandboxed harness process per rollout, through the gateway.
// The gaps are the per-rollout cost of the gateway and of the process. Standalone:
//   node --import tsx scripts/bench-runtime.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Task } from '../src/domains/types.js';
import { Gateway } from '../src/harness/gateway.js';
import { RolloutSession } from '../src/harness/rolloutSession.js';
import { HarnessRuntime } from '../src/harness/runtime.js';
import { ScriptedBackend } from '../src/harness/testing/scriptedBackend.js';
import { fixtureDomain, fixturePolicyReply, fixtureTasks } from '../test/fixtures/harnesses/fixtureDomain.js';

const HARNESS = fileURLToPath(new URL('../test/fixtures/harnesses/good', import.meta.url));
const LIMITS = { wallMs: 30_000, cpuMs: 20_000, memoryMb: 128, outputBytes: 1_000_000, maxTurns: 4, maxTokens: 4096 };
const SAMPLING = { temperature: 1, top_p: 1, max_tokens: 16 };
const SYSTEM = 'write search NAME , then answer VALUE .';

type Chat = (messages: { role: 'system' | 'user' | 'assistant' | 'tool'; content: string }[]) => Promise<string>;
type Tool = (query: string) => Promise<string>;

/** The good fixture harness's logic, for the in-process baselines. */
async function twoTurn(task: Task, chat: Chat, tool: Tool): Promise<string | null> {
  const messages: Parameters<Chat>[0] = [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: task.public.question },
  ];
  for (let turn = 0; turn < 4; turn++) {
    const text = await chat(messages);
    messages.push({ role: 'assistant', content: text });
    const m = /^(search|answer) (\S+)/.exec(text);
    if (!m) return null;
    if (m[1] === 'answer') return m[2];
    messages.push({ role: 'tool', content: await tool(m[2]) });
  }
  return null;
}

async function timed(n: number, concurrency: number, one: (i: number) => Promise<boolean>): Promise<{ perSec: number; passRate: number }> {
  let next = 0;
  let passed = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) if (await one(next++)) passed++;
    }),
  );
  return { perSec: n / ((performance.now() - t0) / 1000), passRate: passed / n };
}

export async function benchRuntime(opts: { rollouts?: number; concurrency?: number } = {}): Promise<Record<string, number>> {
  const n = opts.rollouts ?? 96;
  const concurrency = opts.concurrency ?? 8;
  const domain = fixtureDomain();
  const tasks = fixtureTasks('val');
  const backend = new ScriptedBackend((m) => fixturePolicyReply(m));
  const answerOf = (t: Task) => (t.private as { answer: string }).answer;

  const direct = await timed(n * 4, concurrency, async (i) => {
    const task = tasks[i % tasks.length];
    const answer = await twoTurn(
      task,
      async (messages) => (await backend.chat({ messages, params: { ...SAMPLING } })).text,
      async (query) => domain.tools[0].call({ query }, task),
    );
    return answer === answerOf(task);
  });

  const gateway = new Gateway();
  await gateway.start({ unixSocket: false });
  const viaGateway = await timed(n * 2, concurrency, async (i) => {
    const task = tasks[i % tasks.length];
    const session = new RolloutSession({ task, tools: domain.tools, backend, limits: { maxTurns: 4, maxTokens: 4096 }, sampling: SAMPLING, seed: i });
    const info = gateway.register(session, { viaSocket: false });
    const post = async (url: string, body: unknown) =>
      (await (
        await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${info.token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
      ).json()) as Record<string, unknown>;
    const answer = await twoTurn(
      task,
      async (messages) => ((await post(`${info.baseUrl}/chat/completions`, { messages })).choices as { message: { content: string } }[])[0].message.content,
      async (query) => String((await post(`${info.toolsUrl}/search`, { query })).observation),
    );
    gateway.unregister(session);
    return answer === answerOf(task);
  });
  await gateway.close();

  const cacheDir = mkdtempSync(join(tmpdir(), 'whale-bench-runtime-'));
  const rt = new HarnessRuntime({ domain, backend, limits: LIMITS, sampling: SAMPLING, concurrency, cacheDir });
  const startups: number[] = [];
  let sandbox: { perSec: number; passRate: number };
  try {
    const prepared = await rt.prepare(HARNESS);
    await rt.rollout(prepared, tasks[0], { sampleIndex: 0, seed: 0 }); // warm: gateway start, bootstrap build
    sandbox = await timed(n, concurrency, async (i) => {
      const t = await rt.rollout(prepared, tasks[i % tasks.length], { sampleIndex: 0, seed: i });
      const s = (t.events.find((e) => e.name === 'sandbox')?.data as { startupMs?: number } | undefined)?.startupMs;
      if (typeof s === 'number') startups.push(s);
      return t.verdict.pass;
    });
  } finally {
    await rt.close();
    rmSync(cacheDir, { recursive: true, force: true });
  }
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  return {
    concurrency,
    'direct trajectories/s': round(direct.perSec),
    'gateway (HTTP, in-process) trajectories/s': round(viaGateway.perSec),
    'sandbox (process + gateway) trajectories/s': round(sandbox.perSec),
    'sandbox / direct throughput': round(sandbox.perSec / direct.perSec, 4),
    'gateway cost per rollout (ms, 2 chat + 1 tool)': round(1000 / viaGateway.perSec - 1000 / direct.perSec, 3),
    'sandbox cost per rollout (ms, wall at this concurrency)': round(1000 / sandbox.perSec - 1000 / direct.perSec, 2),
    'harness start-up to ready (ms, mean under load)': round(mean(startups), 1),
    'sandbox pass rate': sandbox.passRate,
    'network isolation is a namespace (1) or the guard only (0)': rt.network === 'namespace' ? 1 : 0,
  };
}

function round(x: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const rows = await benchRuntime();
  for (const [k, v] of Object.entries(rows)) console.log(`${k.padEnd(58)} ${v}`);
  process.exit(0);
}
