// Every command of the CLI, described without its code: `whale --help`, `whale <cmd> --help` and
// shell completion read this file only (commands.ts adds the loaders that import a command's code
// when it runs). The choice lists that live in heavy modules (config schema, backends) are repeated
// in choices.ts and kept equal to their sources by test/unit/cli-product.test.ts.
import { SPLITS } from '../domains/types.js';
import { CONNECT_KIND_CHOICES, METHOD_CHOICES, RAY_TEMPLATE_CHOICES, TEMPLATES } from './choices.js';
import { flag, type CommandDescription, type Options } from './command.js';

const projectOptions = {
  config: flag.config,
  domain: { type: 'string', arg: 'ID', help: 'without a config: the domain (see `whale domains`)', default: "the config's domain" },
  harness: { type: 'string', arg: 'DIR', help: 'the initial harness folder', default: "the config's harness, else the domain's h0" },
  store: flag.store,
  method: { type: 'string', arg: 'METHOD', choices: METHOD_CHOICES, help: 'WHALE or a baseline', default: "the config's method (whale)" },
  seed: { type: 'string', arg: 'N', help: 'the run seed', default: "the config's seed (0)" },
  'budget-rollouts': { type: 'string', arg: 'N', help: 'stop after this many training + search rollouts', default: "the config's budget (none)" },
  json: { type: 'boolean', help: 'print the outcome (run id, reason, state) as JSON on stdout; progress stays on stderr' },
} as const satisfies Options;

