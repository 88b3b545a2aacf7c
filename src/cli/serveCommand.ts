import { InputError } from '../core/errors.js';
import { createBackend, serveBackend } from '../policy/index.js';
import type { CommandSpec } from './main.js';
import { intFlag } from './project.js';

export const serveCommand: CommandSpec = {
  summary: 'serve a policy backend over an OpenAI-compatible HTTP API (loopback by default)',
  usage: 'whale serve --backend embedded [--model base] [--port 8000] [--host 127.0.0.1] [--store .whale] [--export-dir DIR]',
  options: {
    backend: { type: 'string' },
    model: { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    store: { type: 'string' },
    // save_weights_for_sampler also writes each saved version to DIR/<version>/ (a sampler server loads it with /v1/load_lora_adapter)
    'export-dir': { type: 'string' },
  },
  async run(values) {
    const kind = typeof values.backend === 'string' ? values.backend : 'embedded';
    if (kind !== 'embedded') throw new InputError({ file: '(command line)', field: '--backend' }, `only 'embedded' can be served by whale itself, got '${kind}'`);
    const backend = await createBackend({ kind: 'embedded', model: typeof values.model === 'string' ? values.model : 'base', maxBatch: 64 }, { storeDir: typeof values.store === 'string' ? values.store : '.whale' });
    const server = await serveBackend(backend, { host: typeof values.host === 'string' ? values.host : '127.0.0.1', port: intFlag(values, 'port') ?? 8000, exportDir: typeof values['export-dir'] === 'string' ? values['export-dir'] : undefined });
    console.log(`whale serve: ${backend.kind} policy ${backend.currentVersion()} at ${server.url}/v1 (OpenAI-compatible chat completions) and ${server.url}/api/v1 (Tinker); Ctrl-C stops`);
    await new Promise<void>((resolve) => {
      const stop = () => resolve();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    await server.close();
    await backend.close();
    return 0;
  },
};
