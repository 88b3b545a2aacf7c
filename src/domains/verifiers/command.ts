/**
 * A verifier in any language: one process per verdict, the rollout as JSON on stdin, a verdict as
 * JSON on stdout. A process that cannot start, exits non-zero, writes no verdict or overruns its
 * time is an infrastructure failure (InfraError 'verifier'), never a failed task.
 *
 * stdin:  {"task": {"id", "split", "question", "meta", "private"}, "answer": string|null,
 *          "modelCalls": [{"messages", "completion", "finishReason"}], "events": [...]}
 * stdout: {"pass": bool, "score"?: number, "extracted"?: string|null, "reason"?: string}
 *         (the whole output, or its last non-empty line: anything printed before is ignored)
 */
import { spawn } from 'node:child_process';
import { InfraError } from '../../core/errors.js';
import type { Verdict } from '../../core/trajectory.js';
import type { CommandVerifier } from '../sdk.js';
import type { RolloutRecord, Task } from '../types.js';

export const DEFAULT_COMMAND_TIMEOUT_MS = 30_000;
const MAX_OUTPUT = 1_000_000;

export function commandVerifierInput(task: Task, rollout: RolloutRecord): string {
  return JSON.stringify({
    task: { id: task.id, split: task.split, question: task.public.question, meta: task.public.meta ?? {}, private: task.private },
    answer: rollout.finalAnswer,
    modelCalls: rollout.modelCalls.map((c) => ({ messages: c.messages, completion: c.completion, finishReason: c.finishReason })),
    events: rollout.events,
  });
}

/** Reads a verdict out of the command's stdout; throws a plain Error saying what is wrong. */
export function parseVerdictOutput(stdout: string): Verdict {
  const text = stdout.trim();
  if (text === '') throw new Error('wrote nothing on stdout (expected a verdict JSON)');
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    const last =
      text
        .split('\n')
        .filter((l) => l.trim() !== '')
        .pop() ?? '';
    try {
      v = JSON.parse(last);
    } catch {
      throw new Error(`stdout is not a verdict JSON: ${JSON.stringify(last.slice(0, 200))}`);
    }
  }
  const o = v as { pass?: unknown; score?: unknown; extracted?: unknown; reason?: unknown };
  if (!o || typeof o !== 'object' || typeof o.pass !== 'boolean')
    throw new Error(`the verdict needs "pass": true|false (got ${JSON.stringify(v).slice(0, 200)})`);
  if (o.score !== undefined && (typeof o.score !== 'number' || !Number.isFinite(o.score))) throw new Error('the verdict\'s "score" must be a finite number');
  return {
    pass: o.pass,
    score: typeof o.score === 'number' ? o.score : o.pass ? 1 : 0,
    extracted: typeof o.extracted === 'string' ? o.extracted : null,
    reason: typeof o.reason === 'string' && o.reason !== '' ? o.reason : o.pass ? 'correct' : 'incorrect',
  };
}

export function runCommandVerifier(v: CommandVerifier, task: Task, rollout: RolloutRecord, opts: { cwd: string; origin: string }): Promise<Verdict> {
  const timeoutMs = v.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
  const label = `${opts.origin}: verifier command \`${v.command.join(' ')}\` (task '${task.id}')`;
  return new Promise((resolve, reject) => {
    const fail = (msg: string) => reject(new InfraError('verifier', `${label} ${msg}`));
    let child;
    try {
      child = spawn(v.command[0], v.command.slice(1), { cwd: opts.cwd, stdio: ['pipe', 'pipe', 'pipe'], detached: process.platform !== 'win32' });
    } catch (e) {
      fail(`could not start: ${(e as Error).message}`);
      return;
    }
    let stdout = '';
    let stderr = '';
    let done = false;
    const killGroup = () => {
      try {
        if (child.pid !== undefined && process.platform !== 'win32') process.kill(-child.pid, 'SIGKILL');
        else child.kill('SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      if (done) return;
      done = true;
      killGroup();
      fail(`gave no verdict within ${timeoutMs} ms (killed)`);
    }, timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      if (stdout.length > MAX_OUTPUT && !done) {
        done = true;
        clearTimeout(timer);
        killGroup();
        fail(`wrote more than ${MAX_OUTPUT} bytes`);
      }
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr = (stderr + d).slice(-4000);
    });
    child.on('error', (e) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      fail(`could not start: ${e.message}`);
    });
    child.on('close', (code, signal) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      const tail = stderr.trim() ? `; stderr: ${stderr.trim().split('\n').slice(-5).join(' | ')}` : '';
      if (code !== 0) return fail(`exited with ${code ?? signal}${tail}`);
      try {
        resolve(parseVerdictOutput(stdout));
      } catch (e) {
        fail(`${(e as Error).message}${tail}`);
      }
    });
    // A verifier that exits without reading stdin makes the write fail with EPIPE: its exit status decides.
    child.stdin.on('error', () => {});
    child.stdin.end(commandVerifierInput(task, rollout));
  });
}
