// Backend commands: check the configured backend, keep API keys in SecretStorage (handed to the
// engine as environment variables, never written to settings, the run store or logs), launch a
// backend as a Ray job and stop it. Long work runs in the `whale` CLI, as everywhere else.
import * as vscode from 'vscode';
import { register, workspaceRoot } from './commandRegistry.js';
import { runEngine } from './engineProcess.js';
import type { BackendHealthMonitor } from './backendHealth.js';
import { backendTrustRefusal, keysForEngine } from './model/backendTrust.js';

const SECRET_NAMES = 'whale.secretNames';
const LAST_JOB = 'whale.lastRayJob';

/** The stored API keys as environment variables, by the names the backend config's apiKeyEnv uses. */
async function secretEnv(context: vscode.ExtensionContext): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  for (const name of context.globalState.get<string[]>(SECRET_NAMES, [])) {
    const v = await context.secrets.get(`whale.apiKey.${name}`);
    if (v) env[name] = v;
  }
  return env;
}

async function storeSecret(context: vscode.ExtensionContext, log: vscode.LogOutputChannel, name: string, key: string): Promise<void> {
  await context.secrets.store(`whale.apiKey.${name}`, key);
  const names = new Set(context.globalState.get<string[]>(SECRET_NAMES, []));
  names.add(name);
  await context.globalState.update(SECRET_NAMES, [...names]);
  log.info(`stored the API key ${name} in SecretStorage`);
}

const ENV_NAME = (v: string) => (/^[A-Z_][A-Z0-9_]*$/.test(v) ? undefined : 'upper-case letters, digits and _');

/** What Connect Backend asks for; passing it as the command's argument skips the prompts (scripts, tests). */
export interface ConnectArgs {
  kind: 'embedded' | 'openai-compatible' | 'tinker' | 'split';
  url?: string;
  trainerUrl?: string;
  adapterDir?: string;
  model?: string;
  apiKeyEnv?: string;
}

async function askConnect(): Promise<ConnectArgs | undefined> {
  const kinds = [
    {
      label: 'openai-compatible',
      backend: 'openai-compatible' as const,
      detail: 'rollouts on vLLM, SGLang, llama.cpp, Ollama, LM Studio or a hosted API (no training: harness-only and eval)',
    },
    { label: 'tinker', backend: 'tinker' as const, detail: "training and sampling over the Tinker protocol (hosted Tinker, SkyRL's server, whale serve)" },
    {
      label: 'split: vLLM + Tinker',
      backend: 'split' as const,
      detail: 'rollouts on vLLM, training on a Tinker server; trained versions loaded into vLLM as LoRA adapters',
    },
    { label: 'embedded', backend: 'embedded' as const, detail: 'the small built-in model, in this machine (no server)' },
  ];
  const pick = await vscode.window.showQuickPick(kinds, { title: 'WHALE: Connect Backend — which kind?' });
  if (!pick) return undefined;
  const kind = pick.backend;
  if (kind === 'embedded') return { kind: 'embedded' };
  const url = await vscode.window.showInputBox({
    title: kind === 'tinker' ? 'Tinker server URL' : 'OpenAI-compatible base URL of the sampler',
    placeHolder: kind === 'tinker' ? 'http://gpu-box:8001' : 'http://gpu-box:8000/v1',
    validateInput: (v) => (/^https?:\/\/\S+$/.test(v) ? undefined : 'an http(s) URL'),
  });
  if (!url) return undefined;
  const out: ConnectArgs = { kind, url };
  if (kind === 'split') {
    out.trainerUrl = await vscode.window.showInputBox({
      title: 'Tinker server URL (training)',
      placeHolder: 'http://gpu-box:8001',
      validateInput: (v) => (/^https?:\/\/\S+$/.test(v) ? undefined : 'an http(s) URL'),
    });
    if (!out.trainerUrl) return undefined;
    out.adapterDir = await vscode.window.showInputBox({
      title: 'Folder where the trainer writes saved versions, as the vLLM server sees it',
      placeHolder: '/shared/whale-adapters',
    });
    if (!out.adapterDir) return undefined;
  }
  const auth = await vscode.window.showQuickPick(['No API key', 'Use an API key (kept in VS Code SecretStorage, never in files)'], {
    title: 'Does the server need an API key?',
  });
  if (!auth) return undefined;
  if (auth !== 'No API key') {
    out.apiKeyEnv = await vscode.window.showInputBox({
      title: 'Name for the key (the config names it in apiKeyEnv; the engine gets it as this environment variable)',
      value: kind === 'tinker' ? 'TINKER_API_KEY' : 'OPENAI_API_KEY',
      validateInput: ENV_NAME,
    });
    if (!out.apiKeyEnv) return undefined;
  }
  return out;
}

