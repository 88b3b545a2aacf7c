/**
 * The context host: the main thread of a sandboxed harness process that serves many rollouts of ONE
 * candidate, one after another, each in a fresh `vm` context (its own realm: globals, prototypes,
 * module state, timers, microtask queue) of one V8 isolate. Started by the bootstrap as
 *
 *   node --permission … --max-old-space-size=… whale-bootstrap.mjs <candidate script> --contexts
 *
 * under exactly the wrappers and read-only paths of a one-rollout process (no worker, child-process
 * or write permission). A context costs well under a millisecond where a worker thread costs about
 * 30 ms of CPU, so this is the default for candidates that need nothing of Node's own (bundle.ts
 * decides: no built-in module, no Node global such as `process` or `Buffer`); the rest keep a worker
 * thread per rollout (poolHost.ts).
 *
 * Candidate code never holds anything of this realm (contextPrelude.ts says how): it reaches the
 * model and the tools through `bridge`, which this host answers with calls it makes itself: as
 * `call` frames on its own pipe when the run says `lane: "pipe"` (the runtime's default for a
 * context; no HTTP on either side), else as HTTP requests to the gateway.
 * A rollout is over when it returns, throws or fails, or when it can no longer make progress (no
 * timer, no gateway call pending: what ends a one-rollout process's event loop); the host then never
 * enters that context again, reports `exit`, and takes the next `run`. The engine's limits are per
 * rollout as for any warm process (one rollout at a time; its CPU, memory and output are this
 * process's while it runs).
 */
import fs from 'node:fs';
import http from 'node:http';
import v8 from 'node:v8';
import vm from 'node:vm';
import {
  LineSplitter,
  MAX_BODY_BYTES,
  MAX_CALL_LINE_CHARS,
  MAX_HOST_CODE_GROWTH_BYTES,
  MAX_LOG_CHARS,
  PROTOCOL_VERSION,
  REPLY_PREFIX,
  encodeLine,
  touchRecent,
  type ReplyFrame,
} from '../framing.js';
import { ParentMessage, parseLine, type ChildMessage, type RunMessage } from '../protocol.js';
import { contextPrelude, newRolloutContext, preludeScript, type Bridge, type PreludeApi } from './contextPrelude.js';
import { gatewayPost } from './gatewayClient.js';
import { installNetworkGuard } from './netGuard.js';

/** Node clamps a delay outside 1 ms … 2^31 - 1 ms to 1 ms; so does this. */
function delayOf(ms: number): number {
  return Number.isFinite(ms) && ms >= 1 && ms <= 2 ** 31 - 1 ? ms : 1;
}

function clip(s: string, n = MAX_LOG_CHARS): string {
  return s.length > n ? s.slice(0, n - 1) + '…' : s;
}

interface HostTimer {
  handle: NodeJS.Timeout | NodeJS.Immediate;
  immediate: boolean;
  /** A timer that is not ref'd does not keep the rollout going, as in Node's event loop. */
  refd: boolean;
}

function cancel(t: HostTimer): void {
  if (t.immediate) clearImmediate(t.handle as NodeJS.Immediate);
  else clearTimeout(t.handle as NodeJS.Timeout);
}

