/**
 * The Node worker bootstrap: the program a sandboxed harness process runs. Usage:
 *
 *   node [sandbox flags] whale-bootstrap.mjs <candidate bundle .mjs>
 *
 * It reads the `run` message from stdin, installs the network guard (allowing only the gateway
 * named in that message), only then imports the candidate bundle (so the candidate's top-level code
 * is already guarded), says `ready`, calls `run(task, ctx)` and reports `result` or `error`.
 * `ctx.chat` / `ctx.tool` are HTTP calls to the recording gateway. Built by esbuild into one file
 * (see assets.ts); it must not import anything from the engine beyond the protocol.
 */
import fs from 'node:fs';
import http from 'node:http';
import { syncBuiltinESMExports } from 'node:module';
import { Writable } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { format } from 'node:util';
import v8 from 'node:v8';
import { isMainThread, parentPort } from 'node:worker_threads';
// No schemas here (framing.ts): a worker thread would build them for nothing, its host thread has
// validated its `run` message. The roles that read the engine's lines load them (protocol.ts) below.
import { LineSplitter, encodeLine, MAX_LOG_CHARS, PROTOCOL_VERSION } from '../framing.js';
import type { ChildMessage, RunMessage } from '../protocol.js';
import type { ChatOptions, ChatReply, HarnessContext, HarnessDefinition, HarnessMessage } from '../sdk.js';
import { gatewayPost } from './gatewayClient.js';
import { installNetworkGuard } from './netGuard.js';

// Four roles, one file: a one-rollout process (the default), the main thread of a warm process
// (`--pool`: only our code runs there), a worker thread of a warm process serving one rollout, and
// a warm process that serves each rollout in a fresh `vm` context (`--contexts`, contextHost.ts).
const poolHost = isMainThread && process.argv[3] === '--pool';
const contextHost = isMainThread && process.argv[2] === '--contexts';
const hostRole = poolHost || contextHost;
const inWorker = !isMainThread;

// Protocol frames go straight to fd 1 with fs.writeSync captured before any candidate code loads:
// no stream object the candidate could patch to read them (and learn the nonce) or reorder them.
const writeSync = fs.writeSync;
let nonce: string | undefined;
function writeOut(text: string): void {
  writeFd(1, Buffer.from(text));
}
function writeFd(fd: number, bytes: Buffer): void {
  for (let off = 0; off < bytes.length;) {
    try {
      off += writeSync(fd, bytes, off);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
    }
  }
}
const send = (m: ChildMessage): void => {
  writeOut(encodeLine(nonce ? { ...m, nonce } : m));
};

function clip(s: string, n = MAX_LOG_CHARS): string {
  return s.length > n ? s.slice(0, n - 1) + '…' : s;
}

/** JSON-safe, bounded copy of whatever the harness passes to ctx.log. */
function safeData(data: unknown): unknown {
  if (data === undefined) return undefined;
  try {
    const text = JSON.stringify(data);
    if (text === undefined) return String(data);
    return text.length > MAX_LOG_CHARS ? clip(text) : (JSON.parse(text) as unknown);
  } catch {
    return clip(String(data));
  }
}

/** The last message of a process: exit only once it is written (pipes are asynchronous on some platforms). */
function sendThenExit(m: ChildMessage, code: number): void {
  send(m); // synchronous: written when this returns
  exitNow(code); // captured before candidate code loads: a replaced process.exit cannot keep it alive
}

// Dies with the engine where the kernel's parent-death signal is not available (not Linux): once
// the parent is gone the process is re-parented, and its ppid changes. Captured before any candidate
// code runs; process.exit is captured too, so a candidate that replaces it cannot stay behind.
const engineParent = process.ppid;
const exitNow = process.exit.bind(process);
setInterval(() => {
  if (process.ppid !== engineParent) exitNow(1);
}, 1000).unref();

