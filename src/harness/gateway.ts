/**
 * The recording gateway (agent-lightning's pattern): one HTTP server for all rollouts, each rollout
 * addressed by its own path prefix and bearer token:
 *
 *   POST /rollout/{rid}/v1/chat/completions   OpenAI-compatible, non-streaming, to backend.chat()
 *   GET  /rollout/{rid}/v1/models             the pinned policy version as the only model
 *   GET  /rollout/{rid}/tools                 the domain's tools
 *   POST /rollout/{rid}/tools/{name}          body = arguments object → { observation }
 *
 * It listens on 127.0.0.1 (random port) and, where the platform has them, on a unix socket in a
 * private temp folder: a harness inside an empty network namespace can still reach a socket file,
 * and nothing else (SANDBOX.md). Every rule about what a harness may do lives in RolloutSession.
 */
import { mkdtempSync, rmSync, chmodSync, readdirSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { timingSafeEqual } from 'node:crypto';
import type { GatewayInfo } from './protocol.js';
import { MAX_BODY_BYTES } from './framing.js';
import { processAlive } from '../core/processAlive.js';
import { BodyTooLargeError, readRequestBody } from '../core/requestBody.js';
import { errorReply, type GatewayReply, type RolloutSession } from './rolloutSession.js';

export class Gateway {
  private readonly sessions = new Map<string, RolloutSession>();
  private readonly servers: http.Server[] = [];
  private port = 0;
  private socketDir: string | undefined;
  private socketPath: string | undefined;

  /** Starts listening. `unixSocket: false` serves TCP only. */
  async start(opts: { unixSocket?: boolean } = {}): Promise<void> {
    const tcp = http.createServer((req, res) => void this.handle(req, res));
    await listen(tcp, { host: '127.0.0.1', port: 0 });
    this.servers.push(tcp);
    this.port = (tcp.address() as AddressInfo).port;
    if (opts.unixSocket !== false && process.platform !== 'win32') {
      // A short path under the OS temp folder: socket paths are limited to ~108 bytes.
      sweepDeadGatewayFolders();
      this.socketDir = mkdtempSync(join(tmpdir(), `whale-gw-${process.pid}-`));
      chmodSync(this.socketDir, 0o700);
      const path = join(this.socketDir, 'gw.sock');
      const unix = http.createServer((req, res) => void this.handle(req, res));
      await listen(unix, { path });
      this.servers.push(unix);
      this.socketPath = path;
    }
  }

  get tcpPort(): number {
    return this.port;
  }

  get unixSocketPath(): string | undefined {
    return this.socketPath;
  }

  register(session: RolloutSession, opts: { viaSocket: boolean }): GatewayInfo {
    if (!this.port) throw new Error('gateway not started');
    this.sessions.set(session.id, session);
    const root = `http://127.0.0.1:${this.port}/rollout/${session.id}`;
    return {
      baseUrl: `${root}/v1`,
      toolsUrl: `${root}/tools`,
      token: session.token,
      ...(opts.viaSocket && this.socketPath ? { socketPath: this.socketPath } : {}),
    };
  }

  unregister(session: RolloutSession): void {
    this.sessions.delete(session.id);
    session.close();
  }

  async close(): Promise<void> {
    for (const s of this.sessions.values()) s.close();
    this.sessions.clear();
    await Promise.all(
      this.servers.map(
        (s) =>
          new Promise<void>((resolve) => {
            s.close(() => resolve());
            s.closeAllConnections();
          }),
      ),
    );
    this.servers.length = 0;
    if (this.socketDir) rmSync(this.socketDir, { recursive: true, force: true });
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let reply: GatewayReply;
    try {
      reply = await this.route(req);
    } catch (e) {
      reply = replyToError(e);
    }
    const body = JSON.stringify(reply.body);
    res.writeHead(reply.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  }

  private async route(req: http.IncomingMessage): Promise<GatewayReply> {
    const url = new URL(req.url ?? '/', 'http://gateway');
    const m = /^\/rollout\/([0-9a-f]+)(\/.*)$/.exec(url.pathname);
    if (!m) return errorReply(404, `no such route: ${url.pathname}`);
    const session = this.sessions.get(m[1]);
    if (!session) return errorReply(404, 'unknown or finished rollout');
    if (!tokenMatches(req.headers.authorization, session.token))
      return errorReply(401, 'missing or wrong bearer token for this rollout', 'authentication_error');
    const rest = m[2];
    if (req.method === 'POST' && rest === '/v1/chat/completions') return session.chat(parseBody(await readRequestBody(req, MAX_BODY_BYTES)));
    if (req.method === 'GET' && rest === '/v1/models')
      return { status: 200, body: { object: 'list', data: [{ id: session.policyVersion, object: 'model', owned_by: 'whale' }] } };
    if (req.method === 'GET' && rest === '/tools') return { status: 200, body: { tools: session.toolInfos } };
    const tool = /^\/tools\/([^/]+)$/.exec(rest);
    if (req.method === 'POST' && tool) return session.tool(decodeURIComponent(tool[1]), parseBody(await readRequestBody(req, MAX_BODY_BYTES)));
    return errorReply(404, `no such route: ${req.method} ${rest}`);
  }
}

function listen(server: http.Server, where: { host: string; port: number } | { path: string }): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(where, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function tokenMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer (.+)$/.exec(header ?? '');
  if (!m) return false;
  const a = Buffer.from(m[1]);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

class BodyError extends Error {}

/** A POST body as the gateway reads it: empty is `{}`, anything else must be JSON. */
function parseBody(text: string): unknown {
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new BodyError('request body is not JSON');
  }
}

function replyToError(e: unknown): GatewayReply {
  return e instanceof BodyError || e instanceof BodyTooLargeError
    ? errorReply(400, e.message)
    : errorReply(500, `gateway error: ${e instanceof Error ? e.message : String(e)}`, 'server_error');
}

/**
 * A model or tool call that came on a context host's pipe (protocol.ts, `call`), answered as the
 * gateway answers the same POST: the same body rules, the same session, the same status and body.
 * The pipe is the rollout's own, so there is no token to check.
 */
export async function answerCall(
  session: RolloutSession,
  call: { route: 'chat' | 'tool'; name?: string; body: string },
): Promise<{ status: number; text: string }> {
  let reply: GatewayReply;
  try {
    if (Buffer.byteLength(call.body) > MAX_BODY_BYTES) throw new BodyTooLargeError(MAX_BODY_BYTES);
    const args = parseBody(call.body);
    reply = call.route === 'chat' ? await session.chat(args) : await session.tool(call.name ?? '', args);
  } catch (e) {
    reply = replyToError(e);
  }
  return { status: reply.status, text: JSON.stringify(reply.body) };
}

/**
 * Removes the socket folders of gateways whose engine died without closing them (SIGKILL, a crash):
 * `whale-gw-<pid>-…` of a pid that no longer runs, and folders in the older unnamed form a day old.
 */
export function sweepDeadGatewayFolders(dir = tmpdir()): void {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.startsWith('whale-gw-'));
  } catch {
    return;
  }
  const uid = process.getuid?.();
  for (const name of names) {
    const full = join(dir, name);
    try {
      const st = statSync(full);
      if (uid !== undefined && st.uid !== uid) continue; // another user's
      const pid = /^whale-gw-(\d+)-/.exec(name)?.[1];
      const dead = pid ? !processAlive(Number(pid)) : Date.now() - st.mtimeMs > 86_400_000;
      if (dead) rmSync(full, { recursive: true, force: true });
    } catch {
      // removed meanwhile
    }
  }
}
