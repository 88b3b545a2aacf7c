import { isStorageFault, storageError } from '../archive/storageError.js';
import { parseArgs } from 'node:util';
import { WhaleError, InputError } from '../core/errors.js';
import { installEnvProxy } from '../core/proxy.js';
import { parseArgsOptions, type CommandSpec, type OptionSpec } from './command.js';
import { COMMANDS } from './commands.js';
import { whaleVersion } from './version.js';

export type { CommandSpec } from './command.js';

/** Exit codes, as the README's CLI section documents them. */
export const EXIT = { ok: 0, failed: 1, badInput: 2 } as const;

const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  help: { type: 'boolean', short: 'h', help: 'show help (also: whale <command> --help)' },
  version: { type: 'boolean', short: 'V', help: 'print the version and exit' },
};

function optionLines(options: Record<string, OptionSpec>): string[] {
  const rows = Object.entries(options).map(([k, o]) => {
    const name = `${o.short ? `-${o.short}, ` : '    '}--${k}${o.type === 'string' ? ` <${o.arg ?? 'VALUE'}>` : ''}`;
    const choices = o.choices ? ` (${o.choices.join('|')})` : '';
    const dflt = o.default ? ` [default: ${o.default}]` : '';
    return [name, `${o.help}${choices}${dflt}`];
  });
  const width = Math.max(0, ...rows.map(([n]) => n.length));
  return rows.map(([n, d]) => `  ${n.padEnd(width)}  ${d}`);
}

function usageLine(name: string, c: CommandSpec): string {
  const opts = Object.entries(c.options).map(([k, o]) => `[--${k}${o.type === 'string' ? ` ${o.arg ?? 'VALUE'}` : ''}]`);
  return ['whale', name, ...(c.args ? [c.args] : []), ...opts, '[-h]'].join(' ');
}

function help(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((n) => n.length));
  return [
    'whale — Weight-Harness Alternating LEarning',
    '',
    'Usage: whale [--version] [--help] <command> [options]',
    '',
    'Commands:',
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    '',
    'Options:',
    ...optionLines(GLOBAL_OPTIONS),
    '',
    'Run `whale <command> --help` for its options. Exit codes: 0 done, 1 failed, 2 bad usage or input, 130 interrupted.',
  ].join('\n');
}

export function commandHelp(name: string, c: CommandSpec): string {
  return [
    `whale ${name}: ${c.summary}`,
    '',
    `Usage: ${usageLine(name, c)}`,
    ...(c.forms ?? []).map((f) => `       ${f}`),
    '',
    'Options:',
    ...optionLines({ ...c.options, help: { type: 'boolean', short: 'h', help: 'show this help' } }),
  ].join('\n');
}

/** Entry point of the CLI; returns the exit code (0 ok, 1 failure, 2 bad usage or input). */
export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-V' || name === 'version') {
    console.log(whaleVersion());
    return EXIT.ok;
  }
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(help());
    return EXIT.ok;
  }
  const cmd = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!cmd) {
    console.error(`whale: unknown command '${name}'\n\n${help()}`);
    return EXIT.badInput;
  }
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      options: { ...parseArgsOptions(cmd.options), help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (e) {
    console.error(`whale ${name}: ${(e as Error).message}\n\n${commandHelp(name, cmd)}`);
    return EXIT.badInput;
  }
  if (parsed.values.help) {
    console.log(commandHelp(name, cmd));
    return EXIT.ok;
  }
  try {
    for (const [k, o] of Object.entries(cmd.options)) {
      const v = (parsed.values as Record<string, unknown>)[k];
      if (o.choices && typeof v === 'string' && !o.choices.includes(v))
        throw new InputError({ file: '(command line)', field: `--${k}` }, `must be one of ${o.choices.join(', ')}, got '${v}'`);
    }
    await installEnvProxy();
    const run = await cmd.load();
    return await run(parsed.values as Record<string, string | boolean | undefined>, parsed.positionals);
  } catch (e) {
    if (e instanceof InputError || (e instanceof WhaleError && e.code === 'unknown_domain')) {
      console.error(`whale ${name}: invalid input\n${e.message}`);
      return EXIT.badInput;
    }
    if (e instanceof WhaleError) {
      console.error(`whale ${name}: ${e.message}`);
      return EXIT.failed;
    }
    if (isStorageFault(e) && e.path) {
      console.error(`whale ${name}: ${storageError(e, e.path, 'use').message}`);
      return 1;
    }
    console.error(`whale ${name}: internal error\n${(e as Error).stack ?? String(e)}`);
    return EXIT.failed;
  }
}
