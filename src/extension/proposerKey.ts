// The llm proposer's API key, asked for when a phase is about to start without one. The key goes
// from the password box to SecretStorage and to the engine child's environment, and nowhere else:
// not to settings, files, the run store or the log (which names the variable, never the value).
import * as vscode from 'vscode';
import { readFileSync } from 'node:fs';
import { PROVIDERS, type ApiKeys } from './secrets.js';

interface LlmSettings {
  provider?: string;
  apiKeyEnv?: string;
}

/** The llm proposer's provider and key variable, or undefined when the config's proposer needs no key. */
export function proposerKeyNeed(configFile: string): { provider: (typeof PROVIDERS)[number]; envVar: string } | undefined {
  let search: { proposer?: string; llm?: LlmSettings } | undefined;
  try {
    search = (JSON.parse(readFileSync(configFile, 'utf8')) as { search?: { proposer?: string; llm?: LlmSettings } }).search;
  } catch {
    return undefined; // an unreadable config is reported by the Problems panel and requireValidConfig
  }
  if (search?.proposer !== 'llm') return undefined;
  const provider = PROVIDERS.find((p) => p.id === search.llm?.provider);
  if (!provider) return undefined;
  return { provider, envVar: search.llm?.apiKeyEnv ?? provider.env };
}

/**
 * The extra environment of an engine child: every stored key, and — when the config's llm proposer
 * has no key in SecretStorage nor in the editor's environment — the one the person types now into
 * a password box (stored in SecretStorage for next time). Throws when they cancel.
 */
export async function engineEnv(configFile: string, keys: ApiKeys, log: vscode.LogOutputChannel): Promise<Record<string, string>> {
  const env = await keys.env();
  const need = proposerKeyNeed(configFile);
  if (!need) return env;
  const stored = await keys.get(need.provider.id);
  if (stored) return { ...env, [need.envVar]: stored };
  if (process.env[need.envVar]) return env; // inherited by the child from the editor's environment
  const key = await vscode.window.showInputBox({
    title: `WHALE: ${need.provider.label} API key for the llm proposer`,
    prompt: `Stored in VS Code SecretStorage and given to the engine as ${need.envVar} only; never written to a file. (WHALE: Set API Key changes it.)`,
    password: true,
    ignoreFocusOut: true,
    validateInput: (v) => (v.trim() === '' ? 'the key is empty' : undefined),
  });
  if (!key?.trim()) throw new Error(`no ${need.provider.label} API key for the llm proposer: run WHALE: Set API Key, or set ${need.envVar}`);
  await keys.set(need.provider.id, key.trim());
  log.info(`secrets: a ${need.provider.label} key was stored (passed to the engine as ${need.envVar})`);
  return { ...env, [need.envVar]: key.trim() };
}
