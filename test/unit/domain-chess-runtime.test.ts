/**
 * The chess domain end to end through the real harness runtime (sandboxed harness processes, the
 * recording gateway, the domain's tools, verifier, rule and diagnostics) with scripted policies that
 * answer right, wrong, malformed, illegally and over budget; and candidates that break the move rule:
 * importing chess.js, carrying a copy of it, or playing moves the model did not write.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { Chess } from 'chess.js';
import { SandboxLimitsSchema, SamplingSchema } from '../../src/core/config.js';
import { InputError } from '../../src/core/errors.js';
import type { Trajectory } from '../../src/core/trajectory.js';
import { createChessDomain } from '../../src/domains/chess/index.js';
import type { ChessPrivate } from '../../src/domains/chess/puzzles.js';
import type { Domain, Task } from '../../src/domains/types.js';
import { HarnessRuntime } from '../../src/harness/runtime.js';
import { ScriptedBackend, type Script } from '../../src/harness/testing/scriptedBackend.js';
import { isContextOverflow } from '../../src/harness/rolloutSession.js';
import { ContextLengthError, EmbeddedBackend } from '../../src/policy/embedded/index.js';
import { BackendHttpError } from '../../src/policy/remote/http.js';
import { validateCandidate } from '../../src/search/validate.js';
import { REPO } from './domain-helpers.js';

// Inside the repository's node_modules, so that a bundle's require() would find chess.js on disk:
// only the sandbox stands between a candidate and it.
const CACHE_ROOT = path.join(REPO, 'node_modules', '.cache');
mkdirSync(CACHE_ROOT, { recursive: true });
const root = mkdtempSync(path.join(CACHE_ROOT, 'whale-chess-rt-'));
after(() => rmSync(root, { recursive: true, force: true }));
const H0 = path.join(REPO, 'resources', 'harnesses', 'chess-h0');

const priv = (t: Task) => t.private as unknown as ChessPrivate;

/** The position shown in a prompt of chess-h0 ("Position (FEN): …"). */
function promptFen(messages: { role: string; content: string }[]): string {
  const user = messages.find((m) => m.role === 'user')!.content;
  return /Position \(FEN\): (.+)/.exec(user)![1].trim();
}

/** Every position the player meets in the tasks, with the solution's move there. */
function solutionBook(tasks: Task[]): Map<string, string> {
  const book = new Map<string, string>();
  for (const t of tasks) {
    const p = priv(t);
    const b = new Chess(p.start);
    p.solution.forEach((m, i) => {
      if (i % 2 === 0) book.set(b.fen(), m);
      b.move(m);
    });
  }
  return book;
}

/** A legal move in `fen` that neither is `avoid` nor mates. */
function otherMove(fen: string, avoid: string): string {
  return new Chess(fen).moves({ verbose: true }).find((m) => m.lan !== avoid && !m.san.endsWith('#'))!.lan;
}

let domain: Domain;
let tasks: Task[];

async function run(script: Script, opts: { candidate?: string; domain?: Domain; tasks?: Task[] } = {}): Promise<Trajectory[]> {
  const d = opts.domain ?? domain;
  const rt = new HarnessRuntime({
    domain: d,
    backend: new ScriptedBackend(script),
    limits: SandboxLimitsSchema.parse({}),
    sampling: SamplingSchema.parse({}),
    concurrency: 4,
    cacheDir: path.join(root, 'cache'),
  });
  try {
    const prepared = await rt.prepare(opts.candidate ?? H0);
    return await rt.rolloutMany(
      prepared,
      (opts.tasks ?? tasks).map((task, i) => ({ task, sampleIndex: 0, seed: i })),
    );
  } finally {
    await rt.close();
  }
}

test('setup: six mate-in-1 and six mate-in-2 puzzles of the sample', async () => {
  domain = await createChessDomain({});
  const val = domain.tasks('val');
  tasks = [...val.filter((t) => priv(t).solution.length === 1).slice(0, 6), ...val.filter((t) => priv(t).solution.length === 3).slice(0, 6)];
  assert.equal(tasks.length, 12);
});

test('a policy that knows the solutions solves every puzzle through h0 (mate-in-2 via play_move and the opponent reply)', async () => {
  const book = solutionBook(tasks);
  const trajs = await run((messages) => `I play ${book.get(promptFen(messages)) ?? 'a1a1'}`);
  for (const t of trajs) {
    assert.equal(t.termination, 'answered', `${t.taskId}: ${t.terminationDetail}`);
    assert.equal(t.verdict.pass, true, `${t.taskId}: ${t.verdict.reason}`);
    assert.equal(t.diagnostics?.solved, true);
    assert.equal(t.diagnostics?.legalMoveRate, 1);
    assert.equal(t.diagnostics?.truncated, false);
    assert.match(String(t.diagnostics?.ratingBand), /^\d+-\d+$/);
    const plays = t.events.filter((e) => e.type === 'tool' && e.name === 'play_move');
    assert.equal(plays.length, (priv(tasks.find((x) => x.id === t.taskId)!).solution.length + 1) / 2);
  }
});

