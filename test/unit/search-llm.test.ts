// The llm proposer against a local server speaking the real Anthropic Messages and OpenAI chat
// completions wire formats (the real SDKs pointed at it by base URL), over an archive view of the
// shipped kbqa h0 with real trajectories (real sandboxed runtime, scripted policy) and the real
// candidate validation as the proposer's `validate` callback.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LlmProposerSchema, SandboxLimitsSchema, SamplingSchema, type LlmProposerConfig } from '../../src/core/config.js';
import { WhaleError } from '../../src/core/errors.js';
import { gitTreeHash } from '../../src/core/treeHash.js';
import { getDomain } from '../../src/domains/index.js';
import { HarnessRuntime } from '../../src/harness/runtime.js';
import { ScriptedBackend } from '../../src/harness/testing/scriptedBackend.js';
import { createProposer } from '../../src/search/createProposer.js';
import { LlmProposer, type SessionLogEntry } from '../../src/search/llm/llmProposer.js';
import type { ArchiveView, ProposeRequest } from '../../src/search/proposer.js';
import { validateCandidate } from '../../src/search/validate.js';
import {
  FakeLlmServer,
  fileTextOf,
  anthropicError,
  openaiError,
  type ModelReply,
  type RawReply,
  type Script,
  type SeenRequest,
} from '../support/fakeLlmServer.js';

const root = mkdtempSync(join(tmpdir(), 'whale-llm-'));
const domain = getDomain('kbqa');
const h0 = join(root, 'h0');
const h0Hash = (() => {
  cpSync(domain.h0Dir, h0, { recursive: true });
  return gitTreeHash(h0);
})();
let runtime: HarnessRuntime;
let view: ArchiveView;
const SEARCH_KEY = 'a1'.repeat(20);
const SEALED_KEY = 'b2'.repeat(20);
let n = 0;

before(async () => {
  // A policy that searches the subject and answers with the first value it reads (often wrong).
  const backend = new ScriptedBackend((messages) => {
    const last = messages[messages.length - 1];
    if (last.role === 'tool') return `answer ${last.content.split(' ')[2] ?? 'eel'}`;
    return `search ${/of (\S+) \?/.exec(last.content)?.[1] ?? 'Lodos'}`;
  });
  runtime = new HarnessRuntime({
    domain,
    backend,
    limits: SandboxLimitsSchema.parse({ wallMs: 20_000 }),
    sampling: SamplingSchema.parse({}),
    concurrency: 2,
    cacheDir: join(root, 'cache'),
  });
  const prepared = await runtime.prepare(h0);
  const roll = async (split: 'harness' | 'test', file: string) => {
    mkdirSync(join(root, 'evals'), { recursive: true });
    const lines = [];
    for (const task of domain.tasks(split).slice(0, 4)) lines.push(JSON.stringify(await runtime.rollout(prepared, task, { sampleIndex: 0, seed: 1 })));
    writeFileSync(join(root, 'evals', file), lines.join('\n') + '\n');
  };
  await roll('harness', `${SEARCH_KEY}.jsonl`);
  await roll('test', `${SEALED_KEY}.jsonl`);
  view = {
    domain: { id: domain.id, searchSpace: domain.searchSpace },
    mode: 'full',
    candidates: [
      {
        treeHash: h0Hash,
        parents: [],
        round: 0,
        origin: 'seed',
        hypothesis: 'the initial harness h0',
        valid: true,
        invalidReasons: [],
        scores: [
          { policyVersion: 'v1', split: 'harness', mean: 0.25, se: 0.2, meanTurns: 2, keyHash: SEARCH_KEY },
          { policyVersion: 'v-sealed', split: 'test', mean: 0.5, se: 0.2, meanTurns: 2, keyHash: SEALED_KEY },
        ],
      },
    ],
    incumbent: h0Hash,
    policyVersion: 'v1',
    materialize: async (h) => {
      assert.equal(h, h0Hash, 'only the view candidates are materialized');
      return h0;
    },
    taskResults: (k) => (k === SEARCH_KEY ? [{ taskId: domain.tasks('harness')[0].id, passes: 0, samples: 1, mean: 0, terminations: { answered: 1 } }] : []),
    trajectoriesFile: (k) => join(root, 'evals', `${k}.jsonl`),
    annotations: [{ text: 'the model answers with the first value it sees', taskId: domain.tasks('harness')[1].id }],
    pastReports: [],
  };
});
after(async () => {
  await runtime.close();
  rmSync(root, { recursive: true, force: true });
});

