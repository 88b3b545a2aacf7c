import { z } from 'zod';
import { readJsonWithSchema } from './jsonFile.js';

export const SamplingSchema = z
  .object({
    temperature: z.number().min(0).max(5).default(1),
    top_p: z.number().gt(0).max(1).default(1),
    max_tokens: z.number().int().positive().default(64),
  })
  .strict();
export type Sampling = z.infer<typeof SamplingSchema>;

export const SandboxLimitsSchema = z
  .object({
    wallMs: z.number().int().positive().default(30_000).describe('wall-clock limit per rollout'),
    cpuMs: z.number().int().positive().default(20_000).describe('CPU-time limit per rollout (harness process)'),
    memoryMb: z.number().int().positive().default(256).describe('heap limit of the harness process'),
    outputBytes: z.number().int().positive().default(1_000_000).describe('bytes the harness may write on the protocol'),
    maxTurns: z.number().int().positive().default(16).describe('model calls per rollout (hard cap, above any harness setting)'),
    maxTokens: z.number().int().positive().default(4096).describe('completion tokens per rollout'),
    separation: z
      .enum(['context', 'thread', 'process'])
      .optional()
      .describe(
        "how the rollouts of a Node harness are kept apart: 'context' (default: a fresh vm context per rollout in a warm sandboxed process, the fastest), 'thread' (a worker thread per rollout: a V8 isolate of its own), 'process' (a process per rollout, the slowest). WHALE_CONTEXTS=0 or WHALE_WARM_WORKERS=0 in the environment asks for thread or process; the stricter of the two wins. Results are the same whichever is used",
      ),
    allowUnconfined: z
      .boolean()
      .optional()
      .describe(
        'run command (non-Node) harnesses even where neither bubblewrap nor user namespaces can confine them: they can then read your files and the engine environment. Off by default: such harnesses are refused',
      ),
  })
  .strict();
export type SandboxLimits = z.infer<typeof SandboxLimitsSchema>;

/** Timeouts and retries of a remote backend (policy/remote/http.ts). */
const RemoteCallSchema = z.object({
  timeoutMs: z.number().int().positive().default(120_000).describe('deadline of one HTTP attempt'),
  retries: z.number().int().nonnegative().default(4).describe('retries of a 5xx/408/429 answer, with backoff'),
  outageMs: z.number().int().nonnegative().default(600_000).describe('how long a phase waits for an unreachable backend to come back'),
});

const OpenAICompatibleBackendSchema = z
  .object({
    kind: z.literal('openai-compatible'),
    baseUrl: z.string().url().describe('OpenAI base URL, ending in /v1'),
    model: z.string(),
    apiKeyEnv: z.string().optional().describe('name of the environment variable holding the API key (the key itself is never stored)'),
    maxContext: z.number().int().positive().optional(),
    recordRsft: z
      .boolean()
      .default(false)
      .describe(
        'this backend cannot train: let weight phases run anyway and record their accepted RSFT batches under <store>/rsft-batches/ for later training',
      ),
    ...RemoteCallSchema.shape,
  })
  .strict();

const TinkerBackendSchema = z
  .object({
    kind: z.literal('tinker'),
    baseUrl: z.string().url().describe('server root (the routes are under /api/v1)'),
    baseModel: z.string().describe("the base model to train, e.g. 'Qwen/Qwen3-4B'; 'embedded' for whale serve"),
    tokenizer: z.string().default('embedded').describe("'embedded' (whale serve) or a path to a tokenizer.json (+ tokenizer_config.json beside it)"),
    loraRank: z.number().int().positive().default(32),
    apiKeyEnv: z.string().optional(),
    wire: z
      .enum(['auto', 'json', 'protobuf'])
      .default('auto')
      .describe(
        "how forward_backward and its results travel: 'protobuf' (tinker SDK >= 0.25: SkyRL >= 0.4, hosted Tinker), 'json' (SkyRL 0.3.0); 'auto' asks client/config and switches on a 415",
      ),
    ...RemoteCallSchema.shape,
  })
  .strict();

