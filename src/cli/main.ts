import { isStorageFault, storageError } from '../archive/storageError.js';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { WhaleError, InputError } from '../core/errors.js';
import { evalCommand } from './evalCommand.js';
import { initCommand } from './initCommand.js';
import { serveCommand } from './serveCommand.js';
import { domainsCommand } from './domainsCommand.js';
import { runCommand, statusCommand, stepCommand, stopCommand } from './runCommands.js';
import { reportCommand } from './reportCommand.js';
import { candidateCommand } from './candidateCommand.js';
import { annotateCommand } from './annotateCommand.js';
import { backendCommand } from './backendCommand.js';

export interface CommandSpec {
  summary: string;
  usage: string;
  options: NonNullable<ParseArgsConfig['options']>;
  run(values: Record<string, string | boolean | undefined>, positionals: string[]): Promise<number>;
}

const COMMANDS: Record<string, CommandSpec> = {
  init: initCommand,
  run: runCommand,
  step: stepCommand,
  stop: stopCommand,
  status: statusCommand,
  report: reportCommand,
  eval: evalCommand,
  serve: serveCommand,
  domains: domainsCommand,
  candidate: candidateCommand,
  annotate: annotateCommand,
  backend: backendCommand,
};

function help(): string {
  const lines = ['whale — Weight-Harness Alternating LEarning', '', 'Commands:'];
  for (const [name, c] of Object.entries(COMMANDS)) lines.push(`  ${name.padEnd(9)} ${c.summary}`);
  lines.push('', 'Run `whale <command> --help` for its options.');
  return lines.join('\n');
}

function commandHelp(name: string, c: CommandSpec): string {
  const opts = Object.entries(c.options).map(([k, o]) => `  --${k}${o.type === 'string' ? ' <value>' : ''}`);
  return [`whale ${name}: ${c.summary}`, '', `Usage: ${c.usage}`, '', 'Options:', ...opts].join('\n');
}

/** Entry point of the CLI; returns the exit code (0 ok, 1 failure, 2 bad usage or input). */
export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(help());
    return 0;
  }
  const cmd = COMMANDS[name];
  if (!cmd) {
    console.error(`whale: unknown command '${name}'\n\n${help()}`);
    return 2;
  }
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options: { ...cmd.options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  } catch (e) {
    console.error(`whale ${name}: ${(e as Error).message}\n\n${commandHelp(name, cmd)}`);
    return 2;
  }
  if (parsed.values.help) {
    console.log(commandHelp(name, cmd));
    return 0;
  }
  try {
    return await cmd.run(parsed.values as Record<string, string | boolean | undefined>, parsed.positionals);
  } catch (e) {
    if (e instanceof InputError) {
      console.error(`whale ${name}: invalid input\n${e.message}`);
      return 2;
    }
    if (e instanceof WhaleError) {
      console.error(`whale ${name}: ${e.message}`);
      return 1;
    }
    if (isStorageFault(e) && e.path) {
      console.error(`whale ${name}: ${storageError(e, e.path, 'use').message}`);
      return 1;
    }
    console.error(`whale ${name}: internal error\n${(e as Error).stack ?? String(e)}`);
    return 1;
  }
}
