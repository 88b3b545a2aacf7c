import * as vscode from 'vscode';

/** Proposer providers and the environment variable each one's key reaches the engine through. */
export const PROVIDERS = [
  { id: 'anthropic', label: 'Anthropic', env: 'ANTHROPIC_API_KEY' },
  { id: 'openai', label: 'OpenAI', env: 'OPENAI_API_KEY' },
] as const;

const secretKey = (provider: string) => `whale.apiKey.${provider}`;

/**
 * API keys live in SecretStorage only. They reach the engine as environment variables of its child
 * process and nowhere else: never in settings, files or the log (which prints the variable names).
 */
export class ApiKeys {
  constructor(private readonly secrets: vscode.SecretStorage) {}

  async set(provider: string, key: string): Promise<void> {
    await this.secrets.store(secretKey(provider), key);
  }

  async get(provider: string): Promise<string | undefined> {
    return this.secrets.get(secretKey(provider));
  }

  async clear(provider: string): Promise<void> {
    await this.secrets.delete(secretKey(provider));
  }

  /** The engine child's extra environment: one variable per stored key. */
  async env(): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const p of PROVIDERS) {
      const k = await this.secrets.get(secretKey(p.id));
      if (k) out[p.env] = k;
    }
    return out;
  }
}
