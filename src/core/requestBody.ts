// The body of a request to one of our HTTP servers (the embedded policy server, the harness gateway,
// the local retriever and code sandbox), read with a size cap so a client cannot fill the memory.
import type { IncomingMessage } from 'node:http';

/** A body ran past its cap. Each server answers it in its own protocol's shape (413, or 400). */
export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`request body over ${limit} bytes`);
  }
}

/** The body's bytes (a protobuf request); past `limit` bytes the request is dropped and BodyTooLargeError thrown. */
export async function readRequestBytes(req: IncomingMessage, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  // Leaving the loop early (the throw) destroys the request stream.
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new BodyTooLargeError(limit);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** The body as UTF-8 text, under the same cap. */
export async function readRequestBody(req: IncomingMessage, limit: number): Promise<string> {
  return (await readRequestBytes(req, limit)).toString('utf8');
}