test('a wrong (legal) move fails the puzzle; the legal-move rate stays 1', async () => {
  const book = solutionBook(tasks);
  const trajs = await run((messages) => {
    const fen = promptFen(messages);
    return otherMove(fen, book.get(fen)!);
  });
  for (const t of trajs) {
    assert.equal(t.termination, 'answered');
    assert.equal(t.verdict.pass, false);
    assert.match(t.verdict.reason, /the puzzle was failed through play_move/);
    assert.deepEqual([t.diagnostics?.solved, t.diagnostics?.legalMoveRate], [false, 1]);
  }
});

test('a malformed reply gets one retry, then no answer; nothing was proposed', async () => {
  const trajs = await run(() => 'I am not sure what to do here');
  for (const t of trajs) {
    assert.equal(t.termination, 'no_answer');
    assert.equal(t.verdict.reason, 'no answer');
    assert.equal(t.modelCalls.length, 2, 'h0 retries once (legalityRetries 1)');
    assert.equal(t.modelCalls[1].messages.at(-1)?.content, 'Write one move.');
    assert.deepEqual([t.diagnostics?.movesProposed, t.diagnostics?.legalMoveRate, t.diagnostics?.answerFormat], [0, null, 'none']);
  }
});

test('an illegal move is caught by is_legal_action and retried: illegal then right solves; always illegal gives rate 0', async () => {
  const book = solutionBook(tasks);
  const trajs = await run((messages) => {
    const last = messages.at(-1)!.content;
    return last.includes('is not a legal move') ? `Sorry: ${book.get(promptFen(messages))}` : 'a1a8';
  });
  for (const t of trajs) {
    assert.equal(t.verdict.pass, true, `${t.taskId}: ${t.verdict.reason}`);
    const p = priv(tasks.find((x) => x.id === t.taskId)!);
    const n = (p.solution.length + 1) / 2;
    // Each player move: one illegal proposal (a1a8 in that position, unless legal there) and the right one.
    assert.equal(t.diagnostics?.legalMoves, n);
    assert.ok(Number(t.diagnostics?.legalMoveRate) < 1, JSON.stringify(t.diagnostics));
  }
  const never = await run(() => 'e1e1 is my move');
  for (const t of never) {
    assert.equal(t.termination, 'no_answer');
    assert.deepEqual([t.diagnostics?.movesProposed, t.diagnostics?.legalMoves, t.diagnostics?.legalMoveRate], [1, 0, 0]);
    assert.ok(t.events.some((e) => e.type === 'log' && e.message === 'illegal move'));
  }
});

test('over budget: a rambling model is cut at the per-call limit (truncated, no move), and a spent assistant budget ends the rollout', async () => {
  const ramble = () => 'let me think about all the checks and captures in this position very carefully '.repeat(10);
  const perCall = await createChessDomain({ limits: { maxTokensPerCall: 20 } });
  for (const t of await run(ramble, { domain: perCall, tasks: perCall.tasks('val').slice(0, 3) })) {
    assert.equal(t.termination, 'no_answer');
    assert.deepEqual(
      t.modelCalls.map((c) => [c.finishReason, c.usage.completionTokens]),
      [
        ['length', 20],
        ['length', 20],
      ],
    );
    assert.deepEqual([t.verdict.pass, t.diagnostics?.truncated], [false, true]);
  }
  const budget = await createChessDomain({ limits: { maxTokensPerCall: 20, maxAssistantTokens: 10 } });
  for (const t of await run(ramble, { domain: budget, tasks: budget.tasks('val').slice(0, 3) })) {
    assert.equal(t.termination, 'token_limit', `${t.terminationDetail}`);
    assert.deepEqual(
      t.modelCalls.map((c) => c.usage.completionTokens),
      [10],
    );
    assert.deepEqual([t.verdict.pass, t.diagnostics?.truncated], [false, true]);
  }
});

function candidate(name: string, source: string, extra: Record<string, string> = {}): string {
  const dir = path.join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'harness.json'), JSON.stringify({ name, runtime: 'node', entry: 'harness.ts' }));
  writeFileSync(path.join(dir, 'harness.ts'), source);
  for (const [f, text] of Object.entries(extra)) writeFileSync(path.join(dir, f), text);
  return dir;
}

