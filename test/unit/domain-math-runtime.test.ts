/**
 * The Math domain end to end: the shipped math-h0 harness in the real runtime (sandboxed process,
 * gateway, token budget), the real code sandbox service over HTTP, scripted policies that answer
 * right (by running Python through the tool), wrong, malformed, over the budget; and a service that
 * is down (an infrastructure failure, not a verdict).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { BackendSchema, SandboxLimitsSchema, SamplingSchema } from '../../src/core/config.js';
import type { Trajectory } from '../../src/core/trajectory.js';
import { loadDomain } from '../../src/domains/index.js';
import { startCodeSandbox, type CodeSandboxServer } from '../../src/domains/math/sandboxService.js';
import type { Domain, Task } from '../../src/domains/types.js';
import { HarnessRuntime } from '../../src/harness/runtime.js';
import { ScriptedBackend, type Script } from '../../src/harness/testing/scriptedBackend.js';
import type { ChatMessage } from '../../src/policy/types.js';
import { REPO, knobValues, loadHarness, runHarness } from './domain-helpers.js';

const H0 = path.join(REPO, 'resources', 'harnesses', 'math-h0');
const BUDGET = 60;
const POWMOD = /remainder when \$(\d+)\^\{(\d+)\}\$ is divided by \$(\d+)\$/;

function question(messages: ChatMessage[]): string {
  return messages.find((m) => m.role === 'user')?.content ?? '';
}
function gold(t: Task): string {
  return (t.private as { answer: string }).answer;
}

async function run(domain: Domain, script: Script, tasks: Task[]): Promise<{ trajs: Trajectory[]; backend: ScriptedBackend }> {
  const backend = new ScriptedBackend(script);
  const rt = new HarnessRuntime({
    domain,
    backend,
    limits: SandboxLimitsSchema.parse({}),
    sampling: SamplingSchema.parse({}),
    concurrency: 3,
    cacheDir: mkdtempSync(path.join(tmpdir(), 'whale-math-rt-')),
  });
  try {
    const prepared = await rt.prepare(H0);
    const trajs = await rt.rolloutMany(
      prepared,
      tasks.map((task, i) => ({ task, sampleIndex: 0, seed: i })),
    );
    return { trajs, backend };
  } finally {
    await rt.close();
  }
}

describe('math end to end: math-h0 in the real runtime, code on the real sandbox service', () => {
  let sb: CodeSandboxServer;
  let domain: Domain;
  let powmod: Task[];
  before(async () => {
    sb = await startCodeSandbox({ filesystem: process.env.WHALE_REQUIRE_BWRAP === '1' ? 'confined' : 'auto' });
    domain = await loadDomain('math', { sandboxUrl: sb.url, maxAssistantTokens: BUDGET, runTimeout: 5 });
    powmod = domain
      .tasks('val')
      .filter((t) => POWMOD.test(t.public.question))
      .slice(0, 4);
    assert.equal(powmod.length, 4);
  });
  after(async () => {
    await sb.close();
  });

  it('right: the model writes Python, the sandbox runs it, the model boxes the printed result → pass; tool diagnostics', async () => {
    const script: Script = (messages) => {
      const tool = messages.find((m) => m.role === 'tool');
      if (tool) return `The code printed ${tool.content.trim()} . So the answer is \\boxed{${tool.content.trim()}}`;
      const [, a, k, m] = POWMOD.exec(question(messages)) ?? [];
      return `I will compute it . <tool_call>{"name": "code_interpreter", "arguments": {"code": "pow(${a}, ${k}, ${m})"}}</tool_call>`;
    };
    const { trajs, backend } = await run(domain, script, powmod);
    for (const [i, t] of trajs.entries()) {
      assert.equal(t.termination, 'answered', t.terminationDetail);
      assert.equal(t.verdict.pass, true, t.verdict.reason);
      assert.equal(t.finalAnswer, gold(powmod[i]));
      assert.equal(t.diagnostics?.usedTool, true);
      assert.equal(t.diagnostics?.toolCalls, 1);
      assert.equal(t.diagnostics?.truncated, false);
      assert.equal(t.diagnostics?.boxed, true);
      assert.equal(t.diagnostics?.extracted, gold(powmod[i]));
      const toolEvent = t.events.find((e) => e.type === 'tool');
      assert.match(String((toolEvent?.args as { code: string }).code), /^print\(pow\(/, 'h0 printed the last expression (ReTool clean-up)');
    }
    // The paper's prompt: no system prompt of its own (only the tool block), question + the box format.
    const first = backend.requests[0].messages;
    assert.equal(first[0].role, 'system');
    assert.match(first[0].content, /^# Tools\n/);
    assert.match(first[1].content, /\nThe answer format must be: \\boxed\{'The final answer goes here\.'\}$/);
    assert.equal(first.length, 2);
    assert.ok(
      backend.requests.every((r) => (r.params.max_tokens ?? Infinity) <= BUDGET),
      'max_tokens clamped to the assistant budget',
    );
  });

  it('wrong, no tool: h0 nudges once (MAX_TURNS = 2), the wrong box fails; a tool error is shown to the model', async () => {
    const script: Script = (messages, _req, _i) => {
      const nudged = messages.some((m) => m.role === 'user' && /did not call the code_interpreter tool/.test(m.content));
      if (nudged) return 'Still \\boxed{1000}';
      return 'It is \\boxed{999}';
    };
    const { trajs, backend } = await run(domain, script, powmod.slice(0, 2));
    for (const t of trajs) {
      assert.equal(t.termination, 'answered');
      assert.equal(t.verdict.pass, false);
      assert.match(t.verdict.reason, /^expected \d+, got 1000$/);
      assert.equal(t.modelCalls.length, 2);
      assert.equal(t.diagnostics?.usedTool, false);
      assert.equal(t.diagnostics?.toolCalls, 0);
    }
    assert.equal(backend.requests.length, 4);

    const crash: Script = (messages) => {
      const tool = messages.find((m) => m.role === 'tool');
      if (tool) return tool.content.includes('ZeroDivisionError') && tool.content.includes('(exit code 1)') ? 'saw the error \\boxed{0}' : 'no error seen';
      return '<tool_call>{"name": "code_interpreter", "arguments": {"code": "1/0"}}</tool_call>';
    };
    const c = await run(domain, crash, powmod.slice(0, 1));
    assert.equal(c.trajs[0].finalAnswer, '0', JSON.stringify(c.trajs[0].events));
    assert.equal(c.trajs[0].diagnostics?.toolCalls, 1);
  });

  it('malformed: no \\boxed{} anywhere → no answer, format diagnostic false', async () => {
    const { trajs } = await run(domain, () => 'The answer is 121 .', powmod.slice(0, 2));
    for (const t of trajs) {
      assert.equal(t.termination, 'no_answer');
      assert.equal(t.verdict.pass, false);
      assert.equal(t.diagnostics?.boxed, false);
      assert.equal(t.diagnostics?.extracted, null);
    }
  });

  it('over the token budget: the gateway cuts the completion at the budget; truncated, no answer', async () => {
    const ramble = `${'let me think about this carefully '.repeat(30)} \\boxed{121}`;
    const { trajs, backend } = await run(domain, () => ramble, powmod.slice(0, 2));
    for (const t of trajs) {
      assert.equal(t.diagnostics?.truncated, true);
      assert.equal(t.modelCalls[0].finishReason, 'length');
      assert.equal(t.modelCalls[0].usage.completionTokens, BUDGET);
      assert.equal(t.diagnostics?.assistantTokens, BUDGET);
      assert.equal(t.verdict.pass, false);
      assert.equal(t.diagnostics?.boxed, false, 'the box was past the budget');
    }
    assert.equal(backend.requests[0].params.max_tokens, BUDGET);

    // The budget spans the rollout: a 50-token first turn leaves 10 for the second.
    const two: Script = (_m, _r, i) => (i % 2 === 0 ? 'word '.repeat(50).trim() : `${'more '.repeat(20)}\\boxed{1}`);
    const r2 = await run(domain, two, powmod.slice(0, 1));
    const t = r2.trajs[0];
    assert.equal(t.modelCalls.length, 2);
    assert.equal(t.modelCalls[1].params.max_tokens, BUDGET - 50);
    assert.equal(t.modelCalls[1].finishReason, 'length');
    assert.equal(t.diagnostics?.truncated, true);
    assert.equal(t.diagnostics?.assistantTokens, BUDGET);
  });

  it("h0's knobs: lenient parsing runs a ```python block, ReTool's auto-print wraps a last expression (not an assignment), no tool block, no nudge", async () => {
    const { def, manifest } = await loadHarness(H0);
    const task = powmod[0];
    const knobs = { ...knobValues(manifest), parse: 'lenient', toolPrompt: 'none', nudge: false };
    const seen: ChatMessage[][] = [];
    const code = ['```python', 'a = 6 * 7', 'a', '```'].join('\n');
    const r = await runHarness(def, domain, task, knobs, manifest.prompts, (messages) => {
      seen.push(messages);
      const tool = messages.find((m) => m.role === 'tool');
      return tool ? `so \\boxed{${tool.content.trim()}}` : `Let me compute.\n${code}`;
    });
    assert.equal(seen[0][0].role, 'user', 'toolPrompt none: no system message at all');
    assert.deepEqual(
      r.events.filter((e) => e.type === 'tool').map((e) => (e.args as { code: string }).code),
      ['a = 6 * 7\nprint(a)\n'],
    );
    assert.equal(r.finalAnswer, '42');
    const assign = await runHarness(def, domain, task, knobs, manifest.prompts, (messages) =>
      messages.some((m) => m.role === 'tool') ? 'done \\boxed{1}' : ['```python', 'x = 1', 'y = x + 1', '```'].join('\n'),
    );
    assert.deepEqual(
      assign.events.filter((e) => e.type === 'tool').map((e) => (e.args as { code: string }).code),
      ['x = 1\ny = x + 1\n'],
    );
    // No tool call and nudge off: one turn, the box of that turn.
    const once = await runHarness(def, domain, task, knobs, manifest.prompts, () => 'it is \\boxed{7}');
    assert.equal(once.modelCalls.length, 1);
    assert.equal(once.finalAnswer, '7');
  });

  it('the sandbox service down: infra_error (source tool), not a verdict', async () => {
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
    const port = (s.address() as { port: number }).port;
    await new Promise<void>((r) => s.close(() => r()));
    const down = await loadDomain('math', { sandboxUrl: `http://127.0.0.1:${port}`, maxAssistantTokens: BUDGET });
    const script: Script = (messages) =>
      messages.some((m) => m.role === 'tool') ? '\\boxed{1}' : '<tool_call>{"name": "code_interpreter", "arguments": {"code": "print(1)"}}</tool_call>';
    const { trajs } = await run(down, script, down.tasks('val').slice(0, 1));
    const t = trajs[0];
    assert.equal(t.termination, 'infra_error', t.terminationDetail);
    assert.equal(t.infra?.source, 'tool');
    assert.match(t.infra?.message ?? '', /code_interpreter.*unreachable/);
    assert.equal(t.verdict.pass, false);
    assert.match(t.verdict.reason, /^infrastructure failure \(not scored\)/);
  });
});

describe('math on a policy server whose context is shorter than the h0 prompt (the embedded model over HTTP: 256 tokens)', () => {
  it("the server's 400 context_length_exceeded (as vLLM answers) is the harness's error, not an infrastructure failure: scored 0, recorded", async () => {
    const { createBackend, serveBackend } = await import('../../src/policy/index.js');
    const store = mkdtempSync(path.join(tmpdir(), 'whale-math-emb-'));
    const embedded = await createBackend({ kind: 'embedded', model: 'base', maxBatch: 8 }, { storeDir: store });
    const server = await serveBackend(embedded, { host: '127.0.0.1', port: 0 });
    const backend = await createBackend(
      BackendSchema.parse({ kind: 'openai-compatible', baseUrl: `${server.url}/v1`, model: embedded.currentVersion(), retries: 0 }),
      { storeDir: store },
    );
    const domain = await loadDomain('math', { sizes: { val: 2 }, maxAssistantTokens: 32 });
    const rt = new HarnessRuntime({
      domain,
      backend,
      limits: SandboxLimitsSchema.parse({}),
      sampling: SamplingSchema.parse({}),
      concurrency: 2,
      cacheDir: mkdtempSync(path.join(tmpdir(), 'whale-math-emb-rt-')),
    });
    try {
      const prepared = await rt.prepare(H0);
      const trajs = await rt.rolloutMany(
        prepared,
        domain.tasks('val').map((task, i) => ({ task, sampleIndex: 0, seed: i })),
      );
      for (const t of trajs) {
        assert.notEqual(t.termination, 'infra_error', t.terminationDetail);
        assert.equal(t.infra, undefined);
        assert.equal(t.termination, 'crash', "h0 (the paper's) does not catch the refusal");
        assert.match(t.terminationDetail ?? '', /the prompt does not fit the model's context: .*HTTP 400: prompt is \d+ tokens but the model's context is 256/);
        assert.equal(t.verdict.pass, false);
        assert.ok(t.events.some((e) => e.type === 'error' && e.name === 'context_length'));
        assert.equal(t.modelCalls[0].finishReason, 'error');
      }
    } finally {
      await rt.close();
      await backend.close();
      await server.close();
      await embedded.close();
    }
  });
});