/** How a trained version reaches the sampler: vLLM's runtime LoRA loading (policy/split/vllmLora.ts). */
export const PublishSchema = z
  .object({
    kind: z.literal('vllm-lora'),
    adapterDir: z
      .string()
      .min(1)
      .describe(
        "the folder, as the SAMPLER server sees it, where the trainer writes saved versions (e.g. whale serve --export-dir, or SkyRL's checkpoint folder)",
      ),
    pathTemplate: z
      .string()
      .default('{adapterDir}/{checkpoint}')
      .describe('lora_path of a version: {adapterDir}, {checkpoint} (last segment of the tinker:// path) and {model} (the training model id) are filled in'),
    namePrefix: z
      .string()
      .regex(/^[A-Za-z0-9._-]+$/)
      .default('whale')
      .describe('adapters are loaded as <namePrefix>-<run>-v<N>'),
    keepLoaded: z
      .number()
      .int()
      .min(1)
      .default(2)
      .describe('adapters kept loaded: the current version and the ones before it (older ones are unloaded; reloaded on demand)'),
  })
  .strict();
export type PublishConfig = z.infer<typeof PublishSchema>;

export const BackendSchema = z.discriminatedUnion('kind', [
  z
    .object({
      kind: z.literal('embedded'),
      /** A version id in the local store, or a folder with weights; default: the shipped base model. */
      model: z.string().default('base'),
      maxBatch: z.number().int().positive().default(64),
    })
    .strict(),
  OpenAICompatibleBackendSchema,
  TinkerBackendSchema,
  z
    .object({
      kind: z.literal('split'),
      sampler: OpenAICompatibleBackendSchema.describe('rollouts: an OpenAI-compatible server (vLLM started with --enable-lora)'),
      trainer: TinkerBackendSchema.describe('training: a Tinker server'),
      publish: PublishSchema,
    })
    .strict(),
]);
export type BackendConfig = z.infer<typeof BackendSchema>;

export const EvaluationSchema = z
  .object({
    k: z.number().int().positive().default(8).describe('samples per task for mean@k'),
    split: z.enum(['weight', 'harness', 'val', 'test']).default('val'),
    seed: z.number().int().default(0),
    concurrency: z.number().int().positive().default(32).describe('rollouts in flight at once'),
    limit: z.number().int().positive().optional().describe('evaluate only the first N tasks of the split'),
  })
  .strict();
export type EvaluationConfig = z.infer<typeof EvaluationSchema>;

const SPLIT_NAMES = ['weight', 'harness', 'val', 'test'] as const;

/** Verifiers of a data-only domain (src/domains/verifiers/library.ts). */
const extract = {
  extract: z
    .string()
    .optional()
    .describe('a regular expression applied to the final answer first: its group 1 (else the whole match) is what is compared; no match is a failed task'),
};
export const VerifierSpecSchema = z.discriminatedUnion('kind', [
  z
    .object({
      kind: z.literal('exact'),
      caseSensitive: z.boolean().default(false).describe('compare case too (whitespace at the ends is always trimmed)'),
      ...extract,
    })
    .strict(),
  z
    .object({ kind: z.literal('normalised-em'), ...extract })
    .strict()
    .describe('SQuAD normalisation (lower case, no punctuation or articles), equal to any gold answer'),
  z
    .object({
      kind: z.literal('token-f1'),
      threshold: z.number().min(0).max(1).default(1).describe('pass when the best token F1 reaches this; the score is the F1'),
      ...extract,
    })
    .strict(),
  z
    .object({
      kind: z.literal('numeric'),
      tolerance: z.number().nonnegative().default(1e-6),
      relative: z.boolean().default(false).describe('tolerance relative to |gold|'),
      ...extract,
    })
    .strict(),
  z
    .object({
      kind: z.literal('regex'),
      flags: z
        .string()
        .regex(/^[imsu]*$/)
        .default('')
        .describe('flags of the gold regular expressions'),
      ...extract,
    })
    .strict()
    .describe('each gold answer is a regular expression the whole (trimmed) answer must match'),
  z
    .object({ kind: z.literal('boxed-math'), ...extract })
    .strict()
    .describe('the last \\boxed{} of the answer, equivalent to the gold answer (CAS, numeric fallback)'),
  z
    .object({
      kind: z.literal('command'),
      command: z
        .array(z.string().min(1))
        .min(1)
        .describe("argv, run in the config file's folder: the rollout as JSON on stdin, a verdict JSON {pass, score?, extracted?, reason?} on stdout"),
      timeoutMs: z.number().int().positive().default(30_000),
    })
    .strict(),
]);
export type VerifierSpec = z.infer<typeof VerifierSpecSchema>;

