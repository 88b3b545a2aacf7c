/**
 * The code that runs inside a rollout's fresh `vm` context before the candidate's (contextHost.ts).
 * It is the only code there that the runtime wrote, and it is sent as source text
 * (`String(contextPrelude)`), so it must not refer to anything outside itself: no imports, no
 * helpers, only its parameters and the context's own built-ins.
 *
 * The wall between the context and the host is that nothing of the host's realm ever reaches
 * candidate code: a host function, object or error handed over would lead back to the host's
 * `Function`, and from there to `process`. So the host gives the prelude exactly one function,
 * `bridge`, which takes and returns only strings and numbers and never throws; the prelude keeps it
 * in a closure, calls it only with primitives it made itself, and turns whatever happens there into
 * errors of its own realm. Everything else the candidate sees (console, timers, the harness context
 * `ctx`, its replies and errors) is built here, from this realm's intrinsics, captured before any
 * candidate code runs, so that a candidate that replaces `Map.prototype.get` or `JSON.parse` harms
 * only itself.
 *
 * Host → context: the host calls the returned `dispatch` (gateway replies, timers) and then runs an
 * empty script in the context, which drains its microtasks (the context's own queue:
 * `microtaskMode: 'afterEvaluate'`). Once a rollout is over the host never enters its context
 * again, so nothing the candidate left behind (timers, promise chains) can run in a later rollout.
 */
import vm from 'node:vm';

export type Bridge = (kind: string, a?: string | number, b?: string | number, c?: string | number, d?: string | number) => string | number | undefined;

export interface PreludeApi {
  /** Runs the candidate's module function and then `run(task, ctx)`; what happens is reported through the bridge. */
  start(candidate: (module: { exports: unknown }, exports: unknown) => void, runJson: string): void;
  /** A gateway reply (`reply`, id, status or -1 for a network error, body or message) or a timer firing (`timer`, id). */
  dispatch(kind: string, id: number, status?: number, text?: string): void;
  /** Message and stack of something thrown in this context, as a JSON pair (for an unhandled rejection the host saw). */
  describe(value: unknown): string;
}

