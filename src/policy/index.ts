import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { BackendConfig } from '../core/config.js';
import { WhaleError } from '../core/errors.js';
import type { PolicyBackend } from './types.js';

export type { PolicyBackend } from './types.js';

export interface BackendContext {
  /** The run store; trained versions live under `<storeDir>/policy/versions`. */
  storeDir: string;
  /** The version a resumed run was at (remote backends continue from it; embedded takes it as `model`). */
  version?: string;
  /** Told when a remote call waits to retry (the engine logs it: a backend that went away pauses the phase). */
  onRetry?: (info: { url: string; attempt: number; delayMs: number; reason: string }) => void;
  /** The run this backend serves: a split backend names its adapters after it and records them in its folder. */
  runId?: string;
}

/**
 * Opens the backend a config names. Heavy libraries load here, lazily, so the CLI and the
 * extension start fast when no policy is needed.
 */
export async function createBackend(cfg: BackendConfig, ctx: BackendContext): Promise<PolicyBackend> {
  switch (cfg.kind) {
    case 'embedded': {
      const { EmbeddedBackend, defaultBaseModelDir } = await import('./embedded/index.js');
      const versionsDir = join(resolve(ctx.storeDir), 'policy', 'versions');
      if (cfg.model === 'base') return EmbeddedBackend.open({ versionsDir, sampler: { maxBatch: cfg.maxBatch } });
      // Another shipped model by name (resources/model/<name>, e.g. 'kbchain'), wherever the command runs.
      const shipped = /^[a-z][a-z0-9-]*$/.test(cfg.model) ? join(dirname(defaultBaseModelDir()), cfg.model) : undefined;
      if (shipped && existsSync(join(shipped, 'weights.bin')))
        return EmbeddedBackend.open({ versionsDir, baseModelDir: shipped, sampler: { maxBatch: cfg.maxBatch } });
      const asFolder = resolve(cfg.model);
      if (existsSync(asFolder) && statSync(asFolder).isDirectory())
        return EmbeddedBackend.open({ versionsDir, baseModelDir: asFolder, sampler: { maxBatch: cfg.maxBatch } });
      return EmbeddedBackend.open({ versionsDir, initialVersion: cfg.model, sampler: { maxBatch: cfg.maxBatch } });
    }
    case 'openai-compatible': {
      const { OpenAICompatibleBackend } = await import('./remote/openaiBackend.js');
      return OpenAICompatibleBackend.open({
        ...cfg,
        onRetry: ctx.onRetry,
        recordDir: cfg.recordRsft ? join(resolve(ctx.storeDir), 'rsft-batches') : undefined,
      });
    }
    case 'tinker': {
      const { TinkerBackend } = await import('./tinker/backend.js');
      return TinkerBackend.open({ ...cfg, initialVersion: ctx.version, onRetry: ctx.onRetry, storeDir: resolve(ctx.storeDir), owner: ctx.runId });
    }
    case 'split': {
      const { OpenAICompatibleBackend } = await import('./remote/openaiBackend.js');
      const { TinkerBackend } = await import('./tinker/backend.js');
      const { SplitBackend } = await import('./split/splitBackend.js');
      const sampler = await OpenAICompatibleBackend.open({ ...cfg.sampler, onRetry: ctx.onRetry });
      const trainer = await TinkerBackend.open({
        ...cfg.trainer,
        initialVersion: ctx.version,
        onRetry: ctx.onRetry,
        storeDir: resolve(ctx.storeDir),
        owner: ctx.runId,
      });
      const store = resolve(ctx.storeDir);
      return SplitBackend.open({
        sampler,
        trainer,
        publish: cfg.publish,
        samplerModel: cfg.sampler.model,
        baseModel: cfg.trainer.baseModel,
        recordFile: ctx.runId ? join(store, 'runs', ctx.runId, 'published-adapters.json') : join(store, 'published-adapters.json'),
        runTag: ctx.runId ?? 'adhoc',
      });
    }
  }
}

/** Serves a backend over OpenAI-compatible HTTP and, unless `tinker: false`, the Tinker routes (what `whale serve` runs). */
export async function serveBackend(
  backend: PolicyBackend,
  opts: { host: string; port: number; tinker?: boolean; exportDir?: string },
): Promise<{ url: string; close(): Promise<void> }> {
  const { EmbeddedBackend, startEmbeddedServer } = await import('./embedded/index.js');
  const { EmbeddedTinkerService } = await import('./embedded/tinkerService.js');
  if (!(backend instanceof EmbeddedBackend)) throw new WhaleError(`only the embedded backend can be served by whale itself (got '${backend.kind}')`);
  const tinker = opts.tinker === false ? undefined : new EmbeddedTinkerService(backend, { exportDir: opts.exportDir });
  const server = await startEmbeddedServer({ backend, host: opts.host, port: opts.port, tinker });
  return {
    url: server.url,
    close: async () => {
      await server.close();
      tinker?.close();
    },
  };
}
