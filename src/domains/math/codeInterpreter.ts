/**
 * The Math domain's tool `code_interpreter(code)`: runs Python on a SandboxFusion-compatible service
 * (`POST {url}/run_code`, the API the paper's h0 calls; `whale sandbox serve` is a local one). A
 * service that is down, answers 5xx or reports a SandboxError is an infrastructure failure
 * (InfraError 'tool'): the rollout is not scored. What the code itself did — output, an exception,
 * a timeout — is the observation the model sees.
 */
import { InfraError } from '../../core/errors.js';
import type { ToolSpec } from '../types.js';

/** SandboxFusion's request (`RunCodeRequest`). */
export interface RunCodeRequest {
  code: string;
  language: string;
  run_timeout?: number;
  memory_limit_MB?: number;
  stdin?: string | null;
  files?: Record<string, string | null>;
  fetch_files?: string[];
}

/** SandboxFusion's run statuses: 'Finished' whatever the exit code, or why the run was cut short. */
export type RunStatus = 'Finished' | 'Error' | 'TimeLimitExceeded';

export interface RunResult {
  status: RunStatus;
  execution_time: number | null;
  return_code: number | null;
  stdout: string | null;
  stderr: string | null;
}

/** SandboxFusion's response (`RunCodeResponse`). */
export interface RunCodeResponse {
  status: 'Success' | 'Failed' | 'SandboxError';
  message: string;
  compile_result?: RunResult | null;
  run_result: RunResult | null;
  executor_pod_name?: string | null;
  files: Record<string, string>;
}

export interface CodeInterpreterOptions {
  /** Base URL of the service (…/run_code is appended). */
  url: string;
  /** Seconds the code may run (SandboxFusion's run_timeout). */
  runTimeout: number;
  memoryLimitMb: number;
  /** Characters of stdout/stderr shown to the model. */
  maxOutputChars: number;
  /** Wall-clock limit of the HTTP call itself, beyond run_timeout. */
  requestSlackMs?: number;
}

export async function runCode(o: CodeInterpreterOptions, code: string): Promise<RunCodeResponse> {
  const req: RunCodeRequest = { code, language: 'python', run_timeout: o.runTimeout, memory_limit_MB: o.memoryLimitMb, stdin: '', files: {} };
  const url = `${o.url.replace(/\/+$/, '')}/run_code`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(req),
      signal: AbortSignal.timeout(o.runTimeout * 1000 + (o.requestSlackMs ?? 30_000)),
    });
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    throw new InfraError('tool', `code sandbox at ${url} unreachable: ${cause?.code ?? cause?.message ?? (e as Error).message}`);
  }
  const text = await res.text().catch(() => '');
  if (res.status >= 500) throw new InfraError('tool', `code sandbox at ${url} answered HTTP ${res.status}: ${text.slice(0, 300)}`);
  if (res.status !== 200) throw new Error(`code sandbox refused the request (HTTP ${res.status}): ${text.slice(0, 300)}`);
  let body: RunCodeResponse;
  try {
    body = JSON.parse(text) as RunCodeResponse;
  } catch {
    throw new InfraError('tool', `code sandbox at ${url} answered something that is not JSON: ${text.slice(0, 200)}`);
  }
  if (body.status === 'SandboxError') throw new InfraError('tool', `code sandbox error: ${body.message}`);
  if (!body.run_result) throw new InfraError('tool', `code sandbox answered ${body.status} without a run_result: ${body.message}`);
  return body;
}

function clip(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n)}\n… (${s.length - n} more characters)`;
}

/** What the model reads: stdout, then stderr and the status when the run did not finish cleanly. */
export function formatObservation(r: RunCodeResponse, maxChars: number): string {
  const run = r.run_result as RunResult;
  const out = run.stdout ?? '';
  const err = run.stderr ?? '';
  const parts: string[] = [];
  const clean = run.status === 'Finished' && run.return_code === 0;
  // A clean run shows stdout exactly; otherwise more lines follow, so its trailing newlines go.
  if (out) parts.push(clip(clean ? out : out.replace(/\n+$/, ''), maxChars));
  if (run.status === 'TimeLimitExceeded') parts.push('TimeLimitExceeded: the code ran past its time limit');
  else if (!clean) {
    if (err) parts.push(clip(err.replace(/\n+$/, ''), maxChars));
    parts.push(`(exit code ${run.return_code ?? '?'}${run.status !== 'Finished' ? `, ${run.status}` : ''})`);
  }
  return parts.length ? parts.join('\n') : '(no output: print() what you want to see)';
}

export function codeInterpreterTool(o: CodeInterpreterOptions): ToolSpec {
  return {
    name: 'code_interpreter',
    description: 'Run Python 3 code and see what it prints (stdout; stderr on errors). No network, no files outside a private /tmp.',
    parameters: { type: 'object', properties: { code: { type: 'string', description: 'Python source to run' } }, required: ['code'] },
    async call(args) {
      const code = (args as { code?: unknown } | null)?.code;
      if (typeof code !== 'string' || code.trim() === '') throw new Error('code_interpreter needs {"code": "<python source>"}');
      return formatObservation(await runCode(o, code), o.maxOutputChars);
    },
  };
}
