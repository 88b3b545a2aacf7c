// A forward proxy on 127.0.0.1 that counts what passes through it: plain HTTP requests in absolute
// form (GET http://host:port/path) and CONNECT tunnels (HTTPS). Every host is resolved to 127.0.0.1,
// so a test can name an upstream (llm.whale.test) that only the proxy can reach.
import { createServer, request, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';

export class CountingProxy {
  readonly seen: { method: string; target: string }[] = [];
  private server: Server | undefined;

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? '');
      this.seen.push({ method: req.method ?? '', target: url.href });
      const up = request({ host: '127.0.0.1', port: url.port, path: url.pathname + url.search, method: req.method, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      up.on('error', () => res.writeHead(502).end());
      req.pipe(up);
    });
    this.server.on('connect', (req, client, head) => {
      this.seen.push({ method: 'CONNECT', target: req.url ?? '' });
      const port = Number((req.url ?? '').split(':').pop());
      const up = connect(port, '127.0.0.1', () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        up.write(head);
        up.pipe(client);
        client.pipe(up);
      });
      up.on('error', () => client.destroy());
      client.on('error', () => up.destroy());
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }
}
