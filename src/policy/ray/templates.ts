/**
 * What a user launches on a Ray cluster as a WHALE backend: the entrypoint, what to upload, the
 * resources, and how its log announces the URL to connect to. The embedded backend is CPU-only; vLLM
 * serves rollouts (OpenAI-compatible, with runtime LoRA loading); SkyRL's Tinker server trains.
 */
/** The SkyRL release the skyrl-tinker template installs (the one CI checks). */
export const SKYRL_VERSION = '0.3.0';

export type TemplateName = 'embedded' | 'vllm' | 'skyrl-tinker';
export const TEMPLATES: readonly TemplateName[] = ['embedded', 'vllm', 'skyrl-tinker'];

export interface LaunchTemplate {
  name: TemplateName;
  entrypoint: string;
  /** Upload this folder as the job's working_dir (undefined: nothing to upload). */
  workingDir?: string;
  exclude: string[];
  envVars: Record<string, string>;
  numCpus?: number;
  numGpus?: number;
  /** Matches the line the server prints when it listens; group 1 is the port. */
  ready: RegExp;
  /** The backend config a run uses once the job is up (host filled in by the launcher). */
  backendConfig(host: string, port: number): Record<string, unknown>;
}

export interface TemplateOptions {
  port: number;
  /** The project folder (uploaded for 'embedded'). */
  projectDir: string;
  /** 'embedded': a folder with this project's node_modules on the cluster's nodes (default: install there with npm ci). */
  nodeModules?: string;
  /** vllm / skyrl-tinker: the Hugging Face model to serve or train. */
  model?: string;
  gpus?: number;
  loraRank?: number;
}

export function launchTemplate(name: TemplateName, o: TemplateOptions): LaunchTemplate {
  switch (name) {
    case 'embedded': {
      const deps = o.nodeModules ? `ln -sfn ${shellQuote(o.nodeModules)} node_modules` : 'npm ci --omit=dev --no-audit --no-fund';
      return {
        name,
        // The built CLI when the upload has one, else the sources through tsx (a dev checkout).
        entrypoint: `${deps} && if [ -f dist/cli.mjs ]; then W="node bin/whale.js"; else W="node --import tsx src/cli/dev.ts"; fi && $W serve --backend embedded --host 0.0.0.0 --port ${o.port} --store .whale-ray`,
        workingDir: o.projectDir,
        exclude: ['node_modules', '.git', '.whale', 'out', '.vscode-test'],
        envVars: {},
        numCpus: 1,
        ready: /whale serve: .* at http:\/\/[^:]+:(\d+)\/v1/,
        backendConfig: (host, port) => ({ kind: 'tinker', baseUrl: `http://${host}:${port}`, baseModel: 'embedded', tokenizer: 'embedded' }),
      };
    }
    case 'vllm': {
      const model = required(o.model, 'vllm needs --model (a Hugging Face model id)');
      return {
        name,
        entrypoint: `vllm serve ${shellQuote(model)} --host 0.0.0.0 --port ${o.port} --enable-lora --max-loras 4 --max-lora-rank ${o.loraRank ?? 32}`,
        exclude: [],
        envVars: { VLLM_ALLOW_RUNTIME_LORA_UPDATING: 'True' },
        numGpus: o.gpus ?? 1,
        ready: /Uvicorn running on http:\/\/[^:]+:(\d+)|Starting vLLM API server.*?:(\d+)/,
        backendConfig: (host, port) => ({ kind: 'openai-compatible', baseUrl: `http://${host}:${port}/v1`, model }),
      };
    }
    case 'skyrl-tinker': {
      const model = required(o.model, 'skyrl-tinker needs --model (the base model to train, e.g. Qwen/Qwen3-0.6B)');
      return {
        name,
        // SkyRL's Tinker server from PyPI (`skyrl` 0.3.0: Python >= 3.12 on the node, launched by `uv run`, which it
        // checks; options as --backend-config JSON — there is no --max-lora-rank flag). The launch CI runs on CPU
        // (scripts/skyrl-setup.sh, test/unit/backend-skyrl.test.ts) with the `jax` extra; on a GPU node `gpu`.
        entrypoint:
          `python3 -m venv .skyrl && . .skyrl/bin/activate && pip install -q 'skyrl[tinker,gpu]==${SKYRL_VERSION}' uv && ` +
          `uv run --active -m skyrl.tinker.api --base-model ${shellQuote(model)} --backend jax --backend-config '${JSON.stringify({ max_lora_rank: o.loraRank ?? 32, max_lora_adapters: 8 })}' --checkpoints-base ./checkpoints --host 0.0.0.0 --port ${o.port}`,
        exclude: [],
        envVars: {},
        numGpus: o.gpus ?? 1,
        ready: /Uvicorn running on http:\/\/[^:]+:(\d+)/,
        backendConfig: (host, port) => ({ kind: 'tinker', baseUrl: `http://${host}:${port}`, baseModel: model, tokenizer: '<path to its tokenizer.json>' }),
      };
    }
  }
}

function required(v: string | undefined, message: string): string {
  if (!v) throw new Error(message);
  return v;
}

function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:=@-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
