/**
 * A tool declared as an HTTP endpoint (`domain.data.tools[]`): the harness's arguments are POSTed as
 * JSON — plus private task fields only where the config maps them explicitly — and the response text
 * is the observation. A service that cannot be reached, times out or answers 5xx is an
 * infrastructure failure (InfraError 'tool'); a 4xx answer is shown to the harness as a tool error.
 */
import { InfraError } from '../../core/errors.js';
import type { HttpToolConfig } from '../../core/config.js';
import type { Json, Task, ToolSpec } from '../types.js';

const MAX_BODY = 1_000_000;

export function httpTool(cfg: HttpToolConfig, privateRow: (task: Task) => Record<string, unknown>): ToolSpec {
  return {
    name: cfg.name,
    description: cfg.description,
    parameters: cfg.parameters as { [k: string]: Json },
    async call(args, task) {
      const body: Record<string, unknown> =
        args && typeof args === 'object' && !Array.isArray(args) ? { ...(args as Record<string, unknown>) } : { input: args };
      for (const [arg, field] of Object.entries(cfg.privateArgs ?? {})) body[arg] = privateRow(task)[field] ?? null;
      let res: Response;
      try {
        res = await fetch(cfg.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(cfg.timeoutMs),
        });
      } catch (e) {
        const err = e as Error & { cause?: { code?: string; message?: string } };
        const why = err.name === 'TimeoutError' ? `no answer within ${cfg.timeoutMs} ms` : (err.cause?.code ?? err.cause?.message ?? err.message);
        throw new InfraError('tool', `${cfg.url} cannot be reached (${why})`);
      }
      const text = (await res.text().catch(() => '')).slice(0, MAX_BODY);
      if (res.status >= 500) throw new InfraError('tool', `${cfg.url} answered ${res.status}: ${text.slice(0, 200)}`);
      if (!res.ok) throw new Error(`${cfg.name} rejected the call (${res.status}): ${text.slice(0, 500)}`);
      return text;
    },
  };
}
