/**
 * The Ray Jobs REST API (dashboard, port 8265 by default; REFERENCE.md §4): upload a working
 * directory as a package, submit a job, follow its status and logs, stop it. Trailing slashes are
 * kept where Ray's routes have them.
 *
 * node:http, not fetch: Ray's dashboard refuses POST/PUT/DELETE that look like browser traffic, and
 * fetch always sends a `Sec-Fetch-Mode` header that it counts as such. Behind HTTPS_PROXY/HTTP_PROXY
 * (core/proxy.ts; NO_PROXY and loopback go direct) requests go through undici's `request` — not its
 * fetch, so still no browser headers — with the same proxy agent the engine's fetch uses.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Dispatcher } from 'undici';
import { proxyFromEnv, type ProxySettings } from '../../core/proxy.js';
import { BackendHttpError } from '../remote/http.js';
import { listFiles, packageName, zip } from './zipDir.js';

export type RayJobStatus = 'PENDING' | 'RUNNING' | 'STOPPED' | 'SUCCEEDED' | 'FAILED';

export interface RayJobInfo {
  submission_id: string;
  status: RayJobStatus;
  message?: string | null;
  entrypoint?: string;
  metadata?: Record<string, string> | null;
}

export interface SubmitRequest {
  entrypoint: string;
  submissionId?: string;
  workingDir?: string;
  /** Path segments left out of the uploaded working directory. */
  exclude?: string[];
  envVars?: Record<string, string>;
  metadata?: Record<string, string>;
  numCpus?: number;
  numGpus?: number;
}

export class RayJobsClient {
  readonly baseUrl: string;
  private readonly timeoutMs: number;

  private readonly proxy: ProxySettings | undefined;
  private dispatcher: Dispatcher | undefined;

