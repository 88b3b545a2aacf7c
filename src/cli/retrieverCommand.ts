import { InputError } from '../core/errors.js';
import { startRetriever } from '../domains/searchqa/retriever/server.js';
import type { Values } from './command.js';

export async function run(values: Values, positionals: string[]): Promise<number> {
  if (positionals[0] !== 'serve' || positionals.length !== 1)
    throw new InputError({ file: 'command line' }, `expected 'whale retriever serve --corpus FILE', got 'whale retriever ${positionals.join(' ')}'`);
  const corpus = values.corpus as string | undefined;
  if (!corpus)
    throw new InputError(
      { file: 'command line', field: '--corpus' },
      'a corpus is needed: JSON lines {"id", "contents": "\\"Title\\"\\ntext"} (wiki-18 layout)',
    );
  const port = Number(values.port ?? 8000);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new InputError({ file: 'command line', field: '--port' }, `not a port: ${String(values.port)}`);
  const host = (values.host as string | undefined) ?? '127.0.0.1';
  const r = await startRetriever(corpus, { host, port });
  console.log(`retriever: ${r.passages} passages indexed in ${r.indexMs} ms (BM25); POST ${r.url} {"queries": [...], "topk": 3, "return_scores": true}`);
  await new Promise<void>((resolve) => {
    const stop = () => void r.close().then(resolve);
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  return 0;
}