export function registerBackendCommands(context: vscode.ExtensionContext, log: vscode.LogOutputChannel, health?: BackendHealthMonitor): void {
  const run = async (title: string, args: string[]) => {
    const env = keysForEngine(vscode.workspace.isTrusted, await secretEnv(context));
    return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `WHALE: ${title}`, cancellable: true }, (progress, token) =>
      runEngine(context.extensionPath, args, workspaceRoot(), log, { token, onLine: (line) => progress.report({ message: line }), env }),
    );
  };
  const command = (id: string, handler: (given?: unknown) => Promise<unknown>) =>
    register(context, log, id, async (given?: unknown) => {
      const refusal = backendTrustRefusal(id, vscode.workspace.isTrusted);
      if (refusal) throw new Error(refusal);
      return handler(given);
    });

  command('whale.backend.checkHealth', async () => {
    const r = await run('checking the backend', ['backend', 'probe', '--config', 'whale.config.json']);
    if (r.code !== 0) throw new Error(`the backend did not answer the probe (exit ${r.code}); see the log`);
    const p = JSON.parse(r.stdout) as { kind: string; version: string; capabilities: { update: string; tokenIds: boolean; logprobs: boolean } };
    const c = p.capabilities;
    vscode.window.showInformationMessage(
      `WHALE backend ${p.kind} is up: policy ${p.version}; training ${c.update}; token ids ${c.tokenIds ? 'yes' : 'no'}; logprobs ${c.logprobs ? 'yes' : 'no'}`,
    );
    await health?.checkNow();
    return p;
  });

  command('whale.backend.setApiKey', async () => {
    const name = await vscode.window.showInputBox({
      title: 'Environment variable the backend config names in apiKeyEnv',
      placeHolder: 'TINKER_API_KEY',
      validateInput: ENV_NAME,
    });
    if (!name) return undefined;
    const key = await vscode.window.showInputBox({ title: `Value of ${name} (kept in VS Code's SecretStorage)`, password: true });
    if (!key) return undefined;
    await storeSecret(context, log, name, key);
    return name;
  });

  command('whale.backend.connect', async (given?: unknown) => {
    const a = given && typeof given === 'object' && 'kind' in given ? (given as ConnectArgs) : await askConnect();
    if (!a) return undefined;
    if (a.apiKeyEnv && !(await context.secrets.get(`whale.apiKey.${a.apiKeyEnv}`)) && !process.env[a.apiKeyEnv]) {
      const key = await vscode.window.showInputBox({ title: `Value of ${a.apiKeyEnv} (kept in VS Code's SecretStorage)`, password: true });
      if (!key) return undefined;
      await storeSecret(context, log, a.apiKeyEnv, key);
    }
    const args = ['backend', 'connect', ...(a.url ? [a.url] : []), '--kind', a.kind, '--config', 'whale.config.json'];
    if (a.trainerUrl) args.push('--trainer', a.trainerUrl);
    if (a.adapterDir) args.push('--adapter-dir', a.adapterDir);
    if (a.model) args.push('--model', a.model);
    if (a.apiKeyEnv) args.push('--api-key-env', a.apiKeyEnv);
    const r = await run(`connecting ${a.kind}${a.url ? ` at ${a.url}` : ''}`, args);
    if (r.code !== 0) throw new Error(`could not connect: ${r.stderr.trim().split('\n').at(-1) ?? `exit ${r.code}`}`);
    const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as {
      backend: Record<string, unknown>;
      detected: { tokenIds?: boolean; logprobs?: boolean; loraLoading?: boolean; training: string; lines: string[] };
    };
    const d = out.detected;
    const yn = (x: boolean | undefined) => (x === undefined ? 'n/a' : x ? 'yes' : 'no');
    health?.configChanged();
    void vscode.window.showInformationMessage(
      `WHALE: connected ${a.kind} — token ids ${yn(d.tokenIds)}, logprobs ${yn(d.logprobs)}, LoRA loading ${yn(d.loraLoading)}, training ${d.training}. The backend section of whale.config.json was updated.`,
    );
    return out;
  });

  command('whale.backend.launchOnRay', async () => {
    const dashboard = await vscode.window.showInputBox({ title: 'Ray dashboard URL', value: 'http://127.0.0.1:8265' });
    if (!dashboard) return undefined;
    const template = await vscode.window.showQuickPick(['embedded', 'vllm', 'skyrl-tinker'], { title: 'Backend to launch' });
    if (!template) return undefined;
    const args = ['backend', 'launch', '--ray', dashboard, '--template', template];
    if (template !== 'embedded') {
      const model = await vscode.window.showInputBox({ title: 'Hugging Face model', placeHolder: 'Qwen/Qwen3-0.6B' });
      if (!model) return undefined;
      args.push('--model', model);
    }
    const r = await run(`launching ${template} on Ray`, args);
    if (r.code !== 0) throw new Error(`the Ray job did not come up (exit ${r.code}); its logs are in the WHALE log`);
    const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { job: string; backend: unknown };
    await context.workspaceState.update(LAST_JOB, { dashboard, job: out.job });
    const config = JSON.stringify(out.backend, null, 2);
    log.info(`Ray job ${out.job} is up; backend config:\n${config}`);
    const choice = await vscode.window.showInformationMessage(`WHALE: ${template} backend running as Ray job ${out.job}`, 'Copy Backend Config');
    if (choice) await vscode.env.clipboard.writeText(`"backend": ${config}`);
    return out;
  });

  command('whale.backend.stopRayJob', async () => {
    const last = context.workspaceState.get<{ dashboard: string; job: string }>(LAST_JOB);
    const dashboard = await vscode.window.showInputBox({ title: 'Ray dashboard URL', value: last?.dashboard ?? 'http://127.0.0.1:8265' });
    if (!dashboard) return undefined;
    const job = await vscode.window.showInputBox({ title: 'Ray submission id', value: last?.job });
    if (!job) return undefined;
    const r = await run(`stopping ${job}`, ['backend', 'stop', '--ray', dashboard, '--job', job]);
    if (r.code !== 0) throw new Error(`could not stop ${job} (exit ${r.code})`);
    vscode.window.showInformationMessage(`WHALE: ${r.stdout.trim()}`);
    return job;
  });
}