  constructor(dashboardUrl: string, opts: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}) {
    this.baseUrl = dashboardUrl.replace(/\/+$/, '');
    this.timeoutMs = opts.timeoutMs ?? 60_000;
    this.proxy = proxyFromEnv(opts.env);
  }

  /** One exchange through the environment's proxy agent (which itself sends NO_PROXY hosts direct). */
  private async viaProxy(method: string, url: URL, headers: Record<string, string>, data: Buffer | undefined, timeoutMs: number) {
    const { request, EnvHttpProxyAgent } = await import('undici');
    const p = this.proxy!;
    this.dispatcher ??= new EnvHttpProxyAgent({ httpProxy: p.httpProxy, httpsProxy: p.httpsProxy, noProxy: p.noProxy });
    const r = await request(url, {
      method: method as Dispatcher.HttpMethod,
      headers,
      body: data,
      dispatcher: this.dispatcher,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    return { status: r.statusCode, text: await r.body.text() };
  }

  /** One request; connection failures are retried a few times (a dashboard restarting). */
  private async send(method: string, path: string, body?: Buffer | object, timeoutMs = this.timeoutMs): Promise<{ status: number; text: string }> {
    const data = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'whale' };
    if (data) headers['content-type'] = Buffer.isBuffer(body) ? 'application/octet-stream' : 'application/json';
    if (data) headers['content-length'] = String(data.length);
    for (let attempt = 1; ; attempt++) {
      try {
        const url = new URL(`${this.baseUrl}${path}`);
        if (this.proxy) return await this.viaProxy(method, url, headers, data, timeoutMs);
        return await new Promise((resolve, reject) => {
          const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, { method, headers, timeout: timeoutMs }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
            res.on('error', reject);
          });
          req.on('timeout', () => req.destroy(new Error(`no reply within ${timeoutMs} ms`)));
          req.on('error', reject);
          req.end(data);
        });
      } catch (e) {
        if (attempt >= 4) throw new Error(`${method} ${this.baseUrl}${path}: ${(e as Error).message} (the Ray dashboard is unreachable)`);
        await new Promise((r) => setTimeout(r, 500 * 2 ** attempt));
      }
    }
  }

  private async json(method: string, path: string, body?: object): Promise<unknown> {
    const r = await this.send(method, path, body);
    let j: unknown;
    try {
      j = r.text ? JSON.parse(r.text) : undefined;
    } catch {
      j = undefined;
    }
    if (r.status < 200 || r.status >= 300)
      throw new BackendHttpError(r.status, `${method} ${this.baseUrl}${path}: HTTP ${r.status}: ${r.text.slice(0, 500)}`, path, j);
    return j;
  }

  /** Zips `dir` and PUTs it under /api/packages/gcs/ unless the cluster has it; answers the gcs:// URI. */
  async uploadWorkingDir(dir: string, exclude: readonly string[] = []): Promise<{ uri: string; bytes: number; files: number; uploaded: boolean }> {
    const entries = listFiles(dir, exclude);
    if (entries.length === 0) throw new Error(`the working directory ${dir} has no files to upload`);
    const name = packageName(entries);
    const path = `/api/packages/gcs/${name}`;
    const exists = await this.send('GET', path);
    const uri = `gcs://${name}`;
    if (exists.status === 200) return { uri, bytes: 0, files: entries.length, uploaded: false };
    const body = zip(entries);
    const res = await this.send('PUT', path, body, 600_000);
    if (res.status < 200 || res.status >= 300) throw new BackendHttpError(res.status, `PUT ${path}: HTTP ${res.status}: ${res.text.slice(0, 300)}`, path);
    return { uri, bytes: body.length, files: entries.length, uploaded: true };
  }

  async submit(r: SubmitRequest): Promise<{ submissionId: string; workingDirUri?: string }> {
    const runtimeEnv: Record<string, unknown> = {};
    let workingDirUri: string | undefined;
    if (r.workingDir) {
      workingDirUri = (await this.uploadWorkingDir(r.workingDir, r.exclude)).uri;
      runtimeEnv.working_dir = workingDirUri;
    }
    if (r.envVars && Object.keys(r.envVars).length) runtimeEnv.env_vars = r.envVars;
    const body = {
      entrypoint: r.entrypoint,
      ...(r.submissionId ? { submission_id: r.submissionId } : {}),
      runtime_env: runtimeEnv,
      metadata: { launched_by: 'whale', ...r.metadata },
      ...(r.numCpus !== undefined ? { entrypoint_num_cpus: r.numCpus } : {}),
      ...(r.numGpus !== undefined ? { entrypoint_num_gpus: r.numGpus } : {}),
    };
    const res = (await this.json('POST', '/api/jobs/', body)) as { submission_id?: string; job_id?: string };
    const id = res.submission_id ?? res.job_id;
    if (!id) throw new Error(`Ray answered no submission_id: ${JSON.stringify(res)}`);
    return { submissionId: id, workingDirUri };
  }

  async status(id: string): Promise<RayJobInfo> {
    return (await this.json('GET', `/api/jobs/${encodeURIComponent(id)}`)) as RayJobInfo;
  }

  async logs(id: string): Promise<string> {
    const r = (await this.json('GET', `/api/jobs/${encodeURIComponent(id)}/logs`)) as { logs?: string };
    return r.logs ?? '';
  }

  async stop(id: string): Promise<boolean> {
    const r = (await this.json('POST', `/api/jobs/${encodeURIComponent(id)}/stop`, {})) as { stopped?: boolean };
    return r.stopped === true;
  }

  async delete(id: string): Promise<boolean> {
    const r = (await this.json('DELETE', `/api/jobs/${encodeURIComponent(id)}`)) as { deleted?: boolean };
    return r.deleted === true;
  }

  /**
   * Follows a job: new log text goes to `onLog`; resolves with the first match of `ready` in the
   * logs (the backend's URL), or rejects when the job ends first or `timeoutMs` passes.
   */
  async waitForLog(id: string, ready: RegExp, opts: { onLog?: (text: string) => void; timeoutMs?: number; pollMs?: number } = {}): Promise<RegExpExecArray> {
    const end = Date.now() + (opts.timeoutMs ?? 600_000);
    let shown = 0;
    for (;;) {
      const logs = await this.logs(id);
      if (logs.length > shown) {
        opts.onLog?.(logs.slice(shown));
        shown = logs.length;
      }
      const m = ready.exec(logs);
      if (m) return m;
      const s = await this.status(id);
      if (s.status === 'FAILED' || s.status === 'STOPPED' || s.status === 'SUCCEEDED') {
        throw new Error(`Ray job ${id} ended (${s.status}${s.message ? `: ${s.message}` : ''}) before it was ready; its logs end:\n${logs.slice(-2000)}`);
      }
      if (Date.now() > end) throw new Error(`Ray job ${id} was not ready within ${Math.round((opts.timeoutMs ?? 600_000) / 1000)} s (status ${s.status})`);
      await new Promise((r) => setTimeout(r, opts.pollMs ?? 1_000));
    }
  }
}
