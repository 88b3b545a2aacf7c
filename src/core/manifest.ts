import { z } from 'zod';

/** A declared knob: a value the harness reads from ctx.knobs, with the domain the knob search may draw from. */
export const KnobSpec = z.union([
  z.object({ type: z.literal('int'), min: z.number().int(), max: z.number().int(), default: z.number().int() }),
  z.object({
    type: z.literal('enum'),
    values: z.array(z.union([z.string(), z.number(), z.boolean()])).min(1),
    default: z.union([z.string(), z.number(), z.boolean()]),
  }),
  z.object({ type: z.literal('bool'), default: z.boolean() }),
]);
export type KnobSpec = z.infer<typeof KnobSpec>;

/** `harness.json`: what a candidate is and how to run it. */
/** harness.json is a small manifest (prompt strings included); anything larger is refused unread. */
export const MAX_MANIFEST_BYTES = 1024 * 1024;

export const HarnessManifest = z
  .object({
    name: z.string().min(1),
    description: z.string().default(''),
    /** 'node' runs `entry` (a .js/.mjs/.ts file built with the SDK); 'command' runs `command` speaking the same protocol. */
    runtime: z.enum(['node', 'command']).default('node'),
    entry: z.string().optional(),
    command: z.array(z.string()).min(1).optional(),
    knobs: z.record(z.string(), KnobSpec).default({}),
    /** Current knob values (the knob proposer edits these). */
    settings: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).default({}),
    /** Names of the prompt strings (in `prompts`) that FST mode may change. */
    prompts: z.record(z.string(), z.string()).default({}),
    /**
     * Optional alternatives for prompt strings: `promptVariants.system = ['', 'answer briefly .']`.
     * The offline knob proposer chooses among them (the only change it makes in FST mode); an LLM
     * proposer may read them as hints. Every key must name a string in `prompts`. Not seen by the harness.
     */
    promptVariants: z.record(z.string(), z.array(z.string()).min(1)).default({}),
  })
  .superRefine((m, ctx) => {
    if (m.runtime === 'node' && !m.entry) ctx.addIssue({ code: 'custom', path: ['entry'], message: "runtime 'node' needs an entry file" });
    if (m.runtime === 'command' && !m.command) ctx.addIssue({ code: 'custom', path: ['command'], message: "runtime 'command' needs a command array" });
    for (const k of Object.keys(m.promptVariants))
      if (!(k in m.prompts)) ctx.addIssue({ code: 'custom', path: ['promptVariants', k], message: `no prompt '${k}' is declared in prompts` });
    for (const [k, v] of Object.entries(m.settings)) {
      const spec = m.knobs[k];
      if (!spec) ctx.addIssue({ code: 'custom', path: ['settings', k], message: `no knob '${k}' is declared in knobs` });
      else if (spec.type === 'int' && (typeof v !== 'number' || v < spec.min || v > spec.max || !Number.isInteger(v)))
        ctx.addIssue({ code: 'custom', path: ['settings', k], message: `must be an integer in [${spec.min}, ${spec.max}]` });
      else if (spec.type === 'enum' && !spec.values.includes(v))
        ctx.addIssue({ code: 'custom', path: ['settings', k], message: `must be one of ${JSON.stringify(spec.values)}` });
      else if (spec.type === 'bool' && typeof v !== 'boolean') ctx.addIssue({ code: 'custom', path: ['settings', k], message: 'must be a boolean' });
    }
  });
export type HarnessManifest = z.infer<typeof HarnessManifest>;
