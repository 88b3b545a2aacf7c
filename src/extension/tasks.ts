// The `whale` task type (package.json taskDefinitions): `run`, `step` and `eval` as VS Code tasks, so
// runs fit keybindings, pre-launch chains and tasks.json. A task runs the bundled CLI in the
// project's folder with the engine's Node, the editor's proxy and the stored API keys in its env.
import * as vscode from 'vscode';
import { join } from 'node:path';
import { nodeCommand, proxyEnv } from './engineProcess.js';
import type { ApiKeys } from './secrets.js';
import { currentProject } from './workspaceProject.js';

export const TASK_TYPE = 'whale';
const COMMANDS = ['run', 'step', 'eval'] as const;

interface WhaleTaskDefinition extends vscode.TaskDefinition {
  command: (typeof COMMANDS)[number];
  args?: string[];
  config?: string;
}

export function registerTaskProvider(context: vscode.ExtensionContext, deps: { keys: ApiKeys; log: vscode.LogOutputChannel }): void {
  const build = async (def: WhaleTaskDefinition, scope: vscode.WorkspaceFolder | vscode.TaskScope.Workspace): Promise<vscode.Task | undefined> => {
    if (!COMMANDS.includes(def.command)) return undefined;
    const project = currentProject();
    const folder = typeof scope === 'object' ? scope.uri.fsPath : undefined;
    const config = def.config ? join(folder ?? project?.root ?? '.', def.config) : project?.hasConfig ? project.configFile : undefined;
    const cwd = def.config ? (folder ?? project?.root) : project?.root;
    const node = nodeCommand();
    const args = [join(context.extensionPath, 'bin', 'whale.js'), def.command, ...(config ? ['--config', config] : []), ...(def.args ?? [])];
    const env = { ...proxyEnv(), ...node.env, ...(await deps.keys.env()) };
    const task = new vscode.Task(def, scope, def.command, TASK_TYPE, new vscode.ProcessExecution(node.command, args, { cwd, env }), []);
    task.detail = `whale ${[def.command, ...(def.args ?? [])].join(' ')}`;
    if (def.command !== 'eval') task.group = vscode.TaskGroup.Build;
    return task;
  };
  context.subscriptions.push(
    vscode.tasks.registerTaskProvider(TASK_TYPE, {
      provideTasks: async () => {
        const project = currentProject();
        if (!project?.hasConfig || !vscode.workspace.isTrusted) return [];
        const tasks = await Promise.all(COMMANDS.map((command) => build({ type: TASK_TYPE, command }, vscode.TaskScope.Workspace)));
        return tasks.filter((t): t is vscode.Task => !!t);
      },
      resolveTask: async (task) => {
        if (!vscode.workspace.isTrusted) {
          deps.log.warn('tasks: a whale task runs harness code; trust the workspace first');
          return undefined;
        }
        return build(
          task.definition as WhaleTaskDefinition,
          task.scope === vscode.TaskScope.Global || task.scope === undefined ? vscode.TaskScope.Workspace : task.scope,
        );
      },
    }),
  );
}