export function contextPrelude(bridge: Bridge, maxLogChars: number): PreludeApi {
  'use strict';
  const G = globalThis;
  const { Error: Err, String: Str, Number: Num, Map: MapC, Reflect: Refl, JSON: Json, Object: Obj, Array: Arr, Symbol: Sym } = G;
  const apply = Refl.apply;
  const stringify = Json.stringify;
  const parse = Json.parse;
  const mapGet = MapC.prototype.get;
  const mapSet = MapC.prototype.set;
  const mapDelete = MapC.prototype.delete;
  const strSlice = G.String.prototype.slice;
  const isArray = Arr.isArray;
  const keys = Obj.keys;
  const defineProperty = Obj.defineProperty;
  const freeze = Obj.freeze;
  const toPrimitive = Sym.toPrimitive;
  const Prom = G.Promise;
  const promThen = Prom.prototype.then;
  const promResolve = Prom.resolve;

  const pending = new MapC<number, { resolve: (text: string) => void; reject: (e: Error) => void }>();
  const timers = new MapC<number, { fn: unknown; args: unknown[]; repeat: boolean }>();
  let seq = 0;
  let over = false;

  /** The bridge, from this side: only primitives in and out, and anything it throws becomes an error of this realm. */
  function call(kind: string, a?: string | number, b?: string | number, c?: string | number, d?: string | number): string | number | undefined {
    let r: string | number | undefined;
    try {
      r = bridge(kind, a, b, c, d);
    } catch {
      throw new Err('the WHALE harness runtime failed');
    }
    return typeof r === 'string' || typeof r === 'number' ? r : undefined;
  }

  function clip(s: string, n: number): string {
    return s.length > n ? apply(strSlice, s, [0, n - 1]) + '…' : s;
  }

  function describe(e: unknown): [string, string | undefined] {
    try {
      if (e instanceof Err) {
        const stack = e.stack;
        return [Str(e.message), typeof stack === 'string' ? stack : undefined];
      }
      return [Str(e), undefined];
    } catch {
      return ['(an error that cannot be described)', undefined];
    }
  }

  /** Never throws: an error here would leave the context for the host's frames, which must never hold one (contextHost.ts). */
  function fail(prefix: string, e: unknown): void {
    try {
      const [message, stack] = describe(e);
      call('fail', prefix + clip(message, maxLogChars), clip(stack ?? '', maxLogChars));
    } catch {
      try {
        call('fail', prefix + '(an error that cannot be described)', '');
      } catch {
        /* the host ends the rollout when nothing comes */
      }
    }
  }

  // util.format's common cases; objects are shown much as util.inspect shows them.
  function show(v: unknown, depth: number, quote: boolean): string {
    if (typeof v === 'string') return quote ? "'" + v + "'" : v;
    if (typeof v === 'bigint') return Str(v) + 'n';
    if (typeof v === 'function') return '[Function: ' + (Str((v as { name?: unknown }).name) || '(anonymous)') + ']';
    if (typeof v !== 'object' || v === null) return Str(v);
    if (v instanceof Err) return typeof v.stack === 'string' ? v.stack : Str(v);
    if (depth > 2) return isArray(v) ? '[Array]' : '[Object]';
    if (isArray(v)) {
      let out = '';
      for (let i = 0; i < v.length; i++) out += (i ? ', ' : '') + show(v[i], depth + 1, true);
      return v.length ? '[ ' + out + ' ]' : '[]';
    }
    const ks = keys(v);
    let out = '';
    for (let i = 0; i < ks.length; i++) out += (i ? ', ' : '') + ks[i] + ': ' + show((v as Record<string, unknown>)[ks[i]], depth + 1, true);
    return ks.length ? '{ ' + out + ' }' : '{}';
  }
  function format(args: ArrayLike<unknown>): string {
    let out = '';
    let i = 0;
    const first = args[0];
    if (typeof first === 'string' && args.length > 1) {
      i = 1;
      let s = '';
      for (let k = 0; k < first.length; k++) {
        const ch = first[k];
        const next = first[k + 1];
        if (ch === '%' && next === '%') {
          s += '%';
          k++;
        } else if (ch === '%' && next !== undefined && 'sdifjoOc'.indexOf(next) >= 0 && i < args.length) {
          const a = args[i++];
          if (next === 's') s += typeof a === 'string' ? a : show(a, 1, false);
          else if (next === 'd' || next === 'i') s += Str(next === 'i' ? Num.parseInt(Str(a)) : Num(a));
          else if (next === 'f') s += Str(Num.parseFloat(Str(a)));
          else if (next === 'j') s += stringify(a);
          else if (next === 'c') s += '';
          else s += show(a, 0, true);
          k++;
        } else s += ch;
      }
      out = s;
    } else if (args.length) {
      out = show(first, 0, false);
      i = 1;
    }
    for (; i < args.length; i++) out += ' ' + show(args[i], 0, false);
    return out;
  }

  const consoleObject: Record<string, (...args: unknown[]) => void> = {};
  for (const level of ['log', 'info', 'debug', 'warn', 'error']) {
    consoleObject[level] = function () {
      // eslint-disable-next-line prefer-rest-params
      call('log', level === 'log' ? 'info' : level, clip(format(arguments), maxLogChars));
    };
  }

  /** A Node-like Timeout: ref/unref/hasRef/refresh/close and a numeric primitive, as code written for Node expects. */
  function timerHandle(id: number, refd: { v: boolean }) {
    const t = {
      ref() {
        refd.v = true;
        call('ref', id, 1);
        return t;
      },
      unref() {
        refd.v = false;
        call('ref', id, 0);
        return t;
      },
      hasRef() {
        return refd.v;
      },
      refresh() {
        call('refresh', id);
        return t;
      },
      close() {
        clear(t);
        return t;
      },
    };
    defineProperty(t, toPrimitive, { value: () => id });
    defineProperty(t, '__whaleTimer', { value: id });
    return t;
  }
  function schedule(fn: unknown, ms: unknown, args: unknown[], repeat: boolean, immediate: boolean) {
    if (typeof fn !== 'function') throw new G.TypeError('The "callback" argument must be of type function. Received ' + show(fn, 2, true));
    const id = ++seq;
    apply(mapSet, timers, [id, { fn, args, repeat }]);
    call('timer', id, immediate ? -1 : Num(ms), repeat ? 1 : 0);
    return timerHandle(id, { v: true });
  }
  function clear(handle: unknown): void {
    const id = typeof handle === 'number' ? handle : handle && typeof handle === 'object' ? (handle as { __whaleTimer?: unknown }).__whaleTimer : undefined;
    if (typeof id !== 'number' || !apply(mapDelete, timers, [id])) return;
    call('clear', id);
  }
  function restOf(a: ArrayLike<unknown>, from: number): unknown[] {
    const out: unknown[] = [];
    for (let i = from; i < a.length; i++) out[out.length] = a[i];
    return out;
  }

  const globals: Record<string, unknown> = {
    console: consoleObject,
    setTimeout(fn: unknown, ms?: unknown) {
      // eslint-disable-next-line prefer-rest-params
      return schedule(fn, ms, restOf(arguments, 2), false, false);
    },
    setInterval(fn: unknown, ms?: unknown) {
      // eslint-disable-next-line prefer-rest-params
      return schedule(fn, ms, restOf(arguments, 2), true, false);
    },
    setImmediate(fn: unknown) {
      // eslint-disable-next-line prefer-rest-params
      return schedule(fn, 0, restOf(arguments, 1), false, true);
    },
    clearTimeout: clear,
    clearInterval: clear,
    clearImmediate: clear,
    queueMicrotask(fn: unknown) {
      if (typeof fn !== 'function') throw new G.TypeError('The "callback" argument must be of type function. Received ' + show(fn, 2, true));
      apply(promThen, apply(promResolve, Prom, []), [
        () => {
          try {
            (fn as () => void)();
          } catch (e) {
            if (!over) fail('uncaught exception: ', e);
          }
        },
      ]);
    },
  };
  for (const name of keys(globals)) defineProperty(G, name, { value: globals[name], writable: true, configurable: true, enumerable: false });
  // A FinalizationRegistry's cleanup runs as a task of V8's own, outside any call the host makes into
  // this context: after the rollout is over, in the middle of a later one, with the host's frames
  // around it. Nothing else in the language schedules code that way (promise jobs wait in this
  // context's own queue, which only the host drains).
  delete (G as { FinalizationRegistry?: unknown }).FinalizationRegistry;
  // The same for WebAssembly's asynchronous compiles (V8 settles them from a task of its own, which
  // looks up `then` on the result: candidate code, outside the host's calls) and for the streaming
  // ones, which Node answers from its own realm; and for Atomics.waitAsync. Candidates that name
  // WebAssembly or Atomics run in a thread (bundle.ts); this is for those that reach them by name.
  const wasm = (G as unknown as Record<string, Record<string, unknown> | undefined>).WebAssembly;
  if (wasm) for (const name of ['compile', 'instantiate', 'compileStreaming', 'instantiateStreaming']) delete wasm[name];
  const atomics = (G as unknown as Record<string, Record<string, unknown> | undefined>).Atomics;
  if (atomics) delete atomics.waitAsync;

  function request(kind: string, name: string, body: string): Promise<string> {
    return new Prom<string>((resolve, reject) => {
      const id = ++seq;
      apply(mapSet, pending, [id, { resolve, reject }]);
      call('request', id, kind, name, body);
    });
  }
  /** The gateway's answer, read as the one-rollout bootstrap reads it (same messages, same status field). */
  async function gateway(kind: string, name: string, payload: unknown): Promise<unknown> {
    const raw = await request(kind, name, stringify(payload));
    const cut = raw.indexOf('\n');
    const status = Num(apply(strSlice, raw, [0, cut]));
    const text: string = apply(strSlice, raw, [cut + 1]);
    let parsed: unknown;
    try {
      parsed = parse(text);
    } catch {
      throw new Err('gateway answered ' + status + ' with non-JSON: ' + clip(text, 200));
    }
    if (status >= 400) {
      const msg = (parsed as { error?: { message?: string } }).error?.message ?? text;
      const err = new Err('gateway: ' + msg) as Error & { status?: number };
      err.status = status;
      throw err;
    }
    return parsed;
  }

  function safeData(data: unknown): [string, string] | undefined {
    if (data === undefined) return undefined;
    try {
      const text = stringify(data);
      if (text === undefined) return ['s', Str(data)];
      return text.length > maxLogChars ? ['s', clip(text, maxLogChars)] : ['j', text];
    } catch {
      return ['s', clip(Str(data), maxLogChars)];
    }
  }

  function pickDefinition(exp: Record<string, unknown>): { run: (task: unknown, ctx: unknown) => unknown } | undefined {
    const def = exp ? exp.default : undefined;
    const list = [def, def ? (def as Record<string, unknown>).default : undefined, exp ? exp.harness : undefined, exp];
    for (let i = 0; i < list.length; i++) {
      const c = list[i] as { run?: unknown } | undefined;
      if (c && typeof c.run === 'function') return c as { run: (task: unknown, ctx: unknown) => unknown };
    }
    return undefined;
  }

  async function begin(candidate: (module: { exports: unknown }, exports: unknown) => void, runJson: string): Promise<void> {
    const run = parse(runJson) as { task: unknown; knobs: unknown; prompts: unknown; tools: unknown; limits: unknown };
    const module: { exports: unknown } = { exports: {} };
    candidate(module, module.exports);
    const def = pickDefinition(module.exports as Record<string, unknown>);
    if (!def) {
      call('fail', 'the entry module exports no harness: export default defineHarness({ run(task, ctx) { … } })', '');
      return;
    }
    call('ready');
    const ctx = {
      knobs: run.knobs,
      prompts: run.prompts,
      tools: run.tools,
      limits: run.limits,
      async chat(messages: unknown, opts: Record<string, unknown> = {}) {
        const body = (await gateway('chat', '', { messages, ...opts })) as {
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
      async tool(name: string, args: Record<string, unknown>) {
        const body = (await gateway('tool', Str(name), args ?? {})) as { observation: string };
        return body.observation;
      },
      log(message: unknown, data?: unknown) {
        const d = safeData(data);
        call('data', clip(Str(message), maxLogChars), d ? d[0] : '', d ? d[1] : '');
      },
    };
    const result = (await def.run(run.task, ctx)) as { answer?: unknown } | null | undefined;
    const answer = result ? result.answer : undefined;
    if (answer !== null && typeof answer !== 'string') {
      let shown: string;
      try {
        shown = stringify(result) ?? Str(result);
      } catch {
        shown = Str(result);
      }
      call('fail', 'run() must return { answer: string | null }, got ' + clip(shown, 200), '');
      return;
    }
    call('result', answer === null ? 0 : 1, answer === null ? '' : answer);
  }

  return freeze({
    start(candidate, runJson) {
      apply(promThen, begin(candidate, runJson), [
        undefined,
        (e: unknown) => {
          if (!over) fail('', e);
        },
      ]);
    },
    dispatch(kind, id, status, text) {
      if (over) return;
      try {
        if (kind === 'reply') {
          const p = apply(mapGet, pending, [id]);
          if (!p) return;
          apply(mapDelete, pending, [id]);
          if (status === -1) p.reject(new Err(Str(text)));
          else p.resolve(Str(status) + '\n' + Str(text));
        } else if (kind === 'timer') {
          const t = apply(mapGet, timers, [id]);
          if (!t) return;
          if (!t.repeat) apply(mapDelete, timers, [id]);
          apply(t.fn as () => void, undefined, t.args);
        } else if (kind === 'over') over = true;
      } catch (e) {
        if (!over) fail('uncaught exception: ', e);
      }
    },
    describe(value) {
      return stringify(describe(value));
    },
  } satisfies PreludeApi);
}

/** The prelude as the host runs it in each context: compiled once, its value the `contextPrelude` function of that context's realm. */
export function preludeScript(): vm.Script {
  // `__name`: what esbuild's keepNames (tsx, when this runs from source) wraps named functions in.
  return new vm.Script(`(() => { const __name = (f) => f; return (${String(contextPrelude)}); })()`, { filename: 'whale-prelude.js' });
}

/**
 * A rollout's fresh realm. Its microtasks run only when the host enters it (`afterEvaluate`), and it
 * keeps eval, which the host's own realm runs without (planNodeContextHost).
 */
export function newRolloutContext(): vm.Context {
  return vm.createContext(Object.create(null) as object, { microtaskMode: 'afterEvaluate', codeGeneration: { strings: true, wasm: true } });
}
