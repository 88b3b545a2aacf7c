/**
 * The worker thread that runs a user's domain module, so that its code — tasks(), tools, verify,
 * rules, diagnostics — never blocks the engine's event loop: a verifier that loops forever is ended
 * by terminating this thread (domain/module/moduleDomain.ts), and the run goes on.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';
import { materialise } from '../definition.js';
import { isDefinedDomain } from '../sdk.js';
import { SPLITS, type Domain, type Split, type Task } from '../types.js';
import { serializeError, type CallMessage, type DomainDescriptor, type FromWorker, type WorkerInit } from './protocol.js';

// Stack frames of the user's code then name their own file and line (the bundle carries an inline source map).
process.setSourceMapsEnabled(true);

const init = workerData as WorkerInit;
const port = parentPort!;
const send = (m: FromWorker) => port.postMessage(m);

async function load(): Promise<Domain> {
  let mod: { default?: unknown };
  try {
    mod = (await import(pathToFileURL(init.bundle).href)) as { default?: unknown };
  } catch (e) {
    // A definition defineDomain refused is the user's input, not a crash of their code.
    const x = e as Error & { field?: unknown; detail?: unknown };
    if (x instanceof TypeError && typeof x.field === 'string' && x.message.startsWith('defineDomain: '))
      throw Object.assign(x, { code: 'input', location: { file: init.origin, field: x.field }, detail: typeof x.detail === 'string' ? x.detail : x.message });
    throw e;
  }
  const def = mod.default;
  if (!isDefinedDomain(def)) {
    const err = new Error(
      `the module's default export must be defineDomain({...}) from 'whale/domain' (got ${def === undefined ? 'no default export' : typeof def})`,
    );
    throw Object.assign(err, { code: 'input', location: { file: init.origin, field: 'export default' }, detail: err.message });
  }
  const domain = await materialise(def, init.options, {
    origin: init.origin,
    moduleDir: init.moduleDir,
    baseDir: init.baseDir,
    skipTasks: init.skipTasks,
    ...(init.configFile ? { configFile: init.configFile } : {}),
    ...(init.secret ? { secret: init.secret } : {}),
  });
  const tasks = init.skipTasks ? null : (Object.fromEntries(SPLITS.map((s) => [s, domain.tasks(s)])) as Record<Split, Task[]>);
  const v = def.verify;
  const descriptor: DomainDescriptor = {
    id: domain.id,
    title: domain.title,
    description: domain.description,
    ...(def.summary ? { summary: def.summary } : {}),
    regime: domain.regime,
    tasks,
    tools: domain.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
    limits: domain.limits,
    h0Dir: domain.h0Dir,
    searchSpace: domain.searchSpace,
    hasCheckRules: !!domain.checkRules,
    hasDiagnostics: !!domain.diagnostics,
    ...(typeof v === 'function' ? {} : { verifyCommand: v }),
  };
  send({ type: 'ready', descriptor });
  return domain;
}

async function call(domain: Domain, m: CallMessage): Promise<unknown> {
  switch (m.op) {
    case 'verify':
      return await domain.verify(m.task, m.rollout!);
    case 'checkRules':
      return (await domain.checkRules?.(m.task, m.rollout!)) ?? null;
    case 'diagnostics':
      return await domain.diagnostics?.(m.task, m.rollout as Parameters<NonNullable<Domain['diagnostics']>>[1]);
    case 'gold':
      return (await domain.gold?.(m.task)) ?? null;
    case 'tool': {
      const tool = domain.tools.find((t) => t.name === m.tool);
      if (!tool) throw new Error(`no tool '${m.tool}'`);
      return await tool.call(m.args, m.task);
    }
  }
}

load().then(
  (domain) => {
    port.on('message', (m: CallMessage) => {
      call(domain, m).then(
        (value) => send({ type: 'result', id: m.id, ok: true, value }),
        (e: unknown) => send({ type: 'result', id: m.id, ok: false, error: serializeError(e) }),
      );
    });
  },
  (e: unknown) => send({ type: 'load-error', error: serializeError(e) }),
);