interface Rollout {
  run: RunMessage;
  context: vm.Context | undefined;
  api: PreludeApi | undefined;
  timers: Map<number, HostTimer>;
  inflight: number;
  over: boolean;
  /** Inside a call into the context (enter). */
  entered: boolean;
  /** This rollout's candidate script was compiled for it (its first in this process). */
  compiled: boolean;
  ending?: { last: ChildMessage | undefined; code: number };
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** What the gateway answers to a body it will not read (errorReply's shape, status 400). */
function tooLarge(limit: number): string {
  return JSON.stringify({ error: { message: `request body over ${limit} bytes`, type: 'invalid_request_error', code: null } });
}
/** A reply from the runtime can be as long as a tool's observation: a line limit far above a call's. */
const MAX_REPLY_LINE_CHARS = 256 * 1024 * 1024;
const num = (v: unknown): number => (typeof v === 'number' ? v : Number.NaN);

/**
 * Process-wide things a context could change for the rollouts after it, settled before the first:
 *
 * - The host's CallSite prototype: V8 makes call sites in the realm current when a stack is
 *   formatted, which a context can arrange to be the host's (a host built-in reading a context
 *   error's `stack`). It is not reachable from `globalThis`, so --frozen-intrinsics leaves it alone;
 *   unfrozen, it can carry state (or memory) from one rollout to the next. Frozen here, with its
 *   constructor and methods, from call sites got the same way.
 * - V8's protectors: process-wide switches for fast paths that hold while every realm's built-ins
 *   are untouched. A rollout that changes its own `Object.prototype` or `Array.prototype[Symbol.iterator]`
 *   turns them off for every later rollout, which then runs slower and may meet its CPU limit. So
 *   they are turned off here, in a throwaway context, and every rollout starts alike.
 */
function settleProcessWideState(): void {
  const probe = vm.createContext(Object.create(null) as object);
  const error = vm.runInContext('Error.stackTraceLimit = 1; Error.prepareStackTrace = (e, t) => t; new Error("call sites")', probe) as { stack: unknown };
  const sites = error.stack as object[];
  const proto = Object.getPrototypeOf(sites[0]) as Record<string | symbol, unknown>;
  for (const key of Reflect.ownKeys(proto)) {
    const v = proto[key];
    if (typeof v === 'function') Object.freeze(v);
  }
  Object.freeze((proto as { constructor: object }).constructor);
  Object.freeze(proto);
  vm.runInContext(
    `const arrayIterator = Object.getPrototypeOf([][Symbol.iterator]());
     const stringIterator = Object.getPrototypeOf(''[Symbol.iterator]());
     const mapIterator = Object.getPrototypeOf(new Map()[Symbol.iterator]());
     const setIterator = Object.getPrototypeOf(new Set()[Symbol.iterator]());
     const noop = function () {};
     Object.prototype[0] = 0;
     Array.prototype[0] = 0;
     Array.prototype.constructor = noop;
     Object.defineProperty(Array, Symbol.species, { value: Array });
     Array.prototype[Symbol.iterator] = noop;
     arrayIterator.next = noop;
     Array.prototype[Symbol.isConcatSpreadable] = true;
     String.prototype[Symbol.iterator] = noop;
     stringIterator.next = noop;
     Map.prototype[Symbol.iterator] = noop;
     mapIterator.next = noop;
     Set.prototype[Symbol.iterator] = noop;
     setIterator.next = noop;
     Promise.prototype.then = noop;
     Promise.resolve = noop;
     Object.defineProperty(Promise, Symbol.species, { value: Promise });
     Object.defineProperty(RegExp, Symbol.species, { value: RegExp });
     RegExp.prototype.exec = noop;
     Object.defineProperty(Object.getPrototypeOf(Int8Array), Symbol.species, { value: Int8Array });
     Number.prototype[Symbol.toPrimitive] = noop;
     String.prototype[Symbol.replace] = noop;
     String.prototype[Symbol.split] = noop;`,
    probe,
  );
}

/**
 * A rollout may leave memory reachable from something process-wide that this host does not know of;
 * the next rollout would then meet the memory limit for it. After each rollout the heap must be back
 * near where it was (a full collection decides, and only when it has grown): else the process retires.
 */
function heapGrewFrom(baseline: number): boolean {
  const slack = Math.max(8 * 2 ** 20, v8.getHeapStatistics().heap_size_limit / 8);
  if (v8.getHeapStatistics().used_heap_size <= baseline + slack) return false;
  (globalThis as { gc?: () => void }).gc?.();
  return v8.getHeapStatistics().used_heap_size > baseline + slack;
}

export function runContextHost(): void {
  settleProcessWideState();
  (globalThis as { gc?: () => void }).gc?.();
  let heapBaseline = v8.getHeapStatistics().used_heap_size;
  /** The baseline once the first candidate's code is in: what later ones add is bounded. */
  let firstBaseline: number | undefined;
  const writeSync = fs.writeSync;
  /** Candidates' scripts, each a script whose value is its module function (bundle.ts, `contextScriptFor`), compiled once. */
  const scripts = new Map<string, vm.Script>();
  const prelude = preludeScript();
  // Entering a context with an empty script runs its microtasks (microtaskMode 'afterEvaluate').
  const drain = new vm.Script('0', { filename: 'whale-drain.js' });
  // Gateway connections are this realm's and kept alive between calls and rollouts: no candidate code can reach them.
  const agent = new http.Agent({ keepAlive: true, servername: '' } as http.AgentOptions);
  const queue: string[] = [];
  /** Pipe-lane calls awaiting their `reply`: their rollout, and how to hand it the reply. Ids never repeat in a process. */
  const calls = new Map<number, { r: Rollout; settle: (status: number, text: string) => void }>();
  let callSeq = 0;
  let current: Rollout | undefined;
  let guarded = false;

  /**
   * Frames written during a call into the context go out in one write when it returns (a rollout's
   * `ready` and first call, its result and `exit`): a write and a wake-up of the engine each, not one
   * per frame. A log flushes at once, so what a candidate logged before it hangs still arrives; a call
   * made just before a hang is never sent, as over HTTP, whose request goes out after the call returns.
   */
  let batch: string[] | undefined;
  const frame = (m: ChildMessage, nonce: string) => write(encodeLine({ ...m, nonce } as ChildMessage), m.type === 'log');
  const write = (line: string, now = false) => {
    if (!batch) return writeOut(line);
    batch.push(line);
    if (now) flush();
  };
  const flush = () => {
    if (!batch?.length) return;
    const text = batch.length === 1 ? batch[0] : batch.join('');
    batch.length = 0;
    writeOut(text);
  };
  const writeOut = (text: string) => {
    const bytes = Buffer.from(text);
    for (let off = 0; off < bytes.length;) {
      try {
        off += writeSync(1, bytes, off);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
      }
    }
  };
  /** Every way out of the process passes here, so no batched frame is left behind. */
  const exit: (code: number) => never = (code) => {
    try {
      flush();
    } finally {
      process.exit(code);
    }
  };

  /**
   * The end of a rollout: its last frame, if any, then `exit`; its context is never entered again.
   * Inside a call into the context the frames wait until the microtasks that call queued have run:
   * were they never to stop, the engine must see this rollout still running (its limits then stop
   * it), not a finished one whose process spins through the next.
   */
  const end = (r: Rollout, last: ChildMessage | undefined, code: number) => {
    if (r.over) return;
    r.over = true;
    for (const t of r.timers.values()) cancel(t);
    r.timers.clear();
    r.api = undefined;
    r.ending = { last, code };
    if (!r.entered) finish(r);
  };
  const finish = (r: Rollout) => {
    const ending = r.ending;
    if (!ending || r.context === undefined) return;
    r.context = undefined;
    for (const [k, c] of calls) if (c.r === r) calls.delete(k);
    if (ending.last) frame(ending.last, r.run.nonce as string);
    // Retire rather than hand the next rollout a heap this one left full: no `exit`, so the engine
    // takes the process for finished with, and the next rollout gets a new one.
    if (heapGrewFrom(heapBaseline)) exit(0);
    // A candidate's code, compiled for this rollout, stays (up to MAX_HOST_SCRIPTS of them).
    if (r.compiled) {
      heapBaseline = Math.max(heapBaseline, v8.getHeapStatistics().used_heap_size);
      firstBaseline ??= heapBaseline;
      if (heapBaseline - firstBaseline > MAX_HOST_CODE_GROWTH_BYTES) exit(0);
    }
    frame({ type: 'exit', code: ending.code }, r.run.nonce as string);
    current = undefined;
    setImmediate(next);
  };

  /**
   * Something of the context's reached this realm's frames: the prelude never lets that happen, so
   * the candidate found a way. The value is never touched (reading an error's `stack` from here would
   * hand this realm's call sites to the context's Error.prepareStackTrace); the rollout ends as a
   * crash and the process exits without reporting `exit`, so no later rollout runs in it.
   */
  const broken = (r: Rollout | undefined) => {
    if (r && !r.over) frame({ type: 'error', message: 'the harness broke out of its runtime: an exception left its context' }, r.run.nonce as string);
    exit(70);
  };

  /** Runs `f` (a call into the context) and the microtasks it queued; then checks the rollout can still move. */
  const enter = (r: Rollout, f: (api: PreludeApi) => void) => {
    if (r.over || !r.api || !r.context) return;
    const context = r.context;
    r.entered = true;
    const outer = batch === undefined;
    if (outer) batch = [];
    try {
      f(r.api);
      drain.runInContext(context);
    } catch {
      broken(r);
    } finally {
      r.entered = false;
    }
    if (!r.over && r.inflight === 0 && ![...r.timers.values()].some((t) => t.refd)) end(r, undefined, 0);
    else if (r.over) finish(r);
    if (outer) {
      flush();
      batch = undefined;
    }
  };

  const bridgeFor =
    (r: Rollout): Bridge =>
    (kind, a, b, c, d) => {
      try {
        if (r.over) return undefined;
        const nonce = r.run.nonce as string;
        switch (kind) {
          case 'ready':
            frame({ type: 'ready', protocol: PROTOCOL_VERSION, runtime: `node ${process.version}` }, nonce);
            return undefined;
          case 'log':
            frame({ type: 'log', level: str(a) as 'info', message: clip(str(b)) }, nonce);
            return undefined;
          case 'data': {
            const data = b === 'j' ? (JSON.parse(str(c)) as unknown) : b === 's' ? str(c) : undefined;
            frame({ type: 'log', message: clip(str(a)), data }, nonce);
            return undefined;
          }
          case 'result':
            end(r, { type: 'result', answer: a === 1 ? str(b) : null }, 0);
            return undefined;
          case 'fail':
            end(r, { type: 'error', message: clip(str(a)), stack: str(b) ? clip(str(b)) : undefined }, 1);
            return undefined;
          case 'timer': {
            const id = num(a);
            const repeat = c === 1;
            const fire = () => {
              if (!repeat) r.timers.delete(id);
              enter(r, (api) => api.dispatch('timer', id));
            };
            if (b === -1) r.timers.set(id, { handle: setImmediate(fire), immediate: true, refd: true });
            else {
              const ms = delayOf(num(b));
              r.timers.set(id, { handle: repeat ? setInterval(fire, ms) : setTimeout(fire, ms), immediate: false, refd: true });
            }
            return undefined;
          }
          case 'clear': {
            const t = r.timers.get(num(a));
            if (t) cancel(t);
            r.timers.delete(num(a));
            return undefined;
          }
          case 'ref': {
            const t = r.timers.get(num(a));
            if (t) t.refd = b === 1;
            return undefined;
          }
          case 'refresh': {
            const t = r.timers.get(num(a));
            if (t && !t.immediate) (t.handle as NodeJS.Timeout).refresh();
            return undefined;
          }
          case 'request': {
            const id = num(a);
            r.inflight++;
            const settle = (status: number, text: string) => {
              r.inflight--;
              enter(r, (api) => api.dispatch('reply', id, status, text));
            };
            if (r.run.lane === 'pipe') {
              const body = str(d);
              const callId = ++callSeq;
              const route = b === 'chat' ? 'chat' : 'tool';
              const line = encodeLine({ type: 'call', id: callId, route, ...(route === 'chat' ? {} : { name: str(c) }), body, nonce } as ChildMessage);
              // The gateway reads no larger body, and answers one with this 400; the runtime reads no longer line.
              if (Buffer.byteLength(body) > MAX_BODY_BYTES || line.length > MAX_CALL_LINE_CHARS) {
                setImmediate(() => settle(400, tooLarge(MAX_BODY_BYTES)));
                return undefined;
              }
              calls.set(callId, { r, settle });
              write(line);
              return undefined;
            }
            const g = r.run.gateway;
            const url = b === 'chat' ? `${g.baseUrl}/chat/completions` : `${g.toolsUrl}/${encodeURIComponent(str(c))}`;
            gatewayPost(g, url, str(d), agent).then(
              (res) => settle(res.status, res.text),
              (e: Error) => settle(-1, e.message),
            );
            return undefined;
          }
        }
        return undefined;
      } catch {
        return undefined; // nothing of this realm may reach the context, not even an error
      }
    };

  /**
   * The run's candidate, compiled now or earlier. The runtime keeps the same list of what this
   * process holds, so a script it does not send is here; were it not, or did it not compile, the
   * process ends, and the runtime's list with it.
   */
  const scriptOf = (run: RunMessage): { script: vm.Script; compiled: boolean } => {
    const id = run.script?.id ?? '';
    const source = run.script?.source;
    let script = scripts.get(id);
    const compiled = script === undefined;
    try {
      if (script === undefined) {
        if (source === undefined) throw new Error(`the runtime sent no script for candidate ${id || '(none)'}`);
        script = new vm.Script(source, { filename: 'harness.js' });
      }
    } catch (e) {
      frame({ type: 'error', message: clip(`cannot load the candidate's script: ${e instanceof Error ? e.message : String(e)}`) }, run.nonce as string);
      exit(3);
    }
    const held = script;
    touchRecent(scripts, id, () => held);
    return { script: held, compiled };
  };

  const next = () => {
    if (current) return;
    const line = queue.shift();
    if (line === undefined) return;
    const parsed = parseLine(ParentMessage, line);
    if (!parsed.ok) {
      writeSync(2, `bad message from the runtime: ${parsed.error}\n`);
      exit(3);
    }
    const run: RunMessage = parsed.message;
    if (!guarded) {
      // Nothing in a context can reach the network; the guard is for this realm, as in every harness
      // process. On the pipe lane this realm has no address to reach either.
      if (run.lane === 'pipe') installNetworkGuard({});
      else {
        const gw = new URL(run.gateway.baseUrl);
        installNetworkGuard({ socketPath: run.gateway.socketPath, host: gw.hostname, port: run.gateway.socketPath ? undefined : Number(gw.port) });
      }
      guarded = true;
    }
    // This realm runs with code generation from strings off (planNodeContextHost): a way into it
    // that ends in its `Function` gets an EvalError. The candidate's context keeps eval.
    const context = newRolloutContext();
    const candidate = scriptOf(run);
    const r: Rollout = { run, context, api: undefined, timers: new Map(), inflight: 0, over: false, entered: false, compiled: candidate.compiled };
    current = r;
    const install = prelude.runInContext(context) as typeof contextPrelude;
    r.api = install(bridgeFor(r), MAX_LOG_CHARS);
    const fn = candidate.script.runInContext(context) as Parameters<PreludeApi['start']>[0];
    // Only what the candidate may see: no gateway address or token, no nonce.
    const seen = JSON.stringify({ task: run.task, knobs: run.knobs, prompts: run.prompts, tools: run.tools, limits: run.limits });
    enter(r, (api) => api.start(fn, seen));
  };

  // Node's fatal-exception path reads an uncaught error's `stack` from this realm (see `broken`): the
  // capture callback runs first and leaves the value alone. Only candidate code can throw here.
  process.setUncaughtExceptionCaptureCallback(() => broken(current));

  // An unhandled rejection in a context ends its rollout as it ends a one-rollout process.
  process.on('unhandledRejection', (reason) => {
    const r = current;
    if (!r || r.over || !r.api) return;
    let described: [string, string | undefined] = ['(an error that cannot be described)', undefined];
    try {
      described = JSON.parse(r.api.describe(reason)) as [string, string | undefined];
    } catch {
      /* keep the placeholder */
    }
    end(r, { type: 'error', message: clip(`unhandled rejection: ${described[0]}`), stack: described[1] ? clip(described[1]) : undefined }, 1);
  });

  const onReply = (line: string) => {
    const m = JSON.parse(line) as ReplyFrame;
    const c = calls.get(m.id);
    if (!c) return; // its rollout is over
    calls.delete(m.id);
    c.settle(m.status, m.body);
  };

  const splitter = new LineSplitter(
    (line) => {
      if (line.startsWith(REPLY_PREFIX)) return onReply(line);
      queue.push(line);
      next();
    },
    () => exit(3),
    MAX_REPLY_LINE_CHARS,
  );
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (c: string) => splitter.push(c));
  process.stdin.on('end', () => exit(0));
  process.stdin.on('error', () => exit(3));
}
