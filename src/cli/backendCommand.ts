/**
 * `whale backend …`: probe a backend, and launch / follow / stop one as a Ray job.
 *
 *   whale backend probe [--config whale.config.json]
 *   whale backend launch --ray http://head:8265 [--template embedded|vllm|skyrl-tinker] [--model M] [--port 8000] [--gpus N] [--node-modules DIR] [--detach]
 *   whale backend status --ray URL --job ID
 *   whale backend logs --ray URL --job ID
 *   whale backend stop --ray URL --job ID
 */
import { resolve } from 'node:path';
import { InputError } from '../core/errors.js';
import { createBackend } from '../policy/index.js';
import { RayJobsClient } from '../policy/ray/rayJobs.js';
import { TEMPLATES, launchTemplate, type TemplateName } from '../policy/ray/templates.js';
import { resourcesDir } from '../core/resources.js';
import type { CommandSpec } from './main.js';
import { intFlag, resolveProject } from './project.js';

const flag = (values: Record<string, string | boolean | undefined>, name: string): string | undefined => (typeof values[name] === 'string' ? (values[name] as string) : undefined);

function need(values: Record<string, string | boolean | undefined>, name: string, why: string): string {
  const v = flag(values, name);
  if (!v) throw new InputError({ file: '(command line)', field: `--${name}` }, why);
  return v;
}

export const backendCommand: CommandSpec = {
  summary: 'probe the configured backend, or launch / follow / stop a backend as a Ray job',
  usage:
    'whale backend probe [--config F] | launch --ray URL [--template embedded|vllm|skyrl-tinker] [--model M] [--port 8000] [--gpus N] [--node-modules DIR] [--detach] | status|logs|stop --ray URL --job ID',
  options: {
    config: { type: 'string' },
    store: { type: 'string' },
    ray: { type: 'string' },
    template: { type: 'string' },
    model: { type: 'string' },
    port: { type: 'string' },
    gpus: { type: 'string' },
    'node-modules': { type: 'string' },
    job: { type: 'string' },
    detach: { type: 'boolean' },
  },
  async run(values, positionals) {
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
    const ray = need(values, 'ray', 'the Ray dashboard URL, e.g. http://127.0.0.1:8265');
    const client = new RayJobsClient(ray);
    if (sub === 'launch') {
      const name = (flag(values, 'template') ?? 'embedded') as TemplateName;
      if (!TEMPLATES.includes(name)) throw new InputError({ file: '(command line)', field: '--template' }, `unknown template '${name}' (known: ${TEMPLATES.join(', ')})`);
      const port = intFlag(values, 'port') ?? 8000;
      const nodeModules = flag(values, 'node-modules');
      const t = launchTemplate(name, { port, projectDir: resolve(resourcesDir(), '..'), nodeModules: nodeModules ? resolve(nodeModules) : undefined, model: flag(values, 'model'), gpus: intFlag(values, 'gpus') });
      const submissionId = `whale-${name}-${Date.now().toString(36)}`;
      const { workingDirUri } = await client.submit({ entrypoint: t.entrypoint, submissionId, workingDir: t.workingDir, exclude: t.exclude, envVars: t.envVars, numCpus: t.numCpus, numGpus: t.numGpus, metadata: { template: name } });
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
  },
};