let failed = false;
function fail(message: string, stack?: string): never {
  if (!failed) sendThenExit({ type: 'error', message: clip(message), stack: stack ? clip(stack) : undefined }, 1);
  failed = true;
  // Stop the caller; the exit happens once the message is flushed.
  throw new HarnessFailed(message);
}

class HarnessFailed extends Error {}

if (!hostRole)
  process.on(
    'uncaughtException',
    (e) =>
      e instanceof HarnessFailed ||
      swallow(() => fail(`uncaught exception: ${e instanceof Error ? e.message : String(e)}`, e instanceof Error ? e.stack : undefined)),
  );
if (!hostRole)
  process.on(
    'unhandledRejection',
    (e) =>
      e instanceof HarnessFailed ||
      swallow(() => fail(`unhandled rejection: ${e instanceof Error ? e.message : String(e)}`, e instanceof Error ? e.stack : undefined)),
  );

function swallow(f: () => void): void {
  try {
    f();
  } catch {
    /* fail() throws to stop its caller; here there is no caller to stop */
  }
}

// console.* becomes log events instead of corrupting the protocol stream.
if (!hostRole)
  for (const level of ['debug', 'info', 'warn', 'error'] as const) {
    console[level] = (...args: unknown[]) => send({ type: 'log', level, message: clip(format(...args)) });
  }
if (!hostRole) console.log = (...args: unknown[]) => send({ type: 'log', level: 'info', message: clip(format(...args)) });

/**
 * The rollout's agent for gateway calls: a connection per call, as before, but with no server name.
 * Plain HTTP has none; without it the agent guesses one for every request, and the IPv6 check of
 * that guess compiles a large regular expression afresh in every rollout's thread (about 3 ms of CPU).
 */
let gatewayAgent: http.Agent | undefined;

/** One JSON request to the gateway; resolves with the parsed body or rejects with the gateway's error message. */
async function gatewayRequest(run: RunMessage, url: string, body: unknown): Promise<unknown> {
  gatewayAgent ??= new http.Agent({ servername: '' } as http.AgentOptions);
  const res = await gatewayPost(run.gateway, url, JSON.stringify(body), gatewayAgent);
  let parsed: unknown;
  try {
    parsed = JSON.parse(res.text);
  } catch {
    throw new Error(`gateway answered ${res.status} with non-JSON: ${clip(res.text, 200)}`);
  }
  if (res.status >= 400) {
    const msg = (parsed as { error?: { message?: string } }).error?.message ?? res.text;
    const err = new Error(`gateway: ${msg}`) as Error & { status?: number };
    err.status = res.status;
    throw err;
  }
  return parsed;
}

function makeContext(run: RunMessage): HarnessContext {
  return {
    knobs: run.knobs,
    prompts: run.prompts,
    tools: run.tools,
    limits: run.limits,
    async chat(messages: HarnessMessage[], opts: ChatOptions = {}): Promise<ChatReply> {
      const body = (await gatewayRequest(run, `${run.gateway.baseUrl}/chat/completions`, { messages, ...opts })) as {
        choices: { message: { content: string }; finish_reason: string }[];
        usage: { prompt_tokens: number; completion_tokens: number };
      };
      const choice = body.choices[0];
      return {
        text: choice.message.content,
        finishReason: choice.finish_reason === 'length' ? 'length' : 'stop',
        usage: { promptTokens: body.usage.prompt_tokens, completionTokens: body.usage.completion_tokens },
      };
    },
    async tool(name: string, args: Record<string, unknown>): Promise<string> {
      const body = (await gatewayRequest(run, `${run.gateway.toolsUrl}/${encodeURIComponent(name)}`, args ?? {})) as { observation: string };
      return body.observation;
    },
    log(message: string, data?: unknown): void {
      send({ type: 'log', message: clip(String(message)), data: safeData(data) });
    },
  };
}

function pickDefinition(mod: Record<string, unknown>): HarnessDefinition {
  const candidates = [mod.default, (mod.default as Record<string, unknown> | undefined)?.default, mod.harness, mod];
  for (const c of candidates) if (c && typeof (c as HarnessDefinition).run === 'function') return c as HarnessDefinition;
  fail('the entry module exports no harness: export default defineHarness({ run(task, ctx) { … } })');
}