test('a candidate that imports chess.js, or carries a copy of it, is refused when bundled, with the rule as the reason', async () => {
  const imports = candidate(
    'imports-chessjs',
    `import { defineHarness } from 'whale-harness';\nimport { Chess } from 'chess.js';\nexport default defineHarness({ async run(task) { return { answer: new Chess(String(task.meta?.fen)).moves()[0] }; } });\n`,
  );
  const rt = new HarnessRuntime({
    domain,
    backend: new ScriptedBackend(() => 'e2e4'),
    limits: SandboxLimitsSchema.parse({}),
    sampling: SamplingSchema.parse({}),
    concurrency: 1,
    cacheDir: path.join(root, 'cache'),
  });
  try {
    await assert.rejects(rt.prepare(imports), (e: unknown) => {
      assert.ok(e instanceof InputError);
      assert.match(
        e.message,
        /harness\.ts:2:\d+: cannot bundle: cannot import 'chess\.js': it is a chess move generator, and a harness may not compute, generate or replace moves/,
      );
      return true;
    });
    const v = await validateCandidate(imports, { runtime: rt, domain, mode: 'full' });
    assert.equal(v.ok, false);
    assert.match(v.ok ? '' : v.reasons.join('\n'), /chess move generator/);
    assert.equal(v.smokeRollouts, 0, 'no rollout paid for a refused candidate');
    for (const spec of ['chessops/chess', 'stockfish', 'js-chess-engine']) {
      const dir = candidate(
        `imports-${spec.replace(/\W/g, '-')}`,
        `import { defineHarness } from 'whale-harness';\nimport * as x from '${spec}';\nexport default defineHarness({ async run() { return { answer: String(Object.keys(x).length) }; } });\n`,
      );
      await assert.rejects(rt.prepare(dir), new RegExp(`cannot import '${spec}': it is a chess move generator`));
    }
    const vendored = candidate(
      'vendored-chessjs',
      `import { defineHarness } from 'whale-harness';\nimport { Chess } from './chess.mjs';\nexport default defineHarness({ async run(task) { return { answer: new Chess(String(task.meta?.fen)).moves()[0] }; } });\n`,
    );
    cpSync(path.join(REPO, 'node_modules', 'chess.js', 'dist', 'esm', 'chess.js'), path.join(vendored, 'chess.mjs'));
    await assert.rejects(rt.prepare(vendored), /cannot bundle chess\.mjs: it holds a copy of chess\.js, a chess move generator/);
  } finally {
    await rt.close();
  }
});

test('a require() of chess.js at run time is stopped by the sandbox even though chess.js is on disk above the bundle', async () => {
  const dir = candidate(
    'requires-chessjs',
    `import { defineHarness } from 'whale-harness';\nexport default defineHarness({ async run(task, ctx) {\n  const name = ['chess', 'js'].join('.');\n  try { const { Chess } = require(name); return { answer: new Chess(String(task.meta?.fen)).moves()[0] }; }\n  catch (e) { ctx.log('require failed', { code: e.code, message: String(e.message).slice(0, 200) }); return { answer: null }; }\n} });\n`,
  );
  const trajs = await run(() => 'e2e4', { candidate: dir, tasks: tasks.slice(0, 1) });
  const failed = trajs[0].events.find((e) => e.type === 'log' && e.message === 'require failed');
  assert.ok(failed, JSON.stringify(trajs[0].events));
  assert.equal((failed.data as { code: string }).code, 'ERR_ACCESS_DENIED', JSON.stringify(failed.data));
});