function config(provider: 'anthropic' | 'openai', server: FakeLlmServer, over: Partial<LlmProposerConfig> = {}): LlmProposerConfig {
  return LlmProposerSchema.parse({
    provider,
    model: provider === 'anthropic' ? 'claude-opus-4-7' : 'gpt-test',
    baseUrl: provider === 'anthropic' ? server.anthropicBaseUrl : server.openaiBaseUrl,
    price: { inputPerMillion: 5, outputPerMillion: 25 },
    retryBaseMs: 20,
    retryMaxMs: 500,
    requestTimeoutMs: 10_000,
    ...over,
  });
}

function request(over: Partial<ProposeRequest> = {}): ProposeRequest {
  const outDir = join(root, `out-${n++}`);
  mkdirSync(outDir, { recursive: true });
  return {
    round: 1,
    count: 1,
    view,
    outDir,
    seed: 1,
    logFile: join(outDir, 'session.jsonl'),
    validate: async (dir) => {
      const v = await validateCandidate(dir, { runtime, domain, mode: view.mode, h0Dir: h0 });
      return { ok: v.ok, reasons: v.ok ? [] : v.reasons, warnings: v.warnings };
    },
    ...over,
  };
}

async function withServer<T>(script: Script, f: (s: FakeLlmServer) => Promise<T>): Promise<T> {
  const s = await new FakeLlmServer(script).start();
  try {
    return await f(s);
  } finally {
    await s.close();
  }
}

const readLog = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as SessionLogEntry);

/**
 * An engineer-like scripted model: lists the archive, reads failing trajectories and the source,
 * then writes a candidate derived from what it read (the code's topk clamp raised, and a system
 * instruction) and finishes with a report quoting what it saw.
 */
function engineer(extra: (req: SeenRequest, step: number) => ModelReply | RawReply | undefined = () => undefined): {
  script: Script;
  seen: Map<string, string>;
} {
  const seen = new Map<string, string>();
  let step = 0;
  let incumbent = '';
  const script: Script = (req) => {
    for (const r of req.toolResults) seen.set(r.name, r.content);
    const special = extra(req, step);
    if (special) return special;
    step++;
    switch (step) {
      case 1:
        return { text: 'Let me look at the archive.', toolCalls: [{ name: 'list_candidates', args: {} }] };
      case 2: {
        incumbent = /- ([0-9a-f]{12}) \(incumbent\)/.exec(seen.get('list_candidates') ?? '')?.[1] ?? 'missing';
        return {
          toolCalls: [
            { name: 'trajectories', args: { candidate: incumbent, verdict: 'fail', limit: 2 } },
            { name: 'read_file', args: { candidate: incumbent, path: 'harness.ts' } },
            { name: 'read_file', args: { candidate: incumbent, path: 'harness.json' } },
          ],
        };
      }
      case 3: {
        const code = fileTextOf(seen.get('read_file:harness.ts') ?? '');
        const manifest = JSON.parse(fileTextOf(seen.get('read_file:harness.json') ?? '{}')) as {
          settings: Record<string, unknown>;
          prompts: Record<string, string>;
        };
        manifest.settings.instruction = 'full';
        manifest.settings.maxSearches = 2;
        return {
          text: 'The failing traces answer with the first value shown; show more facts and allow a second search.',
          toolCalls: [
            {
              name: 'write_candidate',
              args: {
                parent: incumbent,
                hypothesis: 'show at least 3 facts per search and instruct the model',
                files: {
                  'harness.ts': code.replace('const topk = Number(k.topk ?? 1);', 'const topk = Math.max(3, Number(k.topk ?? 1));'),
                  'harness.json': JSON.stringify(manifest, null, 2),
                },
              },
            },
          ],
        };
      }
      default:
        return {
          toolCalls: [
            {
              name: 'finish',
              args: {
                report: `Traces: ${seen.get('trajectories')?.includes('fail (wrong answer)') ? 'wrong answers from the first fact' : 'unclear'}. Wrote one candidate with topk >= 3.`,
              },
            },
          ],
        };
    }
  };
  // read_file results are keyed by path for the script.
  const keyed: Script = (req) => {
    const calls = new Map<string, string>();
    for (const r of req.toolResults) if (r.name === 'read_file') calls.set(r.id, r.content);
    for (const r of req.toolResults) {
      if (r.name !== 'read_file') continue;
      const path = r.content.includes('defineHarness') ? 'harness.ts' : 'harness.json';
      seen.set(`read_file:${path}`, r.content);
    }
    return script(req);
  };
  return { script: keyed, seen };
}

