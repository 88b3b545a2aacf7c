// Backend commands: check the configured backend, keep API keys in SecretStorage (handed to the
// engine as environment variables, never written to settings, the run store or logs), launch a
// backend as a Ray job and stop it. Long work runs in the `whale` CLI, as everywhere else.
import * as vscode from 'vscode';
import { register, workspaceRoot } from './commands.js';
import { runEngine } from './engineProcess.js';

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

export function registerBackendCommands(context: vscode.ExtensionContext, log: vscode.LogOutputChannel): void {
  const run = async (title: string, args: string[]) => {
    const env = await secretEnv(context);
    return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `WHALE: ${title}`, cancellable: true }, (progress, token) =>
      runEngine(context.extensionPath, args, workspaceRoot(), log, { token, onLine: (line) => progress.report({ message: line }), env }),
    );
  };
  const command = (id: string, handler: () => Promise<unknown>) => register(context, log, id, handler);

  command('whale.backend.checkHealth', async () => {
    const r = await run('checking the backend', ['backend', 'probe', '--config', 'whale.config.json']);
    if (r.code !== 0) throw new Error(`the backend did not answer the probe (exit ${r.code}); see the log`);
    const p = JSON.parse(r.stdout) as { kind: string; version: string; capabilities: { update: string; tokenIds: boolean; logprobs: boolean } };
    const c = p.capabilities;
    vscode.window.showInformationMessage(`WHALE backend ${p.kind} is up: policy ${p.version}; training ${c.update}; token ids ${c.tokenIds ? 'yes' : 'no'}; logprobs ${c.logprobs ? 'yes' : 'no'}`);
    return p;
  });

  command('whale.backend.setApiKey', async () => {
    const name = await vscode.window.showInputBox({ title: 'Environment variable the backend config names in apiKeyEnv', placeHolder: 'TINKER_API_KEY', validateInput: (v) => (/^[A-Z_][A-Z0-9_]*$/.test(v) ? undefined : 'upper-case letters, digits and _') });
    if (!name) return undefined;
    const key = await vscode.window.showInputBox({ title: `Value of ${name} (kept in VS Code's SecretStorage)`, password: true });
    if (!key) return undefined;
    await context.secrets.store(`whale.apiKey.${name}`, key);
    const names = new Set(context.globalState.get<string[]>(SECRET_NAMES, []));
    names.add(name);
    await context.globalState.update(SECRET_NAMES, [...names]);
    log.info(`stored the API key ${name} in SecretStorage`);
    return name;
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
