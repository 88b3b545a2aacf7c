/**
 * In-process network guard for Node harnesses, installed by the bootstrap BEFORE the candidate's
 * code loads. Node 20's permission model does not restrict the network, so this replaces the
 * JavaScript entry points through which Node reaches it, letting through only the gateway's unix
 * socket (or its loopback host:port when no socket is used).
 *
 * It is a guard rail, not a wall: it lives in the same realm as the candidate, so code that finds
 * an unpatched path into Node's internals can get round it. Where Linux allows, the runtime also
 * puts the process in an empty network namespace (see SANDBOX.md), which no JavaScript can undo.
 */
import dgram from 'node:dgram';
import dns from 'node:dns';
import net from 'node:net';

export interface GuardAllow {
  socketPath?: string;
  host?: string;
  port?: number;
}

export class SandboxDenied extends Error {
  readonly code = 'ERR_WHALE_SANDBOX_DENIED';
  constructor(what: string) {
    super(`denied by the WHALE sandbox: ${what} (only the gateway is reachable; use ctx.chat / ctx.tool)`);
  }
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '::ffff:127.0.0.1']);

/** The destination of a Socket#connect call, in any of the argument shapes Node accepts. */
function destination(args: unknown[]): { path?: string; host?: string; port?: number } {
  let first = args[0];
  // net.connect() passes an internal "normalized" array [options, callback].
  if (Array.isArray(first)) first = first[0];
  if (first && typeof first === 'object') {
    const o = first as { path?: unknown; host?: unknown; port?: unknown };
    if (typeof o.path === 'string') return { path: o.path };
    return { host: typeof o.host === 'string' ? o.host : 'localhost', port: Number(o.port) };
  }
  if (typeof first === 'string' && !/^\d+$/.test(first)) return { path: first };
  return { host: typeof args[1] === 'string' ? args[1] : 'localhost', port: Number(first) };
}

function allowed(d: { path?: string; host?: string; port?: number }, allow: GuardAllow): boolean {
  if (d.path !== undefined) return allow.socketPath !== undefined && d.path === allow.socketPath;
  return allow.port !== undefined && d.port === allow.port && d.host !== undefined && LOOPBACK.has(d.host);
}

function deny(what: string): () => never {
  return () => {
    throw new SandboxDenied(what);
  };
}

function replaceAll(target: Record<string, unknown>, label: string): void {
  for (const key of Object.keys(target)) {
    if (typeof target[key] === 'function' && key !== 'Resolver' && !/^[A-Z_]+$/.test(key)) {
      try {
        target[key] = deny(`${label}.${key}`);
      } catch {
        /* non-writable: nothing to do */
      }
    }
  }
}

export function installNetworkGuard(allow: GuardAllow): void {
  const SocketProto = net.Socket.prototype as unknown as { connect: (...a: unknown[]) => unknown };
  const realConnect = SocketProto.connect;
  // Socket#connect is the choke point of net, tls, http(s), http2 and fetch (undici).
  SocketProto.connect = function guardedConnect(this: unknown, ...args: unknown[]) {
    const d = destination(args);
    if (!allowed(d, allow)) throw new SandboxDenied(`connect to ${d.path ?? `${d.host}:${d.port}`}`);
    return realConnect.apply(this, args);
  };
  (net.Server.prototype as unknown as { listen: unknown }).listen = deny('listening on a socket');

  (dgram as unknown as { createSocket: unknown }).createSocket = deny('UDP sockets');
  const dgramProto = dgram.Socket.prototype as unknown as Record<string, unknown>;
  for (const m of ['bind', 'send', 'connect']) dgramProto[m] = deny(`UDP ${m}`);

  // DNS queries leave the machine even when no connection follows: block them all.
  replaceAll(dns as unknown as Record<string, unknown>, 'dns');
  replaceAll(dns.promises as unknown as Record<string, unknown>, 'dns.promises');
  for (const proto of [dns.Resolver.prototype, dns.promises.Resolver.prototype] as unknown as Record<string, unknown>[]) {
    for (const key of Object.getOwnPropertyNames(proto))
      if (key !== 'constructor' && typeof proto[key] === 'function') proto[key] = deny(`dns.Resolver.${key}`);
  }

  const g = globalThis as unknown as Record<string, unknown>;
  for (const name of ['fetch', 'WebSocket', 'EventSource']) if (name in g) g[name] = deny(name);

  // Signals to other processes (e.g. the engine, our parent) are not covered by the permission model.
  const proc = process as unknown as Record<string, unknown>;
  const ownPid = process.pid;
  const realKill = process.kill.bind(process);
  const realRawKill = proc._kill as (pid: number, sig: number) => number;
  const onlySelf = (pid: unknown) => {
    if (Number(pid) !== ownPid) throw new SandboxDenied(`signal to process ${String(pid)} (only the harness's own process may be signalled)`);
  };
  proc.kill = (pid: number, signal?: string | number) => (onlySelf(pid), realKill(pid, signal));
  // process.kill calls process._kill, which is also reachable directly.
  proc._kill = (pid: number, sig: number) => (onlySelf(pid), realRawKill.call(process, pid, sig));
  proc._debugProcess = deny('process._debugProcess');
}