export const COMMAND_SPECS = {
  init: {
    summary: "scaffold a WHALE project: whale.config.json, the domain's h0 harness, .gitignore",
    args: '[DIR]',
    options: {
      domain: { type: 'string', arg: 'ID', help: 'the domain (see `whale domains`)', default: 'kbqa' },
      template: {
        type: 'string',
        arg: 'NAME',
        choices: TEMPLATES,
        help: 'project size: standard (minutes per phase) or tiny (a first look)',
        default: 'standard',
      },
      name: { type: 'string', arg: 'NAME', help: 'the project name in the config', default: '<domain>-agent' },
      force: { type: 'boolean', help: 'overwrite an existing whale.config.json' },
    },
  },
  run: {
    summary: 'run WHALE (or a baseline: --method) to the end of its schedule or budget; --resume continues the current run',
    options: {
      ...projectOptions,
      resume: { type: 'boolean', help: 'continue the current run instead of starting one' },
      run: { type: 'string', arg: 'ID', help: 'continue this run', default: 'a new run' },
    },
  },
  step: {
    summary: 'run exactly one phase of the current run (starting a run when there is none)',
    options: { ...projectOptions, run: flag.run, new: { type: 'boolean', help: 'start a new run for this phase' } },
  },
  stop: {
    summary: 'ask a running engine to stop at its next safe point',
    options: { config: flag.config, store: flag.store, run: flag.run, json: flag.json },
  },
  status: {
    summary: 'state of the current run (or --run ID, or --all): phase, policy, harness, best pair, ledger',
    options: {
      config: flag.config,
      store: flag.store,
      run: flag.run,
      all: { type: 'boolean', help: 'every run in the store' },
      json: { type: 'boolean', help: 'print the states as a JSON array on stdout ([] when there are no runs)' },
    },
  },
  report: {
    summary: 'write a Markdown or HTML report (method table over seeds, curves, per-run detail) of runs in the store',
    options: {
      config: flag.config,
      store: flag.store,
      run: { type: 'string', arg: 'ID', multiple: true, help: 'a run to include (repeatable)', default: 'every run in the store' },
      all: { type: 'boolean', help: 'every run in the store (the default; cannot be combined with --run)' },
      format: { type: 'string', arg: 'FORMAT', choices: ['md', 'html'], help: 'the report format', default: 'md' },
      out: { type: 'string', arg: 'DIR', help: 'where to write the report', default: '<store>/reports' },
      title: { type: 'string', arg: 'TEXT', help: "the report's title", default: 'derived from the runs' },
      json: { type: 'boolean', help: 'print {file, runs, skipped} as JSON on stdout' },
    },
  },
  eval: {
    summary: 'mean@k of a harness under a policy version on a split, with its standard error (cached)',
    options: {
      config: flag.config,
      domain: projectOptions.domain,
      harness: projectOptions.harness,
      candidate: { type: 'string', arg: 'HASH', help: 'an archived candidate (tree hash or a unique prefix) instead of --harness', default: 'none' },
      policy: {
        type: 'string',
        arg: 'VERSION',
        help: "a saved policy version (a run's policy after a phase)",
        default: "the backend's current version (base)",
      },
      split: { type: 'string', arg: 'SPLIT', choices: SPLITS, help: 'the split to evaluate (test is sealed)', default: "the config's evaluation.split (val)" },
      k: { type: 'string', arg: 'N', help: 'rollouts per task', default: "the config's evaluation.k (4)" },
      seed: { type: 'string', arg: 'N', help: 'the sampling seed', default: "the config's evaluation.seed (0)" },
      limit: { type: 'string', arg: 'N', help: 'evaluate only the first N tasks', default: "the config's evaluation.limit (all)" },
      concurrency: { type: 'string', arg: 'N', help: 'rollouts in flight', default: "the config's evaluation.concurrency" },
      temperature: { type: 'string', arg: 'T', help: 'sampling temperature', default: "the config's sampling.temperature (1)" },
      model: { type: 'string', arg: 'NAME', help: 'the embedded model (embedded backend only)', default: "the config's backend.model" },
      store: flag.store,
      json: { type: 'boolean', help: 'print the summary (mean@k, se, terminations, cache hit) as JSON on stdout' },
    },
  },
  serve: {
    summary: 'serve a policy backend over an OpenAI-compatible HTTP API (loopback by default)',
    options: {
      backend: { type: 'string', arg: 'KIND', choices: ['embedded'], help: 'the backend to serve', default: 'embedded' },
      model: { type: 'string', arg: 'NAME', help: 'the embedded model', default: 'base' },
      port: { type: 'string', arg: 'PORT', help: 'TCP port', default: '8000' },
      host: { type: 'string', arg: 'HOST', help: 'the address to listen on', default: '127.0.0.1' },
      store: { type: 'string', arg: 'DIR', help: 'where saved policy versions live', default: '.whale' },
      'export-dir': {
        type: 'string',
        arg: 'DIR',
        help: 'also write each saved version to DIR/<version>/ (a sampler server loads it with /v1/load_lora_adapter)',
        default: 'none',
      },
    },
  },
  domains: {
    summary: "list the built-in domains and this project's own",
    options: { json: { type: 'boolean', help: 'print {builtins: [{id, title, regime, summary}], own: [{name, kind, path}], configured} as JSON on stdout' } },
  },
  domain: {
    summary: 'your own task: `domain new NAME [--data]` scaffolds one, `domain check [NAME]` loads it and tests its verifier',
    args: 'new NAME | check [NAME]',
    forms: ['whale domain new NAME [--data] [--dir PROJECT] [--template NAME] [--use] [--force]', 'whale domain check [NAME] [--config FILE] [--limit N]'],
    options: {
      data: { type: 'boolean', help: 'new: a data-only domain (a task file, a verifier from the library) instead of a code domain' },
      dir: { type: 'string', arg: 'DIR', help: 'new: the project folder', default: 'the current folder' },
      template: { type: 'string', arg: 'NAME', choices: TEMPLATES, help: 'new: the size of a project made from scratch', default: 'tiny' },
      use: { type: 'boolean', help: "new: switch an existing project's config to the new domain" },
      force: { type: 'boolean', help: 'new: overwrite an existing domain folder' },
      config: flag.config,
      limit: { type: 'string', arg: 'N', help: 'check: at most N tasks per split', default: '100' },
    },
  },
  candidate: {
    summary: 'submit a hand-made harness folder as a candidate the next harness phase evaluates; list submissions',
    args: 'submit DIR | submitted',
    options: {
      config: flag.config,
      store: flag.store,
      parents: { type: 'string', arg: 'HASH[,HASH]', help: 'the candidates this one derives from', default: 'none' },
      message: { type: 'string', arg: 'TEXT', help: 'what the candidate changes and why', default: 'empty' },
      json: flag.json,
    },
  },
  annotate: {
    summary: "add, list or delete notes on a run's trajectories (the proposer reads them)",
    args: '[TEXT...]',
    forms: [
      'whale annotate --key HASH --trajectory ID [--turn N] [--author NAME] TEXT...',
      'whale annotate --list [--json]',
      'whale annotate --delete NOTE_ID',
    ],
    options: {
      config: flag.config,
      store: flag.store,
      run: flag.run,
      key: { type: 'string', arg: 'HASH', help: 'the evaluation key of the trajectory (in the transcript and trajectories.jsonl)' },
      trajectory: { type: 'string', arg: 'ID', help: 'the trajectory the note is on' },
      turn: { type: 'string', arg: 'N', help: 'the turn (1-based) the note is on', default: 'the whole trajectory' },
      author: { type: 'string', arg: 'NAME', help: 'who wrote the note', default: '$USER' },
      list: { type: 'boolean', help: "list the run's notes" },
      json: { type: 'boolean', help: 'with --list: print the notes as JSON' },
      delete: { type: 'string', arg: 'NOTE_ID', help: 'delete this note' },
    },
  },
  backend: {
    summary: 'probe the configured backend, or launch / follow / stop a backend as a Ray job',
    args: 'probe | connect [URL] | launch | status | logs | stop',
    forms: [
      'whale backend probe [--config FILE]',
      'whale backend connect [URL] [--kind KIND] [--model M] [--trainer URL] [--adapter-dir DIR] [--base-model M] [--tokenizer T] [--api-key-env NAME] [--lora-rank R] [--config FILE] [--dry-run]',
      'whale backend launch --ray URL [--template NAME] [--model M] [--port 8000] [--gpus N] [--node-modules DIR] [--detach]',
      'whale backend status|logs|stop --ray URL --job ID',
    ],
    options: {
      config: flag.config,
      store: flag.store,
      ray: { type: 'string', arg: 'URL', help: 'the Ray dashboard URL, e.g. http://127.0.0.1:8265' },
      template: { type: 'string', arg: 'NAME', choices: RAY_TEMPLATE_CHOICES, help: 'launch: what the Ray job runs', default: 'embedded' },
      model: { type: 'string', arg: 'NAME', help: 'launch/connect: the model', default: "the template's or server's" },
      port: { type: 'string', arg: 'PORT', help: 'launch: the port the backend listens on', default: '8000' },
      gpus: { type: 'string', arg: 'N', help: 'launch: GPUs for the job', default: "the template's" },
      'node-modules': { type: 'string', arg: 'DIR', help: 'launch: a node_modules folder to ship with the job', default: 'installed on the cluster' },
      job: { type: 'string', arg: 'ID', help: 'status/logs/stop: the Ray submission id (printed by launch)' },
      detach: { type: 'boolean', help: 'launch: return once submitted instead of waiting until ready' },
      kind: {
        type: 'string',
        arg: 'KIND',
        choices: CONNECT_KIND_CHOICES,
        help: 'connect: the backend kind',
        default: 'openai-compatible with a URL, else embedded',
      },
      trainer: { type: 'string', arg: 'URL', help: 'connect (split): the Tinker trainer URL' },
      'adapter-dir': { type: 'string', arg: 'DIR', help: 'connect (split): where LoRA adapters are published' },
      'base-model': { type: 'string', arg: 'NAME', help: 'connect: the base model to train', default: 'detected' },
      tokenizer: { type: 'string', arg: 'NAME', help: 'connect: the tokenizer', default: 'detected' },
      'api-key-env': { type: 'string', arg: 'NAME', help: 'connect: the NAME of the environment variable holding the API key (never the key)' },
      'lora-rank': {
        type: 'string',
        arg: 'R',
        help: 'connect: the LoRA rank training will use; checked against the server (SkyRL: its max_lora_rank)',
        default: '32',
      },
      'dry-run': { type: 'boolean', help: 'connect: probe and print, do not write the config' },
    },
  },
  retriever: {
    summary: "serve a BM25 retriever behind Search-R1's POST /retrieve API",
    args: 'serve',
    options: {
      corpus: { type: 'string', arg: 'FILE', help: 'passages as JSON lines {"id", "contents": "\\"Title\\"\\ntext"} (wiki-18 layout; .jsonl or .jsonl.gz)' },
      port: { type: 'string', arg: 'N', help: 'the port to listen on', default: '8000' },
      host: { type: 'string', arg: 'HOST', help: 'the address to listen on', default: '127.0.0.1' },
    },
  },
  sandbox: {
    summary: "serve a local code sandbox behind SandboxFusion's API (POST /run_code; Python under bubblewrap)",
    args: 'serve',
    options: {
      port: { type: 'string', arg: 'N', help: 'the port to listen on', default: '8080' },
      host: { type: 'string', arg: 'HOST', help: 'the address to listen on', default: '127.0.0.1' },
      concurrency: { type: 'string', arg: 'N', help: 'programs run at once', default: '4' },
      'require-confinement': { type: 'boolean', help: 'refuse to start without bubblewrap (also when WHALE_REQUIRE_BWRAP=1)' },
    },
  },
  data: {
    summary: "download a paper domain's full data sets (resumable; Hugging Face hub, or --endpoint / HF_ENDPOINT)",
    args: 'fetch searchqa|math|chess',
    options: {
      dir: { type: 'string', arg: 'DIR', help: 'where the files go', default: 'data/<domain>' },
      what: { type: 'string', arg: 'PART,…', help: 'searchqa: which parts (data, corpus, index)', default: 'data' },
      endpoint: {
        type: 'string',
        arg: 'URL',
        help: 'a Hugging Face mirror or any server laid out like the hub',
        default: '$HF_ENDPOINT, else https://huggingface.co',
      },
      url: { type: 'string', arg: 'URL', help: 'chess: where the Lichess puzzle database (.csv.zst) is read from', default: 'database.lichess.org' },
      'max-rows': { type: 'string', arg: 'N', help: 'chess: keep only the first N puzzles', default: 'all' },
    },
  },
  completion: {
    summary: 'print a shell completion script: eval "$(whale completion bash)", or zsh, or fish',
    args: 'bash|zsh|fish',
    options: {},
  },
} satisfies Record<string, CommandDescription>;
