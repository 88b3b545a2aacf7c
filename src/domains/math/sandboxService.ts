/**
 * A local stand-in for SandboxFusion: `POST /run_code` runs Python 3 under the same confinement as
 * command harnesses (src/harness/sandbox.ts planCommandWorker: bubblewrap where it works — the
 * system's /usr, a private /tmp, the code's own folder read-only, no network; prlimit CPU and data
 * segment; a scrubbed environment), plus a wall-clock limit, a CPU and resident-memory watchdog and
 * an output cap, and answers in SandboxFusion's shapes. `whale sandbox serve` starts it.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { SandboxLimits } from '../../core/config.js';
import { readRequestBody } from '../../core/requestBody.js';
import { processStart, treeUsage } from '../../harness/procWatch.js';
import { chooseFilesystem, planCommandWorker, sandboxCapabilities, type FilesystemIsolation, type NetworkIsolation } from '../../harness/sandbox.js';
import { classifyFailure } from '../../harness/workerProcess.js';
import type { RunCodeRequest, RunCodeResponse, RunResult } from './codeInterpreter.js';

export interface CodeSandboxOptions {
  /** 'confined' refuses to start without bubblewrap (WHALE_REQUIRE_BWRAP=1 asks for it); 'auto' falls back to 'open'. */
  filesystem?: 'auto' | FilesystemIsolation;
  /** Upper bounds whatever a request asks. */
  maxRunTimeoutS?: number;
  maxMemoryMb?: number;
  /** Bytes of stdout + stderr before the run is stopped. */
  outputBytes?: number;
  python?: string;
}

export interface CodeSandboxMode {
  filesystem: FilesystemIsolation;
  network: NetworkIsolation | 'open';
}

const DEFAULTS = { maxRunTimeoutS: 30, maxMemoryMb: 1024, outputBytes: 1_000_000, python: 'python3' };
const DEFAULT_RUN_TIMEOUT_S = 10;
const DEFAULT_MEMORY_MB = 512;
const WATCH_MS = 50;

/** How runs are confined here: bubblewrap (its own network namespace), else unshare's empty network namespace, else nothing. */
export function codeSandboxMode(requested: 'auto' | FilesystemIsolation = 'auto'): CodeSandboxMode {
  const caps = sandboxCapabilities();
  const filesystem = chooseFilesystem(requested, caps);
  // bwrap unshares the network itself; without it, unshare --net where it works.
  const network = filesystem === 'confined' || caps.netns ? 'namespace' : 'open';
  return { filesystem, network };
}

/** A file name from a request's `files`: relative, inside the run folder. */
function safeName(name: string): string | null {
  const n = path.posix.normalize(name);
  if (n.startsWith('/') || n.startsWith('..') || n === '.' || n.includes('\0')) return null;
  return n;
}

