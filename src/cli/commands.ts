// The command registry: each command's description (commandSpecs.ts) with the loader that imports
// its code only when it runs, so `whale --help` and completion never load the engine or tfjs.
import type { CommandSpec, RunFn } from './command.js';
import { COMMAND_SPECS } from './commandSpecs.js';

const LOADERS: Record<keyof typeof COMMAND_SPECS, () => Promise<RunFn>> = {
  init: () => import('./initCommand.js').then((m) => m.run),
  run: () => import('./runCommands.js').then((m) => m.runRun),
  step: () => import('./runCommands.js').then((m) => m.runStep),
  stop: () => import('./runCommands.js').then((m) => m.runStop),
  status: () => import('./runCommands.js').then((m) => m.runStatus),
  report: () => import('./reportCommand.js').then((m) => m.run),
  eval: () => import('./evalCommand.js').then((m) => m.run),
  serve: () => import('./serveCommand.js').then((m) => m.run),
  domains: () => import('./domainsCommand.js').then((m) => m.run),
  domain: () => import('./domainCommand.js').then((m) => m.run),
  candidate: () => import('./candidateCommand.js').then((m) => m.run),
  annotate: () => import('./annotateCommand.js').then((m) => m.run),
  backend: () => import('./backendCommand.js').then((m) => m.run),
  retriever: () => import('./retrieverCommand.js').then((m) => m.run),
  sandbox: () => import('./sandboxCommand.js').then((m) => m.run),
  data: () => import('./dataCommand.js').then((m) => m.run),
  completion: () => import('./completion.js').then((m) => m.run),
};

export const COMMANDS: Record<string, CommandSpec> = Object.fromEntries(
  Object.entries(COMMAND_SPECS).map(([name, spec]) => [name, { ...spec, load: LOADERS[name as keyof typeof COMMAND_SPECS] }]),
);
