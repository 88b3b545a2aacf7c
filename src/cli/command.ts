import type { ParseArgsConfig } from 'node:util';

export type Values = Record<string, string | boolean | undefined>;

/** One option: parseArgs' own fields plus what `--help` and shell completion show. */
export interface OptionSpec {
  type: 'string' | 'boolean';
  multiple?: boolean;
  short?: string;
  /** One line for `--help`. */
  help: string;
  /** The value's placeholder in the usage line, e.g. `N`, `DIR` (string options; default `VALUE`). */
  arg?: string;
  /** What happens when the option is absent, as `--help` shows it (never passed to parseArgs). */
  default?: string;
  /** The values a string option takes, for completion and `--help`. */
  choices?: readonly string[];
}

export type Options = Record<string, OptionSpec>;

export type RunFn = (values: Values, positionals: string[]) => Promise<number>;

/** What `--help` and completion show of a command (commandSpecs.ts): no code of its own. */
export interface CommandDescription {
  summary: string;
  /** Positional arguments as the usage line shows them, e.g. `[DIR]`. */
  args?: string;
  /** Other accepted forms, shown under Usage (commands with subcommands). */
  forms?: string[];
  options: Options;
}

/**
 * A command of the CLI: its light description, and `load`, which imports the code that runs it only
 * when it runs, so `whale --help` and completion never load the engine or tfjs.
 */
export interface CommandSpec extends CommandDescription {
  load(): Promise<RunFn>;
}

/** The parseArgs configuration for a command's options (our display-only fields dropped). */
export function parseArgsOptions(options: Options): NonNullable<ParseArgsConfig['options']> {
  const out: NonNullable<ParseArgsConfig['options']> = {};
  for (const [name, o] of Object.entries(options))
    out[name] = { type: o.type, ...(o.multiple ? { multiple: true } : {}), ...(o.short ? { short: o.short } : {}) };
  return out;
}

export const flag = {
  config: { type: 'string', arg: 'FILE', help: 'the project config', default: '$WHALE_CONFIG, else the nearest whale.config.json in this folder or a parent' },
  store: { type: 'string', arg: 'DIR', help: 'the run store (without a config: a store by itself)', default: "the config's store (.whale)" },
  json: { type: 'boolean', help: 'print the result as JSON on stdout (logs stay on stderr)' },
  run: { type: 'string', arg: 'ID', help: 'the run to act on', default: 'the current run' },
} as const satisfies Options;
