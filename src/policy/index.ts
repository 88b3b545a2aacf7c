import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { BackendConfig } from '../core/config.js';
import { WhaleError } from '../core/errors.js';
import type { PolicyBackend } from './types.js';

export type { PolicyBackend } from './types.js';

export interface BackendContext {
  /** The run store; trained versions live under `<storeDir>/policy/versions`. */
  storeDir: string;
}

/**
 * Opens the backend a config names. Heavy libraries load here, lazily, so the CLI and the
 * extension start fast when no policy is needed.
 */
export async function createBackend(cfg: BackendConfig, ctx: BackendContext): Promise<PolicyBackend> {
  switch (cfg.kind) {
    case 'embedded': {
      const { EmbeddedBackend } = await import('./embedded/index.js');
      const versionsDir = join(resolve(ctx.storeDir), 'policy', 'versions');
      if (cfg.model === 'base') return EmbeddedBackend.open({ versionsDir, sampler: { maxBatch: cfg.maxBatch } });
      const asFolder = resolve(cfg.model);
      if (existsSync(asFolder) && statSync(asFolder).isDirectory()) return EmbeddedBackend.open({ versionsDir, baseModelDir: asFolder, sampler: { maxBatch: cfg.maxBatch } });
      return EmbeddedBackend.open({ versionsDir, initialVersion: cfg.model, sampler: { maxBatch: cfg.maxBatch } });
    }
    case 'openai-compatible':
      throw new WhaleError(`backend 'openai-compatible' (${cfg.baseUrl}) is not available in this version yet; use 'embedded'`);
  }
}

/** Serves a backend over OpenAI-compatible HTTP (what `whale serve` runs). */
export async function serveBackend(backend: PolicyBackend, opts: { host: string; port: number }): Promise<{ url: string; close(): Promise<void> }> {
  const { EmbeddedBackend, startEmbeddedServer } = await import('./embedded/index.js');
  if (!(backend instanceof EmbeddedBackend)) throw new WhaleError(`only the embedded backend can be served by whale itself (got '${backend.kind}')`);
  return startEmbeddedServer({ backend, host: opts.host, port: opts.port });
}