test('a candidate that plays a move the model did not write breaks the rule: rule_violation, score 0, invalid in validation', async () => {
  // It asks the model, then ignores it and plays the first legal move from its own list.
  const dir = candidate(
    'replaces-moves',
    `import { defineHarness } from 'whale-harness';
const MINE = ['a2a3', 'h2h3', 'a7a6', 'h7h6', 'b2b3', 'g7g6', 'e1e2', 'e8e7', 'g1h1', 'g8h8', 'g1g2', 'g8g7', 'b1a1', 'b8a8'];
export default defineHarness({ async run(task, ctx) {
  await ctx.chat([{ role: 'user', content: task.question }]);
  for (const m of MINE) {
    const obs = await ctx.tool('is_legal_action', { move: m });
    if (obs.startsWith('legal')) return { answer: m };
  }
  return { answer: null };
} });
`,
  );
  const trajs = await run(() => 'Qxf7#', { candidate: dir });
  const answered = trajs.filter((t) => t.finalAnswer !== null);
  assert.ok(answered.length >= 6, `${answered.length} of ${trajs.length} found a move of their own`);
  for (const t of answered) {
    assert.equal(t.termination, 'rule_violation');
    assert.match(
      t.terminationDetail ?? '',
      new RegExp(`the move '${t.finalAnswer}' does not appear in any model completion: a harness may not compute, generate or replace moves`),
    );
    assert.equal(t.verdict.score, 0);
    assert.equal(t.diagnostics?.solved, false);
  }
  const rt = new HarnessRuntime({
    domain,
    backend: new ScriptedBackend(() => 'Qxf7#'),
    limits: SandboxLimitsSchema.parse({}),
    sampling: SamplingSchema.parse({}),
    concurrency: 1,
    cacheDir: path.join(root, 'cache'),
  });
  try {
    const smokeTask = answered.map((t) => tasks.find((x) => x.id === t.taskId)!)[0];
    const v = await validateCandidate(dir, { runtime: rt, domain, mode: 'full', smokeTask });
    assert.equal(v.ok, false);
    assert.match(v.ok ? '' : v.reasons.join('\n'), /rule_violation: the move '\w+' does not appear in any model completion/);
  } finally {
    await rt.close();
  }
});

test('h0 passes validation (smoke run) on the chess domain', async () => {
  const rt = new HarnessRuntime({
    domain,
    backend: new ScriptedBackend(() => 'e2e4'),
    limits: SandboxLimitsSchema.parse({}),
    sampling: SamplingSchema.parse({}),
    concurrency: 1,
    cacheDir: path.join(root, 'cache'),
  });
  try {
    const v = await validateCandidate(H0, { runtime: rt, domain, mode: 'full' });
    assert.equal(v.ok, true, v.ok ? '' : v.reasons.join('\n'));
  } finally {
    await rt.close();
  }
});

test('on the real embedded model (256-token context): FEN prompts and their retries run; a prompt past the context is never an infrastructure failure', async () => {
  const backend = await EmbeddedBackend.open({ versionsDir: path.join(root, 'versions') });
  const rt = new HarnessRuntime({
    domain,
    backend,
    limits: SandboxLimitsSchema.parse({}),
    sampling: SamplingSchema.parse({ max_tokens: 64 }),
    concurrency: 4,
    cacheDir: path.join(root, 'cache'),
  });
  try {
    const prepared = await rt.prepare(H0);
    const trajs = await rt.rolloutMany(
      prepared,
      tasks.slice(0, 8).map((task, i) => ({ task, sampleIndex: 0, seed: i })),
    );
    const terminations = trajs.map((t) => t.termination);
    assert.ok(!terminations.includes('infra_error'), JSON.stringify(trajs.map((t) => t.terminationDetail)));
    for (const t of trajs) {
      assert.ok(['answered', 'no_answer', 'token_limit'].includes(t.termination), `${t.termination}: ${t.terminationDetail}`);
      assert.ok(t.modelCalls[0].usage.promptTokens > 100, 'the FEN prompt reached the model');
      assert.equal(typeof t.diagnostics?.solved, 'boolean');
      if (t.termination === 'token_limit')
        assert.match(t.terminationDetail ?? '', /the prompt does not fit the model's context \(prompt is \d+ tokens but the model's context is 256/);
    }
    // h0's retry prompt (about 260 tokens) overflows the context: the backend either cuts the prompt or refuses it;
    // either way the rollout is the harness's result, never an infrastructure failure.
    assert.ok(
      trajs.some((t) => t.modelCalls.length === 2 || t.termination === 'token_limit'),
      terminations.join(','),
    );
  } finally {
    await rt.close();
    await backend.close();
  }
});

test("isContextOverflow: the embedded sampler's error and vLLM's 400s, not other failures", () => {
  const url = 'http://127.0.0.1:8000/v1/chat/completions';
  assert.equal(isContextOverflow(new ContextLengthError(300, 256)), true);
  assert.equal(
    isContextOverflow(
      new BackendHttpError(
        400,
        `POST ${url}: HTTP 400: This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4900 in the messages, 100 in the completion).`,
        url,
      ),
    ),
    true,
  );
  assert.equal(
    isContextOverflow(
      new BackendHttpError(400, `POST ${url}: HTTP 400: The decoder prompt (length 9000) is longer than the maximum model length of 8192.`, url),
    ),
    true,
  );
  assert.equal(isContextOverflow(new BackendHttpError(400, `POST ${url}: HTTP 400: temperature must be non-negative`, url)), false);
  assert.equal(isContextOverflow(new BackendHttpError(503, `POST ${url}: HTTP 503: maximum context length service overloaded`, url)), false);
  assert.equal(isContextOverflow(new Error('ECONNREFUSED')), false);
});
