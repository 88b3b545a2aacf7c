/**
 * Workspace Trust for the backend commands (vscode-free, so it is unit-tested). In an untrusted
 * folder the config is someone else's: checking, connecting or launching a backend would make this
 * window send requests — with the API keys kept in SecretStorage — to whatever URL that config names,
 * or start jobs for it. Those commands refuse there, and stored keys are handed to the engine only
 * for a trusted folder.
 */
export const TRUST_GATED_BACKEND_COMMANDS: Readonly<Record<string, string>> = {
  'whale.backend.checkHealth': 'Checking the backend',
  'whale.backend.connect': 'Connecting a backend',
  'whale.backend.launchOnRay': 'Launching a backend on Ray',
  'whale.backend.stopRayJob': 'Stopping a Ray job',
};

/** The refusal for `command` in a folder of this trust, or undefined when it may run. */
export function backendTrustRefusal(command: string, trusted: boolean): string | undefined {
  const what = TRUST_GATED_BACKEND_COMMANDS[command];
  if (trusted || !what) return undefined;
  return `${what} sends requests to the URLs this workspace's whale.config.json names (with your stored API keys): trust the workspace first (Manage Workspace Trust)`;
}

/** The stored API keys the engine may get: none for an untrusted folder, whatever it asks for. */
export function keysForEngine(trusted: boolean, stored: Readonly<Record<string, string>>): Record<string, string> {
  return trusted ? { ...stored } : {};
}