export const HttpToolSchema = z
  .object({
    name: z.string().regex(/^[A-Za-z_][A-Za-z0-9_-]*$/),
    description: z.string().min(1),
    parameters: z.record(z.string(), z.unknown()).default({ type: 'object' }).describe('JSON schema of the arguments object'),
    url: z.string().url().describe('the arguments are POSTed here as JSON; the response text is the observation'),
    timeoutMs: z.number().int().positive().default(30_000),
    privateArgs: z
      .record(z.string(), z.string())
      .optional()
      .describe("arguments filled from the task's private row fields (argument name → field); nothing private is sent otherwise"),
  })
  .strict();
export type HttpToolConfig = z.infer<typeof HttpToolSchema>;

export const DomainLimitsSchema = z
  .object({
    maxTurns: z.number().int().positive().optional(),
    maxTokensPerCall: z.number().int().positive().optional(),
    maxAssistantTokens: z.number().int().positive().optional(),
    verifierTimeoutMs: z.number().int().positive().optional(),
  })
  .strict();

export const DataDomainSchema = z
  .object({
    id: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_-]*$/)
      .default('data')
      .describe('names the domain in trajectories and reports'),
    title: z.string().optional(),
    description: z.string().optional(),
    tasks: z
      .union([z.string().min(1), z.object(Object.fromEntries(SPLIT_NAMES.map((s) => [s, z.string().min(1).optional()]))).strict()])
      .describe('one task file (JSONL, JSON, CSV or Parquet; rows without a split field are split by a hash of their id), or one file per split'),
    format: z.enum(['jsonl', 'json', 'csv', 'parquet']).optional().describe('default: from the file extension'),
    fields: z
      .object({
        id: z.string().default('id'),
        question: z.string().default('question'),
        answer: z.string().default('answer').describe('a field holding one gold answer'),
        answers: z.string().optional().describe('a field holding a list of gold answers (used instead of answer)'),
        split: z.string().default('split'),
        meta: z.array(z.string()).default([]).describe('row fields a harness may see (everything else stays private)'),
      })
      .strict()
      .prefault({}),
    verifier: VerifierSpecSchema,
    tools: z.array(HttpToolSchema).default([]),
    h0: z.string().optional().describe('the initial harness folder, relative to the config file (default: the generic qa-h0)'),
    limits: DomainLimitsSchema.optional(),
    searchSpace: z.string().optional().describe('what a proposer may change (plain text)'),
  })
  .strict();
export type DataDomainConfig = z.infer<typeof DataDomainSchema>;

export const DomainRefSchema = z
  .object({
    id: z.string().min(1).optional().describe('a built-in domain (see `whale domains`)'),
    module: z
      .string()
      .min(1)
      .optional()
      .describe("a code domain: a module (TS or JS, relative to the config file) whose default export is defineDomain({...}) from 'whale/domain'"),
    data: z
      .union([z.string().min(1), DataDomainSchema])
      .optional()
      .describe(
        'a data-only domain: task files, a verifier from the library, HTTP tools — inline, or the path of a JSON file holding them (its relative paths resolve against its own folder)',
      ),
    options: z
      .record(z.string(), z.unknown())
      .default({})
      .describe("the domain's options (built-ins: tasksFile, sizes; a module: what its options schema accepts)"),
    loadTimeoutMs: z.number().int().positive().optional().describe("a module's tasks() must finish within this (default 120000)"),
  })
  .strict()
  .superRefine((d, ctx) => {
    const given = (['id', 'module', 'data'] as const).filter((k) => d[k] !== undefined);
    if (given.length !== 1)
      ctx.addIssue({
        code: 'custom',
        path: given.length > 1 ? [given[1]] : [],
        message:
          given.length === 0
            ? 'name a domain: "id" (built-in), "module" (code) or "data" (task files)'
            : `give only one of "id", "module" and "data" (got ${given.join(', ')})`,
      });
  });
export type DomainRef = z.infer<typeof DomainRefSchema>;

