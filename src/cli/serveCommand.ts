import { InputError } from '../core/errors.js';
import { createBackend, serveBackend } from '../policy/index.js';
import type { Values } from './command.js';
import { intFlag } from './project.js';

export async function run(values: Values): Promise<number> {
  const kind = typeof values.backend === 'string' ? values.backend : 'embedded';
  if (kind !== 'embedded') throw new InputError({ file: '(command line)', field: '--backend' }, `only 'embedded' can be served by whale itself, got '${kind}'`);
  const backend = await createBackend(
    { kind: 'embedded', model: typeof values.model === 'string' ? values.model : 'base', maxBatch: 64 },
    { storeDir: typeof values.store === 'string' ? values.store : '.whale' },
  );
  const server = await serveBackend(backend, {
    host: typeof values.host === 'string' ? values.host : '127.0.0.1',
    port: intFlag(values, 'port') ?? 8000,
    exportDir: typeof values['export-dir'] === 'string' ? values['export-dir'] : undefined,
  });
  console.log(
    `whale serve: ${backend.kind} policy ${backend.currentVersion()} at ${server.url}/v1 (OpenAI-compatible chat completions) and ${server.url}/api/v1 (Tinker); Ctrl-C stops`,
  );
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await server.close();
  await backend.close();
  return 0;
}
