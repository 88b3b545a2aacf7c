/**
 * One POST to the recording gateway, as a harness process makes it: the rollout's bearer token, the
 * gateway's unix socket (or loopback port), and the raw status and body back. How the body is read
 * (JSON, the gateway's error message) is the caller's: the one-rollout bootstrap reads it in its own
 * realm, a context host hands it to the rollout's context (contextPrelude.ts), which reads it there.
 */
import http from 'node:http';
import type { RunMessage } from '../protocol.js';

export interface GatewayReply {
  status: number;
  text: string;
}

export async function gatewayPost(gateway: RunMessage['gateway'], url: string, payload: string, agent: http.Agent): Promise<GatewayReply> {
  try {
    return await post(gateway, url, payload, agent);
  } catch (e) {
    // A kept-alive connection the gateway closed as it was reused (its idle timeout, the classic
    // keep-alive race): the request never reached it, so it is sent once more on a new connection.
    // Any other failure is the caller's.
    if (!(e instanceof StaleSocket)) throw e;
    return post(gateway, url, payload, agent);
  }
}

class StaleSocket extends Error {}

function post(gateway: RunMessage['gateway'], url: string, payload: string, agent: http.Agent): Promise<GatewayReply> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        ...(gateway.socketPath ? { socketPath: gateway.socketPath } : { host: u.hostname, port: Number(u.port) }),
        path: u.pathname,
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), authorization: `Bearer ${gateway.token}` },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 500, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', (e: NodeJS.ErrnoException) => {
      const stale = req.reusedSocket && (e.code === 'ECONNRESET' || e.code === 'EPIPE');
      reject(stale ? new StaleSocket(e.message) : e);
    });
    req.end(payload);
  });
}