async function start(run: RunMessage, bundle: string): Promise<void> {
  nonce = run.nonce;
  const gw = new URL(run.gateway.baseUrl);
  installNetworkGuard({ socketPath: run.gateway.socketPath, host: gw.hostname, port: run.gateway.socketPath ? undefined : Number(gw.port) });
  const mod = (await import(pathToFileURL(bundle).href)) as Record<string, unknown>;
  const def = pickDefinition(mod);
  send({ type: 'ready', protocol: PROTOCOL_VERSION, runtime: `node ${process.version}` });
  const result = (await def.run(run.task, makeContext(run))) as unknown;
  const answer = (result as { answer?: unknown } | null | undefined)?.answer;
  if (answer !== null && typeof answer !== 'string')
    fail(`run() must return { answer: string | null }, got ${clip(JSON.stringify(result) ?? String(result), 200)}`);
  sendThenExit({ type: 'result', answer }, 0);
}

const bundle = process.argv[2];
if (!bundle && !contextHost) fail('bootstrap needs the candidate bundle path as its argument');
let started = false;
function begin(run: RunMessage): void {
  started = true;
  start(run, bundle).catch((e: unknown) => {
    if (!(e instanceof HarnessFailed)) swallow(() => fail(e instanceof Error ? e.message : String(e), e instanceof Error ? e.stack : undefined));
  });
}
if (contextHost) {
  const { runContextHost } = await import('./contextHost.js');
  runContextHost();
} else if (poolHost) {
  const { runPoolHost } = await import('./poolHost.js');
  runPoolHost({ bootstrap: fileURLToPath(import.meta.url), bundle, dir: process.argv[4], heapMb: Number(process.argv[5]) });
} else if (inWorker) {
  prepareWorkerThread();
  // The only message the host sends, validated there; candidate code, loaded after it, never sees it (nor its nonce).
  parentPort?.once('message', (run: RunMessage) => begin(run));
} else {
  const { ParentMessage, parseLine } = await import('../protocol.js');
  const splitter = new LineSplitter(
    (line) => {
      if (started) return; // one rollout per process: anything after `run` is ignored
      const parsed = parseLine(ParentMessage, line);
      if (!parsed.ok) fail(`bad message from the runtime: ${parsed.error}`);
      begin(parsed.message);
    },
    (n) => fail(`runtime sent a ${n}-byte line`),
  );
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (c: string) => splitter.push(c));
}

/**
 * A worker thread of a warm process, before any candidate code: the same view as a one-rollout
 * process. Its own permission set must hold (the host gave it no worker, child-process or write
 * permission: checked, not assumed); process.stdout/stderr write straight to the process's
 * descriptors, synchronously and in order with the frames, as they do in a one-rollout process
 * (Node would otherwise relay them through the host thread, later); and V8 flags, the one setting a
 * thread can change for the whole process, cannot be changed.
 */
function prepareWorkerThread(): void {
  const perm = (process as unknown as { permission?: { has(scope: string): boolean } }).permission;
  if (!perm || perm.has('worker') || perm.has('child') || perm.has('fs.write'))
    fail('sandbox self-check failed: this worker thread runs without its own permission set; rollouts cannot be pooled on this Node');
  for (const [name, fd] of [
    ['stdout', 1],
    ['stderr', 2],
  ] as const) {
    const stream = new Writable({
      write(chunk: Buffer | string, _enc, cb) {
        try {
          writeFd(fd, typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
          cb();
        } catch (e) {
          cb(e as Error);
        }
      },
    });
    Object.defineProperty(process, name, { configurable: true, enumerable: true, get: () => stream });
  }
  const refuse = () => {
    throw new Error('denied by the WHALE sandbox: v8.setFlagsFromString (V8 flags are shared by every rollout of a warm process)');
  };
  v8.setFlagsFromString = refuse;
  syncBuiltinESMExports();
}