/** Runs one request; never throws for anything the code does (SandboxError is for our own failures). */
export async function runPython(req: RunCodeRequest, opts: CodeSandboxOptions = {}): Promise<RunCodeResponse> {
  const o = { ...DEFAULTS, ...opts };
  const mode = codeSandboxMode(o.filesystem ?? 'auto');
  const timeoutS = Math.min(req.run_timeout && req.run_timeout > 0 ? req.run_timeout : DEFAULT_RUN_TIMEOUT_S, o.maxRunTimeoutS);
  const memoryMb = Math.min(req.memory_limit_MB && req.memory_limit_MB > 0 ? req.memory_limit_MB : DEFAULT_MEMORY_MB, o.maxMemoryMb);
  const dir = await mkdtemp(path.join(tmpdir(), 'whale-code-'));
  try {
    await writeFile(path.join(dir, 'main.py'), req.code);
    for (const [name, b64] of Object.entries(req.files ?? {})) {
      const n = safeName(name);
      if (!n) return sandboxError(`bad file name in files: '${name}'`);
      if (b64 === null) continue;
      await mkdir(path.dirname(path.join(dir, n)), { recursive: true });
      await writeFile(path.join(dir, n), Buffer.from(b64, 'base64'));
    }
    const limits: SandboxLimits = { wallMs: timeoutS * 1000, cpuMs: timeoutS * 1000, memoryMb, outputBytes: o.outputBytes, maxTurns: 1, maxTokens: 1 };
    // -I: no user site, no PYTHON* variables, the script's folder not on sys.path ahead of the stdlib.
    const plan = planCommandWorker({
      dir,
      command: [o.python, '-I', 'main.py'],
      limits,
      network: mode.network === 'open' ? 'guard' : 'namespace',
      filesystem: mode.filesystem,
    });
    const run = await execute(plan.command, plan.args, plan.env, dir, req.stdin ?? '', limits);
    if (run.spawnError) return sandboxError(`cannot start ${o.python}: ${run.spawnError}`);
    const ok = run.result.status === 'Finished' && run.result.return_code === 0;
    return { status: ok ? 'Success' : 'Failed', message: run.message ?? '', compile_result: null, run_result: run.result, executor_pod_name: null, files: {} };
  } catch (e) {
    return sandboxError(e instanceof Error ? e.message : String(e));
  } finally {
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

function sandboxError(message: string): RunCodeResponse {
  return { status: 'SandboxError', message, compile_result: null, run_result: null, executor_pod_name: null, files: {} };
}

interface Execution {
  result: RunResult;
  message?: string;
  spawnError?: string;
}

/** One process group: stdin in, stdout/stderr out (capped), killed at the wall, CPU or memory limit. */
function execute(command: string, args: string[], env: Record<string, string>, cwd: string, stdin: string, limits: SandboxLimits): Promise<Execution> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const child = spawn(command, args, { cwd, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let bytes = 0;
    let stopped: { status: RunResult['status']; message: string } | undefined;
    const seen = new Map<number, number>();
    const kill = () => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
      for (const [p, start] of seen) {
        if (processStart(p) !== start) continue;
        try {
          process.kill(p, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
    };
    const stop = (status: RunResult['status'], message: string) => {
      if (stopped) return;
      stopped = { status, message };
      kill();
    };
    const take = (chunk: Buffer, to: 'out' | 'err') => {
      if (stopped) return;
      const room = limits.outputBytes - bytes;
      bytes += chunk.length;
      const text = chunk.subarray(0, Math.max(0, room)).toString('utf8');
      if (to === 'out') stdout += text;
      else stderr += text;
      if (bytes > limits.outputBytes) stop('Finished', `output limit of ${limits.outputBytes} bytes: the run was stopped`);
    };
    child.stdout.on('data', (c: Buffer) => take(c, 'out'));
    child.stderr.on('data', (c: Buffer) => take(c, 'err'));
    child.stdin.on('error', () => undefined);
    child.stdin.end(stdin);
    const wall = setTimeout(() => stop('TimeLimitExceeded', `wall-clock limit of ${limits.wallMs / 1000} s`), limits.wallMs);
    let cpuMs = 0;
    const watch = setInterval(() => {
      if (child.pid === undefined) return;
      const u = treeUsage(child.pid);
      if (!u) return;
      for (const p of u.procs) seen.set(p.pid, p.start);
      cpuMs = Math.max(cpuMs, u.cpuMs);
      if (u.cpuMs > limits.cpuMs) stop('TimeLimitExceeded', `CPU-time limit of ${limits.cpuMs / 1000} s`);
      else if (u.rssMb > limits.memoryMb) stop('Finished', `memory limit of ${limits.memoryMb} MB: resident ${Math.round(u.rssMb)} MB`);
    }, WATCH_MS);
    const finish = (code: number | null, signal: NodeJS.Signals | null, spawnError?: string) => {
      clearTimeout(wall);
      clearInterval(watch);
      kill(); // anything the code left behind in its group
      const execution_time = (performance.now() - t0) / 1000;
      if (spawnError) return resolve({ result: { status: 'Error', execution_time, return_code: null, stdout, stderr }, spawnError });
      let status: RunResult['status'] = stopped?.status ?? 'Finished';
      let message = stopped?.message;
      if (!stopped && signal === 'SIGXCPU') {
        status = 'TimeLimitExceeded';
        message = `CPU-time limit of ${limits.cpuMs / 1000} s (SIGXCPU)`;
      } else if (!stopped && code !== 0 && classifyFailure(stderr) === 'memory_limit') message = `memory limit of ${limits.memoryMb} MB`;
      // A signal is reported as a negative return code, as Python's subprocess (and SandboxFusion) do.
      const return_code = code ?? (signal ? -(osSignal(signal) ?? 9) : null);
      if (message && status !== 'TimeLimitExceeded') stderr += `${stderr && !stderr.endsWith('\n') ? '\n' : ''}[sandbox] ${message}\n`;
      resolve({ result: { status, execution_time, return_code, stdout, stderr }, ...(message ? { message } : {}) });
    };
    child.on('error', (e) => finish(null, null, e.message));
    child.on('close', (code, signal) => finish(code, signal));
  });
}

function osSignal(s: NodeJS.Signals): number | undefined {
  return ({ SIGKILL: 9, SIGXCPU: 24, SIGSEGV: 11, SIGABRT: 6, SIGTERM: 15 } as Record<string, number>)[s];
}

const MAX_BODY = 16 * 1024 * 1024;

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Checks a request body; returns the request or a reason. */
export function parseRunCodeRequest(raw: unknown): RunCodeRequest | string {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return 'the body must be a JSON object';
  const r = raw as Record<string, unknown>;
  if (typeof r.code !== 'string') return 'code: must be a string';
  if (r.language !== undefined && typeof r.language !== 'string') return 'language: must be a string';
  for (const k of ['run_timeout', 'memory_limit_MB', 'compile_timeout'] as const)
    if (r[k] !== undefined && r[k] !== null && typeof r[k] !== 'number') return `${k}: must be a number`;
  if (r.stdin !== undefined && r.stdin !== null && typeof r.stdin !== 'string') return 'stdin: must be a string';
  if (r.files !== undefined && r.files !== null && (typeof r.files !== 'object' || Array.isArray(r.files)))
    return 'files: must be an object of name -> base64 content';
  return r as unknown as RunCodeRequest;
}

const LANGUAGES = new Set(['python', 'python3']);

export interface CodeSandboxServer {
  server: Server;
  url: string;
  mode: CodeSandboxMode;
  close(): Promise<void>;
}

/** Starts the service (`GET /health`, `POST /run_code`); at most `concurrency` runs at once, the rest queue. */
export async function startCodeSandbox(o: CodeSandboxOptions & { host?: string; port?: number; concurrency?: number } = {}): Promise<CodeSandboxServer> {
  const mode = codeSandboxMode(o.filesystem ?? 'auto');
  let running = 0;
  const waiting: (() => void)[] = [];
  const slot = async () => {
    if (running >= (o.concurrency ?? 4)) await new Promise<void>((r) => waiting.push(r));
    running++;
    return () => {
      running--;
      waiting.shift()?.();
    };
  };
  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://local');
      if (req.method === 'GET' && (url.pathname === '/health' || url.pathname === '/v1/ping')) return send(res, 200, { status: 'ok', ...mode });
      if (url.pathname !== '/run_code')
        return send(res, 404, { detail: `no route ${req.method} ${url.pathname}; this service has POST /run_code and GET /health` });
      if (req.method !== 'POST') return send(res, 405, { detail: 'use POST /run_code' });
      let raw: unknown;
      try {
        raw = JSON.parse(await readRequestBody(req, MAX_BODY));
      } catch (e) {
        return send(res, 400, { detail: `body is not JSON: ${(e as Error).message}` });
      }
      const parsed = parseRunCodeRequest(raw);
      if (typeof parsed === 'string') return send(res, 422, { detail: parsed });
      if (!LANGUAGES.has(parsed.language ?? 'python')) return send(res, 200, sandboxError(`language '${parsed.language}' is not supported here (python only)`));
      const release = await slot();
      try {
        send(res, 200, await runPython(parsed, o));
      } finally {
        release();
      }
    })().catch((e: unknown) => {
      if (!res.headersSent) send(res, 500, { detail: e instanceof Error ? e.message : String(e) });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, o.host ?? '127.0.0.1', () => resolve());
  });
  const addr = server.address() as { address: string; port: number };
  const host = addr.address.includes(':') ? `[${addr.address}]` : addr.address;
  return {
    server,
    url: `http://${host}:${addr.port}`,
    mode,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