/** Online RSFT (weight phase). Embedded defaults fit a 2-core CPU; the paper's are B 256, G 8, lr 1e-7, minibatch 64. */
export const RsftSchema = z
  .object({
    batchPrompts: z.number().int().positive().default(32).describe('B: prompts per RSFT step'),
    groupSize: z.number().int().positive().default(8).describe('G: trajectories per prompt'),
    learningRate: z.number().positive().default(1e-4).describe('embedded default from a sweep (scripts/exp-rsft.ts); the paper uses 1e-7 on a 2B model'),
    minibatch: z.number().int().positive().default(8).describe('trajectories per optimizer step (all the examples of a trajectory stay in one minibatch)'),
    loss: z
      .enum(['token-mean', 'sequence-mean'])
      .default('token-mean')
      .describe(
        "minibatch normalisation: 'token-mean' = −Σ masked logp / accepted tokens of the minibatch (the public WHALE code); 'sequence-mean' = the mean over trajectories of each one's token-mean NLL (the paper's formula)",
      ),
  })
  .strict();
export type RsftConfig = z.infer<typeof RsftSchema>;

/** The `llm` proposer (search.proposer = 'llm'): a model with tools over the archive. Keys come from env vars only. */
export const LlmProposerSchema = z
  .object({
    provider: z.enum(['anthropic', 'openai']).describe("'anthropic' (Messages API) or 'openai' (chat completions; any compatible server by baseUrl)"),
    model: z.string().min(1),
    baseUrl: z.string().url().optional().describe("API base URL (default: the provider's); e.g. a vLLM server http://host:8000/v1"),
    apiKeyEnv: z.string().min(1).optional().describe('env var holding the key (default ANTHROPIC_API_KEY / OPENAI_API_KEY)'),
    temperature: z.number().min(0).max(2).optional(),
    effort: z
      .enum(['low', 'medium', 'high', 'xhigh', 'max'])
      .optional()
      .describe('anthropic output_config.effort / openai reasoning_effort; omitted when unset'),
    maxTokens: z.number().int().positive().default(8192).describe('completion tokens per model call'),
    requestTimeoutMs: z.number().int().positive().default(600_000).describe('one HTTP request'),
    sessionTimeoutMs: z.number().int().positive().default(2_400_000).describe("one round's whole session (the paper: 2400 s)"),
    maxRetries: z.number().int().nonnegative().default(5).describe('retries of a transient API error (429, 529, 5xx, timeout)'),
    retryBaseMs: z.number().int().positive().default(2000).describe('first backoff; doubles per retry'),
    retryMaxMs: z.number().int().positive().default(120_000).describe('longest sleep between retries, whatever Retry-After says'),
    price: z
      .object({
        inputPerMillion: z.number().nonnegative().describe('dollars per million input tokens'),
        outputPerMillion: z.number().nonnegative().describe('dollars per million output tokens'),
      })
      .strict(),
    maxDollarsPerRound: z.number().positive().optional().describe("a round's session stops before a call that could pass it"),
    maxToolCalls: z.number().int().positive().default(200).describe('tool calls per session'),
    toolOutputChars: z.number().int().positive().default(20_000).describe('cap on one tool result (the model pages past it)'),
  })
  .strict();
export type LlmProposerConfig = z.infer<typeof LlmProposerSchema>;

export const SearchSchema = z
  .object({
    proposer: z.enum(['knob', 'llm']).default('knob'),
    candidatesPerRound: z.number().int().positive().default(3).describe('M: new candidates per round'),
    acceptance: z
      .enum(['archive-best', 'paired'])
      .default('archive-best')
      .describe("'archive-best' as in the paper; 'paired' accepts a challenger only when a paired re-evaluation against the incumbent clears its noise"),
    pairedSamples: z.number().int().positive().default(2).describe('fresh samples per task in the paired re-evaluation'),
    pairedZ: z.number().nonnegative().default(1).describe('the challenger must beat the incumbent by z standard errors of the paired difference'),
    harnessTasks: z.number().int().positive().optional().describe('evaluate candidates on only the first N tasks of the harness split'),
    llm: LlmProposerSchema.optional().describe("the llm proposer's settings (required when proposer is 'llm')"),
  })
  .strict()
  .superRefine((s, ctx) => {
    if (s.proposer === 'llm' && !s.llm)
      ctx.addIssue({ code: 'custom', path: ['llm'], message: "search.proposer is 'llm' but search.llm (provider, model, price) is missing" });
  });
export type SearchConfig = z.infer<typeof SearchSchema>;

