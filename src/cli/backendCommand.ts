/**
 * `whale backend …`: probe a backend, and launch / follow / stop one as a Ray job.
 *
 *   whale backend probe [--config whale.config.json]
 *   whale backend connect [URL] [--kind embedded|openai-compatible|tinker|split] [--model M] [--trainer URL] [--adapter-dir DIR] [--base-model M] [--tokenizer T] [--api-key-env NAME] [--lora-rank R] [--config F] [--dry-run]
 *   whale backend launch --ray http://head:8265 [--template embedded|vllm|skyrl-tinker] [--model M] [--port 8000] [--gpus N] [--node-modules DIR] [--detach]
 *   whale backend status --ray URL --job ID
 *   whale backend logs --ray URL --job ID
 *   whale backend stop --ray URL --job ID
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { writeFileAtomic } from '../core/atomic.js';
import { setConfigSection } from '../core/configEdit.js';
import { CONNECT_KINDS, connectBackend, type ConnectKind } from '../policy/connect.js';
import { InputError } from '../core/errors.js';
import { createBackend } from '../policy/index.js';
import { RayJobsClient } from '../policy/ray/rayJobs.js';
import { TEMPLATES, launchTemplate, type TemplateName } from '../policy/ray/templates.js';
import { resourcesDir } from '../core/resources.js';
import type { Values } from './command.js';
import { intFlag, resolveProject } from './project.js';

const flag = (values: Record<string, string | boolean | undefined>, name: string): string | undefined =>
  typeof values[name] === 'string' ? (values[name] as string) : undefined;

function need(values: Record<string, string | boolean | undefined>, name: string, why: string): string {
  const v = flag(values, name);
  if (!v) throw new InputError({ file: '(command line)', field: `--${name}` }, why);
  return v;
}

export async function run(values: Values, positionals: string[]): Promise<number> {
  const sub = positionals[0];
  if (sub === 'probe') {
    const project = resolveProject(values);
    const backend = await createBackend(project.config.backend, { storeDir: project.storeDir });
    try {
      const caps = await backend.capabilities();
      console.log(JSON.stringify({ kind: backend.kind, version: backend.currentVersion(), capabilities: caps }, null, 2));
    } finally {
      await backend.close();
    }
    return 0;
  }
  if (sub === 'connect') return connect(values, positionals[1]);
  const ray = need(values, 'ray', 'the Ray dashboard URL, e.g. http://127.0.0.1:8265');
  const client = new RayJobsClient(ray);
  if (sub === 'launch') {
    const name = (flag(values, 'template') ?? 'embedded') as TemplateName;
    if (!TEMPLATES.includes(name))
      throw new InputError({ file: '(command line)', field: '--template' }, `unknown template '${name}' (known: ${TEMPLATES.join(', ')})`);
    const port = intFlag(values, 'port') ?? 8000;
    const nodeModules = flag(values, 'node-modules');
    const t = launchTemplate(name, {
      port,
      projectDir: resolve(resourcesDir(), '..'),
      nodeModules: nodeModules ? resolve(nodeModules) : undefined,
      model: flag(values, 'model'),
      gpus: intFlag(values, 'gpus'),
    });
    const submissionId = `whale-${name}-${Date.now().toString(36)}`;
    const { workingDirUri } = await client.submit({
      entrypoint: t.entrypoint,
      submissionId,
      workingDir: t.workingDir,
      exclude: t.exclude,
      envVars: t.envVars,
      numCpus: t.numCpus,
      numGpus: t.numGpus,
      metadata: { template: name },
    });
    console.error(`whale backend: submitted Ray job ${submissionId}${workingDirUri ? ` (working_dir ${workingDirUri})` : ''}`);
    if (values.detach) {
      console.log(JSON.stringify({ job: submissionId }));
      return 0;
    }
    const m = await client.waitForLog(submissionId, t.ready, { onLog: (text) => process.stderr.write(text) });
    const host = new URL(ray).hostname;
    const readyPort = Number(m.slice(1).find((x) => x !== undefined) ?? port);
    console.log(JSON.stringify({ job: submissionId, backend: t.backendConfig(host, readyPort) }));
    return 0;
  }
  const job = need(values, 'job', 'the Ray submission id (printed by whale backend launch)');
  if (sub === 'status') {
    console.log(JSON.stringify(await client.status(job)));
    return 0;
  }
  if (sub === 'logs') {
    process.stdout.write(await client.logs(job));
    return 0;
  }
  if (sub === 'stop') {
    const stopped = await client.stop(job);
    console.log(stopped ? `stopped ${job}` : `${job} was not running`);
    return 0;
  }
  throw new InputError({ file: '(command line)', field: 'subcommand' }, `expected probe, launch, status, logs or stop, got '${sub ?? ''}'`);
}

/**
 * Probes the backend, prints what it detected, and writes the `backend` section of the config with
 * a minimal text edit (comments and formatting kept). Prints one JSON line: {backend, detected, configFile}.
 */
async function connect(values: Record<string, string | boolean | undefined>, url: string | undefined): Promise<number> {
  const kind = (flag(values, 'kind') ?? (url ? 'openai-compatible' : 'embedded')) as ConnectKind;
  if (!CONNECT_KINDS.includes(kind))
    throw new InputError({ file: '(command line)', field: '--kind' }, `unknown kind '${kind}' (known: ${CONNECT_KINDS.join(', ')})`);
  const apiKeyEnv = flag(values, 'api-key-env');
  if (apiKeyEnv && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(apiKeyEnv))
    throw new InputError(
      { file: '(command line)', field: '--api-key-env' },
      `'${apiKeyEnv}' is not an environment variable name (give the NAME of the variable that holds the key, never the key)`,
    );
  const r = await connectBackend({
    kind,
    url,
    model: flag(values, 'model'),
    trainerUrl: flag(values, 'trainer'),
    adapterDir: flag(values, 'adapter-dir'),
    baseModel: flag(values, 'base-model'),
    tokenizer: flag(values, 'tokenizer'),
    apiKeyEnv,
    loraRank: intFlag(values, 'lora-rank'),
  });
  for (const line of r.detected.lines) console.error(`whale backend connect: ${line}`);
  const configFile = resolve(flag(values, 'config') ?? 'whale.config.json');
  if (!values['dry-run']) {
    if (!existsSync(configFile)) throw new InputError({ file: configFile }, 'no such config file (create a project with `whale init` first, or pass --config)');
    writeFileAtomic(configFile, setConfigSection(readFileSync(configFile, 'utf8'), configFile, 'backend', r.backend));
    console.error(`whale backend connect: wrote the backend section of ${configFile}`);
  }
  console.log(JSON.stringify({ backend: r.backend, detected: r.detected, configFile: values['dry-run'] ? null : configFile }));
  return 0;
}
