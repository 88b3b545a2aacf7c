import { InputError } from '../core/errors.js';
import { startCodeSandbox } from '../domains/math/sandboxService.js';
import type { Values } from './command.js';
import { intFlag } from './project.js';

export async function run(values: Values, positionals: string[]): Promise<number> {
  if (positionals[0] !== 'serve' || positionals.length > 1)
    throw new InputError({ file: '(command line)', field: 'sandbox' }, `usage: whale sandbox serve [--port N] [--host H]; got '${positionals.join(' ')}'`);
  const confined = values['require-confinement'] === true || process.env.WHALE_REQUIRE_BWRAP === '1';
  let server;
  try {
    server = await startCodeSandbox({
      host: typeof values.host === 'string' ? values.host : '127.0.0.1',
      port: intFlag(values, 'port') ?? 8080,
      concurrency: intFlag(values, 'concurrency') ?? 4,
      filesystem: confined ? 'confined' : 'auto',
    });
  } catch (e) {
    throw new InputError({ file: '(command line)', field: 'sandbox serve' }, (e as Error).message);
  }
  const { filesystem, network } = server.mode;
  console.log(
    `whale sandbox: SandboxFusion-compatible POST ${server.url}/run_code (python), file system ${filesystem}, network ${network === 'namespace' ? 'none (own namespace)' : 'OPEN'}; Ctrl-C stops`,
  );
  if (filesystem === 'open')
    console.warn('whale sandbox: bubblewrap is not available here: code can read and write whatever this user can (apt-get install bubblewrap)');
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  await server.close();
  return 0;
}
