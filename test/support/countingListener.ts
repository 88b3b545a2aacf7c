// A loopback TCP server that counts the connections reaching it: the sandbox tests' proof that a
// harness's socket was refused before it left the process, not after.
import net from 'node:net';

export interface CountingListener {
  port: number;
  connections: () => number;
  close: () => void;
}

export async function countingListener(): Promise<CountingListener> {
  let connections = 0;
  const server = net.createServer((c) => {
    connections++;
    c.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as net.AddressInfo).port, connections: () => connections, close: () => server.close() };
}