for (const provider of ['anthropic', 'openai'] as const) {
  test(`${provider}: a full tool-use round trip reads traces and source and writes a valid candidate`, { timeout: 120_000 }, async () => {
    const { script, seen } = engineer();
    await withServer(script, async (server) => {
      const req = request();
      const p = await new LlmProposer(config(provider, server), 'sk-test').propose(req);
      assert.equal(p.candidates.length, 1);
      const c = p.candidates[0];
      assert.deepEqual(c.parents, [h0Hash]);
      assert.ok(c.dir.startsWith(req.outDir));
      assert.match(readFileSync(join(c.dir, 'harness.ts'), 'utf8'), /Math\.max\(3, Number\(k\.topk/);
      assert.equal(JSON.parse(readFileSync(join(c.dir, 'harness.json'), 'utf8')).settings.maxSearches, 2);
      assert.match(seen.get('write_candidate') ?? '', /cand-1 .*: valid/, 'validated at once, through the real runtime');
      // What the model read: real transcripts, no verifier reason (it names the expected answer).
      const traj = seen.get('trajectories') ?? '';
      assert.match(traj, /## trajectory .* fail \(wrong answer\)/);
      assert.match(traj, /\[tool search/);
      assert.doesNotMatch(traj, /expected /);
      // The wire: key header, tools declared, tool results sent back in the provider's format.
      const first = server.requests[0];
      if (provider === 'anthropic') {
        // This SDK version sends the key as a bearer token; older ones used x-api-key.
        assert.ok(first.headers['x-api-key'] === 'sk-test' || first.headers.authorization === 'Bearer sk-test', JSON.stringify(first.headers));
        assert.ok(first.headers['anthropic-version']);
        assert.ok((first.body.tools as { name: string; input_schema: unknown }[]).some((t) => t.name === 'write_candidate' && t.input_schema));
        const second = server.requests[1].body.messages as { role: string; content: { type: string }[] }[];
        assert.equal(second[second.length - 1].content[0].type, 'tool_result');
      } else {
        assert.equal(first.headers.authorization, 'Bearer sk-test');
        assert.ok(
          (first.body.tools as { type: string; function: { name: string } }[]).some((t) => t.type === 'function' && t.function.name === 'write_candidate'),
        );
        const msgs = server.requests[1].body.messages as { role: string }[];
        assert.equal(msgs[msgs.length - 1].role, 'tool');
      }
      assert.match(String(first.system), /DOMAIN kbqa/);
      assert.match(String(first.system), /Diagnose before you change code/);
      // Cost: 4 calls at 100 in / 50 out tokens, $5 / $25 per million.
      assert.equal(server.requests.length, 4);
      assert.ok(Math.abs(p.dollars - (4 * (100 * 5 + 50 * 25)) / 1e6) < 1e-12, String(p.dollars));
      assert.match(p.report, /^Traces: wrong answers from the first fact/);
      const log = readLog(req.logFile!);
      assert.deepEqual(
        log.map((e) => e.kind).filter((k) => k !== 'tool_call'),
        ['session_start', 'model_call', 'model_call', 'model_call', 'model_call', 'session_end'],
      );
      assert.equal(log.filter((e) => e.kind === 'tool_call').length, 6);
      assert.ok(log.filter((e) => e.kind === 'tool_call').every((e) => e.kind === 'tool_call' && e.outputChars > 0));
    });
  });
}

test('openai: malformed tool calls (bad JSON, unknown tool, wrong argument types) get error results and the session goes on', { timeout: 60_000 }, async () => {
  const { script, seen } = engineer((req, step) => {
    if (step === 0 && req.index === 0)
      return {
        toolCalls: [
          { name: 'read_file', args: '{"candidate": "' + h0Hash.slice(0, 8) },
          { name: 'rm_rf', args: { path: '/' } },
          { name: 'grep', args: { pattern: 42 } },
        ],
      };
    return undefined;
  });
  await withServer(script, async (server) => {
    const p = await new LlmProposer(config('openai', server), 'sk-test').propose(request());
    const errors = server.requests[1].toolResults;
    assert.equal(errors.length, 3);
    assert.ok(errors.every((e) => e.isError));
    assert.match(errors[0].content, /not valid JSON/);
    assert.match(errors[1].content, /unknown tool 'rm_rf'.*write_candidate/);
    assert.match(errors[2].content, /'pattern' must be a non-empty string/);
    assert.equal(p.candidates.length, 1, 'the session continued to a candidate');
    assert.match(p.report, /^Traces: wrong answers/);
    assert.equal(seen.get('list_candidates')?.includes('(incumbent)'), true);
  });
});

test('anthropic: reading sealed data or outside the candidate, and writing outside its folder, are refused with reasons', { timeout: 60_000 }, async () => {
  const outside = join(root, 'escape.ts');
  const probes: { name: string; args: Record<string, unknown> }[] = [
    { name: 'trajectories', args: { candidate: h0Hash, policy_version: 'v-sealed' } },
    { name: 'task_results', args: { candidate: h0Hash, policy_version: 'v-sealed' } },
    { name: 'read_file', args: { candidate: h0Hash, path: '../../../../etc/passwd' } },
    { name: 'read_file', args: { candidate: h0Hash, path: '/etc/passwd' } },
    { name: 'list_files', args: { candidate: 'deadbeef0000' } },
    { name: 'write_candidate', args: { parent: h0Hash, hypothesis: 'escape', files: { '../../escape.ts': 'x' } } },
    { name: 'write_candidate', args: { parent: h0Hash, hypothesis: 'absolute', files: { [outside]: 'x' } } },
    { name: 'write_candidate', args: { parent: h0Hash, hypothesis: 'git', files: { '.git/config': 'x' } } },
    { name: 'write_candidate', args: { parent: h0Hash, hypothesis: 'huge', files: { 'big.txt': 'x'.repeat(300 * 1024) } } },
    { name: 'read_file', args: { candidate: h0Hash, path: 'lnk/passwd' } },
  ];
  // A link inside a candidate must not lead out of it (the archive could hold one).
  symlinkSync('/etc', join(h0, 'lnk'));
  try {
    const { script } = engineer((_req, step) => (step === 0 && _req.index === 0 ? { toolCalls: probes } : undefined));
    await withServer(script, async (server) => {
      const req = request();
      const p = await new LlmProposer(config('anthropic', server), 'sk-test').propose(req);
      const r = server.requests[1].toolResults;
      assert.equal(r.length, probes.length);
      assert.ok(
        r.every((x) => x.isError),
        JSON.stringify(r.filter((x) => !x.isError)),
      );
      assert.match(r[0].content, /no evaluation under policy v-sealed \(it has: v1\)/);
      assert.match(r[1].content, /no evaluation under policy v-sealed/);
      assert.match(r[2].content, /leaves the candidate folder/);
      assert.match(r[3].content, /is absolute/);
      assert.match(r[4].content, /no candidate 'deadbeef0000' in this archive view/);
      assert.match(r[5].content, /leaves the candidate folder/);
      assert.match(r[6].content, /is absolute/);
      assert.match(r[7].content, /reserved folder/);
      assert.match(r[8].content, /more than the 262144 a file may have/);
      assert.match(r[9].content, /lnk\/passwd: lnk is a link or special file \(not readable\)/);
      assert.ok(!existsSync(outside) && !existsSync(join(root, '..', 'escape.ts')));
      assert.deepEqual(readdirSync(req.outDir).sort(), ['cand-1', 'session.jsonl'], 'refused writes left no folder behind');
      assert.equal(p.candidates.length, 1);
    });
  } finally {
    rmSync(join(h0, 'lnk'), { force: true });
  }
});

test('a candidate that fails validation goes back once with the error; the revision is valid; a second revision is refused', { timeout: 60_000 }, async () => {
  let write = '';
  const script: Script = (req) => {
    for (const r of req.toolResults) if (r.name === 'write_candidate') write += r.content + '\n---\n';
    switch (req.index) {
      case 0:
        return {
          toolCalls: [{ name: 'write_candidate', args: { parent: h0Hash, hypothesis: 'broken manifest', files: { 'harness.json': '{ "name": "x", ' } } }],
        };
      case 1:
        return {
          toolCalls: [
            {
              name: 'write_candidate',
              args: {
                parent: h0Hash,
                hypothesis: 'fixed: lenient parsing',
                revise: 'cand-1',
                files: { 'harness.json': readFileSync(join(h0, 'harness.json'), 'utf8').replace('"parse": "strict"', '"parse": "lenient"') },
              },
            },
          ],
        };
      case 2:
        return { toolCalls: [{ name: 'write_candidate', args: { parent: h0Hash, hypothesis: 'again', revise: 'cand-1', files: {} } }] };
      default:
        return { toolCalls: [{ name: 'finish', args: { report: 'one fixed candidate' } }] };
    }
  };
  await withServer(script, async (server) => {
    const p = await new LlmProposer(config('anthropic', server), 'sk-test').propose(request());
    const [first, second, third] = write.split('\n---\n');
    assert.match(first, /cand-1 .*INVALID:\n- harness\.json:1:\d+: invalid JSON/);
    assert.doesNotMatch(first, new RegExp(root), 'reasons name files relative to the candidate');
    assert.match(first, /fix it once: call write_candidate with revise: "cand-1"/);
    assert.match(second, /cand-1-revised .*: valid/);
    assert.match(third, /already revised once/);
    assert.equal(p.candidates.length, 2, 'the failed original is returned too (archived as invalid)');
    assert.match(p.candidates[0].hypothesis, /failed validation; revised as cand-1-revised/);
    assert.equal(JSON.parse(readFileSync(join(p.candidates[1].dir, 'harness.json'), 'utf8')).settings.parse, 'lenient');
    assert.equal(server.requests.length, 4);
  });
});

test('429 and 529 are retried with backoff honouring Retry-After (capped by retryMaxMs)', { timeout: 60_000 }, async () => {
  const { script } = engineer((req) => {
    if (req.index === 0) return anthropicError(429, 'rate_limit_error', 'slow down', { 'retry-after': '0.3' });
    if (req.index === 1) return anthropicError(529, 'overloaded_error', 'Overloaded');
    if (req.index === 2) return anthropicError(429, 'rate_limit_error', 'slow down', { 'retry-after': '3600' });
    return undefined;
  });
  await withServer(script, async (server) => {
    const req = request();
    const t0 = Date.now();
    const p = await new LlmProposer(config('anthropic', server, { retryBaseMs: 40, retryMaxMs: 600 }), 'sk-test').propose(req);
    const retries = readLog(req.logFile!).filter((e) => e.kind === 'retry');
    assert.deepEqual(
      retries.map((e) => e.kind === 'retry' && [e.status, e.sleepMs >= 0]),
      [
        [429, true],
        [529, true],
        [429, true],
      ],
    );
    const sleeps = retries.map((e) => (e.kind === 'retry' ? e.sleepMs : 0));
    assert.equal(sleeps[0], 300, 'Retry-After: 0.3 s');
    assert.ok(sleeps[1] >= 80 && sleeps[1] <= 100, `second retry: 2 × retryBaseMs plus up to 25% jitter (${sleeps[1]})`);
    assert.equal(sleeps[2], 600, 'a Retry-After beyond retryMaxMs is capped');
    assert.ok(Date.now() - t0 >= 900, 'it really slept');
    assert.match(retries[1].kind === 'retry' ? retries[1].error : '', /529/);
    assert.equal(p.candidates.length, 1);
    assert.ok(Math.abs(p.dollars - (4 * (100 * 5 + 50 * 25)) / 1e6) < 1e-12, 'failed attempts cost nothing');
  });
});

test('openai: a request that times out is retried; a session that outlives its timeout stops and returns what it has', { timeout: 60_000 }, async () => {
  const slow = (ms: number): RawReply => ({ status: 200, delayMs: ms, body: {} });
  const { script } = engineer((req) => (req.index === 0 ? slow(3000) : undefined));
  await withServer(script, async (server) => {
    const req = request();
    const p = await new LlmProposer(config('openai', server, { requestTimeoutMs: 400 }), 'sk-test').propose(req);
    const retries = readLog(req.logFile!).filter((e) => e.kind === 'retry');
    assert.equal(retries.length, 1);
    assert.match(retries[0].kind === 'retry' ? retries[0].error : '', /timed out/i);
    assert.equal(p.candidates.length, 1);
  });
  // Every call after the first write hangs: the session timeout ends it with the candidate kept.
  const { script: s2 } = engineer((_req, step) => (step >= 3 ? slow(10_000) : undefined));
  await withServer(s2, async (server) => {
    const p = await new LlmProposer(config('openai', server, { requestTimeoutMs: 30_000, sessionTimeoutMs: 4000 }), 'sk-test').propose(request());
    assert.match(p.stopped ?? '', /session timeout/);
    assert.equal(p.candidates.length, 1, 'the candidate written before the hang is returned');
    assert.ok(p.dollars > 0);
  });
});

test('a runaway session is stopped by the dollar cap before a call that could pass it', { timeout: 60_000 }, async () => {
  // It never writes anything: it lists the archive forever, 2k output tokens a call; input tokens are
  // what the request really holds (4 characters a token, as for English text).
  const script: Script = (req) => ({
    usage: { input: Math.ceil(JSON.stringify(req.body).length / 4), output: 2_000 },
    toolCalls: [{ name: 'list_candidates', args: {} }],
  });
  await withServer(script, async (server) => {
    const cap = 0.5;
    const cfg = config('anthropic', server, { maxDollarsPerRound: cap, maxTokens: 4000 });
    const p = await new LlmProposer(cfg, 'sk-test').propose(request());
    assert.match(p.stopped ?? '', /^round dollar cap/);
    assert.ok(p.dollars <= cap, `spent ${p.dollars} of ${cap}`);
    assert.ok(p.dollars >= cap - 0.15, `it used most of the budget before stopping (${p.dollars})`);
    assert.equal(p.candidates.length, 0);
    // The max_tokens sent shrank as the cap neared.
    const maxes = server.requests.map((r) => r.maxTokens);
    assert.equal(maxes[0], 4000);
    assert.ok(maxes[maxes.length - 1] < 4000, String(maxes));
    // The run's remaining budget binds when it is smaller, and says so.
    const p2 = await new LlmProposer(cfg, 'sk-test').propose(request({ dollarsLeft: 0.1 }));
    assert.match(p2.stopped ?? '', /^dollar budget/);
    assert.ok(p2.dollars <= 0.1);
  });
});

test('the tool-call cap ends a session; a non-transient API error (401) is a clear error', { timeout: 60_000 }, async () => {
  const script: Script = () => ({
    toolCalls: [
      { name: 'list_candidates', args: {} },
      { name: 'annotations', args: {} },
    ],
  });
  await withServer(script, async (server) => {
    const p = await new LlmProposer(config('openai', server, { maxToolCalls: 5 }), 'sk-test').propose(request());
    assert.match(p.stopped ?? '', /tool-call cap \(5/);
    assert.equal(server.requests.length, 3);
  });
  await withServer(
    () => openaiError(401, 'invalid_request_error', 'Incorrect API key provided'),
    async (server) => {
      const req = request();
      await assert.rejects(
        new LlmProposer(config('openai', server), 'sk-bad').propose(req),
        (e: Error) => e instanceof WhaleError && /401.*Incorrect API key/.test(e.message),
      );
      assert.equal(server.requests.length, 1, 'not retried');
      assert.equal(readLog(req.logFile!).pop()?.kind, 'session_end');
    },
  );
});

test('API keys come from the environment only; a missing key is an error naming the variable', () => {
  const search = {
    proposer: 'llm' as const,
    candidatesPerRound: 1,
    acceptance: 'archive-best' as const,
    pairedSamples: 1,
    pairedZ: 1,
    llm: LlmProposerSchema.parse({ provider: 'anthropic', model: 'm', price: { inputPerMillion: 1, outputPerMillion: 1 } }),
  };
  assert.throws(
    () => createProposer(search, {}),
    (e: Error) => e instanceof WhaleError && /ANTHROPIC_API_KEY.*WHALE: Set API Key/.test(e.message),
  );
  assert.equal(createProposer(search, { ANTHROPIC_API_KEY: 'k' }).kind, 'llm');
  const openai = { ...search, llm: { ...search.llm, provider: 'openai' as const, apiKeyEnv: 'VLLM_KEY' } };
  assert.throws(() => createProposer(openai, { OPENAI_API_KEY: 'k' }), /VLLM_KEY/);
});

test("a session the engine never saw finish (killed, or it threw) is charged on the round's next attempt and its log kept aside", async () => {
  const { Journal } = await import('../../src/archive/journal.js');
  const { ledgerOf } = await import('../../src/archive/runState.js');
  const { chargeLostSession, sessionLogFile } = await import('../../src/engine/proposerSession.js');
  const runDir = join(root, 'run-lost');
  const journal = new Journal(join(runDir, 'journal.jsonl'));
  const file = sessionLogFile(runDir, 2, 3);
  assert.equal(file, join(runDir, 'proposer', 'phase-2-round-3.jsonl'));
  mkdirSync(join(runDir, 'proposer'), { recursive: true });
  const call = (dollars: number) => JSON.stringify({ kind: 'model_call', dollars });
  writeFileSync(file, [JSON.stringify({ kind: 'session_start' }), call(0.25), call(0.5), '{"kind":"tool_ca'].join('\n'));
  chargeLostSession({ journal }, 2, 3, file);
  assert.equal(ledgerOf(journal.all()).proposerDollars, 0.75);
  assert.ok(!existsSync(file) && existsSync(join(runDir, 'proposer', 'phase-2-round-3.lost-1.jsonl')));
  chargeLostSession({ journal }, 2, 3, file);
  assert.equal(ledgerOf(journal.all()).proposerDollars, 0.75, 'nothing to charge twice');
});

test("config: proposer 'llm' needs its llm block; the block is checked field by field", async () => {
  const { SearchSchema } = await import('../../src/core/config.js');
  assert.throws(() => SearchSchema.parse({ proposer: 'llm' }), /search\.llm \(provider, model, price\) is missing/);
  assert.throws(
    () => SearchSchema.parse({ proposer: 'llm', llm: { provider: 'gemini', model: 'm', price: { inputPerMillion: 1, outputPerMillion: 1 } } }),
    /provider/,
  );
  const ok = SearchSchema.parse({
    proposer: 'llm',
    llm: { provider: 'openai', model: 'Qwen/Qwen3-8B', baseUrl: 'http://localhost:8000/v1', price: { inputPerMillion: 0, outputPerMillion: 0 } },
  });
  assert.equal(ok.llm?.maxToolCalls, 200);
  assert.equal(ok.llm?.sessionTimeoutMs, 2_400_000);
});

test('instructions: the domain search space, the mode (FST: prompt strings only) and the Meta-Harness habits', async () => {
  const { systemPrompt, firstUserMessage } = await import('../../src/search/llm/instructions.js');
  const full = systemPrompt(request({ count: 3 }));
  assert.ok(full.includes(domain.searchSpace), 'the domain search space verbatim');
  assert.match(full, /MODE: full/);
  assert.match(full, /not mere parameter tweaks/);
  assert.match(full, /Never put task ids, questions, answers, entity names or dataset names/);
  assert.match(full, /short report/);
  const fst = systemPrompt(request({ view: { ...view, mode: 'fst' } }));
  assert.match(fst, /MODE: FST \(prompts only\).*ONLY in the values of the prompt strings/);
  assert.match(firstUserMessage(request({ count: 3 })), /incumbent is [0-9a-f]{12}, scoring 25\.0%.*1 annotation.*Write 3 new candidate/);
});

test('diff: a candidate against its parent as unified hunks with line numbers; paging caps long outputs', async () => {
  const { ArchiveTools } = await import('../../src/search/llm/archiveTools.js');
  const { unifiedDiff } = await import('../../src/search/llm/lineDiff.js');
  assert.equal(unifiedDiff('a\nb\nc\n', 'a\nb\nc\n', 'f'), '');
  assert.equal(
    unifiedDiff('1\n2\n3\n4\n5\n6\n7\n8\n9\n', '1\n2\n3\n4\nFIVE\n6\n7\n8\n9\n', 'f'),
    '--- a/f\n+++ b/f\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+FIVE\n 6\n 7\n 8',
  );
  const child = join(root, 'child');
  cpSync(h0, child, { recursive: true });
  const code = readFileSync(join(child, 'harness.ts'), 'utf8').replace('const topk = Number(k.topk ?? 1);', 'const topk = Math.max(3, Number(k.topk ?? 1));');
  writeFileSync(join(child, 'harness.ts'), code);
  writeFileSync(join(child, 'notes.md'), 'why\n');
  const childHash = gitTreeHash(child);
  const two: ArchiveView = {
    ...view,
    candidates: [...view.candidates, { ...view.candidates[0], treeHash: childHash, parents: [h0Hash], round: 1, origin: 'proposer', scores: [] }],
    materialize: async (h) => (h === h0Hash ? h0 : child),
  };
  const tools = new ArchiveTools(request({ view: two }), 2000);
  const d = await tools.call('diff', { candidate: childHash.slice(0, 10) });
  assert.equal(d.isError, false);
  assert.match(d.output, new RegExp(`^diff ${h0Hash.slice(0, 12)} → ${childHash.slice(0, 12)}`));
  assert.match(d.output, /--- a\/harness\.ts\n\+\+\+ b\/harness\.ts\n@@ -\d+,7 \+\d+,7 @@/);
  assert.match(d.output, /\n-    const topk = Number\(k\.topk \?\? 1\);\n\+    const topk = Math\.max\(3, Number\(k\.topk \?\? 1\)\);/);
  assert.match(d.output, /--- \/dev\/null\n\+\+\+ b\/notes\.md\n@@ -0,0 \+1,2 @@\n\+why\n\+$/m);
  const small = await new ArchiveTools(request({ view: two }), 300).call('diff', { candidate: childHash });
  assert.match(small.output, /\[lines 1–\d+ of \d+ \(output capped at 300 characters\); next page: offset=\d+\]$/);
  assert.match((await tools.call('diff', { candidate: h0Hash })).output, /has no parent/);
});

test('a validation run that breaks is reported to the model as an internal error; the written candidate is kept', async () => {
  const { ArchiveTools } = await import('../../src/search/llm/archiveTools.js');
  const req = request({
    validate: async () => {
      throw new Error('the harness runtime is closed');
    },
  });
  const tools = new ArchiveTools(req, 2000);
  const r = await tools.call('write_candidate', { parent: h0Hash, hypothesis: 'h', files: { 'notes.md': 'x' } });
  assert.equal(r.isError, false);
  assert.match(r.output, /validation could not run here \(internal error: the harness runtime is closed\); the harness phase will validate it/);
  assert.equal(tools.written.length, 1);
  assert.equal(tools.written[0].valid, undefined);
  assert.ok(existsSync(join(req.outDir, 'cand-1', 'notes.md')));
  const again = await tools.call('write_candidate', { parent: h0Hash, hypothesis: 'h2', files: { 'notes.md': 'y' } });
  assert.match(again.output, /asks for 1 candidates and all are written/);
});