export const ScheduleSchema = z
  .object({
    epochs: z.number().default(0.25).describe('E: weight-phase length in epochs of the weight split (fixed schedule)'),
    iterations: z.number().int().default(3).describe('I: harness-phase length, counting the seed evaluation (I = 3 means 2 proposal rounds)'),
    cycles: z.number().int().positive().default(2).describe('weight+harness cycles (fixed and adaptive schedules)'),
    start: z
      .enum(['weight', 'harness'])
      .default('weight')
      .describe("the phase an alternating schedule (whale, fst, adaptive, stagewise) begins with; 'harness' searches under the starting weights first"),
    adaptive: z
      .object({
        minEpochs: z.number().positive().default(0.2).describe('T_min: epochs of the weight split a weight phase runs at least (the paper: 0.2)'),
        windowEpochs: z
          .number()
          .positive()
          .default(0.2)
          .describe('W: epochs of training reward in the sliding mean (the paper: 0.2; rounded up to whole steps)'),
        patienceEpochs: z
          .number()
          .positive()
          .default(0.2)
          .describe('P_w: epochs without a new high of the sliding mean before the phase stops (the paper: 0.2; rounded up to whole steps)'),
        maxEpochs: z.number().positive().optional().describe('an optional cap on a weight phase, in epochs; the paper has none (the budget ends a run)'),
        minIterations: z.number().int().positive().default(3).describe('J_min'),
        patienceIterations: z.number().int().positive().default(2).describe('P_h'),
        maxIterations: z.number().int().positive().default(8),
      })
      .strict()
      .prefault({}),
    stagewise: z
      .object({
        epochs: z.number().optional().describe("E*; default WHALE's total, cycles × E (the paper's stagewise: (2.7, 32))"),
        iterations: z.number().int().optional().describe("I*; default WHALE's total, 1 + cycles × (I − 1)"),
      })
      .strict()
      .prefault({}),
  })
  .strict();
export type ScheduleConfig = z.infer<typeof ScheduleSchema>;

export const METHODS = ['whale', 'adaptive', 'stagewise', 'weight-only', 'harness-only', 'fst'] as const;
export type Method = (typeof METHODS)[number];

export const BUDGET_MODES = ['equal-total', 'matched-steps'] as const;
export type BudgetMode = (typeof BUDGET_MODES)[number];

export const BudgetSchema = z
  .object({
    mode: z
      .enum(BUDGET_MODES)
      .default('equal-total')
      .describe(
        "'equal-total': `rollouts` caps training + search rollouts together; 'matched-steps' (the paper): every method gets WHALE's number of RSFT steps (cycles × the steps of E; weight-only runs `cycles` weight phases, stagewise one phase of that length) and search comes on top — `rollouts`, if set, caps training rollouts only",
      ),
    rollouts: z.number().int().positive().optional().describe("training + search rollouts ('equal-total'), training rollouts only ('matched-steps')"),
    dollars: z.number().nonnegative().optional().describe('proposer spend'),
    wallMinutes: z.number().positive().optional(),
  })
  .strict();
export type BudgetConfig = z.infer<typeof BudgetSchema>;

export const WhaleConfigSchema = z
  .object({
    $schema: z.string().optional(),
    name: z.string().min(1),
    domain: DomainRefSchema,
    harness: z.string().min(1).describe('folder of the initial harness h0, relative to the config file'),
    backend: BackendSchema.default({ kind: 'embedded', model: 'base', maxBatch: 64 }),
    sampling: SamplingSchema.default({ temperature: 1, top_p: 1, max_tokens: 64 }),
    evaluation: EvaluationSchema.default({ k: 8, split: 'val', seed: 0, concurrency: 32 }),
    sandbox: SandboxLimitsSchema.default({ wallMs: 30_000, cpuMs: 20_000, memoryMb: 256, outputBytes: 1_000_000, maxTurns: 16, maxTokens: 4096 }),
    store: z.string().default('.whale').describe('run store folder, relative to the config file'),
    method: z.enum(METHODS).default('whale'),
    seed: z.number().int().default(0).describe('run seed: task order, sampling, proposals'),
    rsft: RsftSchema.prefault({}),
    search: SearchSchema.prefault({}),
    schedule: ScheduleSchema.prefault({}),
    budget: BudgetSchema.prefault({}),
  })
  .strict();
export type WhaleConfig = z.infer<typeof WhaleConfigSchema>;

/** A config is a few KB; this cap refuses a runaway file before it is read. */
export const MAX_CONFIG_BYTES = 1024 * 1024;

export function loadConfig(file: string): WhaleConfig {
  return readJsonWithSchema(file, WhaleConfigSchema, MAX_CONFIG_BYTES);
}
