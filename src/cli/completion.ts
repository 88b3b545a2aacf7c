// `whale completion bash|zsh|fish`: a completion script generated from the command descriptions, so it
// always knows every command, option and choice list that `--help` shows.
import { InputError } from '../core/errors.js';
import type { CommandDescription, OptionSpec, Values } from './command.js';
import { COMMAND_SPECS } from './commandSpecs.js';

const SHELLS = ['bash', 'zsh', 'fish'] as const;
/** Options whose value is a path: completed with file names. */
const isPath = (o: OptionSpec) => o.type === 'string' && /FILE|DIR/.test(o.arg ?? '');
const entries = (): [string, CommandDescription][] => Object.entries(COMMAND_SPECS);

function bash(): string {
  const lines = [
    '# whale completion for bash: eval "$(whale completion bash)" (e.g. in ~/.bashrc)',
    '_whale() {',
    '  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" opts="" files=0',
    '  COMPREPLY=()',
    '  if [ "$COMP_CWORD" -eq 1 ]; then',
    `    COMPREPLY=($(compgen -W "${entries()
      .map(([n]) => n)
      .join(' ')} --help --version" -- "$cur")); return 0`,
    '  fi',
    '  case "${COMP_WORDS[1]}" in',
  ];
  for (const [name, c] of entries()) {
    const opts = Object.entries(c.options);
    lines.push(`    ${name})`, `      opts="${[...opts.map(([k]) => `--${k}`), '--help'].join(' ')}"`, '      case "$prev" in');
    for (const [k, o] of opts) {
      if (o.choices) lines.push(`        --${k}) COMPREPLY=($(compgen -W "${o.choices.join(' ')}" -- "$cur")); return 0 ;;`);
      else if (isPath(o)) lines.push(`        --${k}) COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;`);
      else if (o.type === 'string') lines.push(`        --${k}) return 0 ;;`);
    }
    lines.push('      esac', ...(c.args ? ['      files=1'] : []), '      ;;');
  }
  lines.push(
    '  esac',
    '  if [[ "$cur" == -* || "$files" == 0 ]]; then COMPREPLY=($(compgen -W "$opts" -- "$cur")); else COMPREPLY=($(compgen -f -- "$cur")); fi',
    '}',
    'complete -o filenames -F _whale whale',
  );
  return lines.join('\n') + '\n';
}

const zq = (s: string) => s.replace(/[[\]:]/g, (m) => (m === ':' ? ' -' : m === '[' ? '(' : ')')).replace(/'/g, "'\\''");

function zsh(): string {
  const lines = [
    '#compdef whale',
    '# whale completion for zsh: eval "$(whale completion zsh)" (after compinit), or save it as _whale on $fpath',
    '_whale() {',
    '  local -a commands',
    `  commands=(${entries()
      .map(([n, c]) => `'${n}:${zq(c.summary)}'`)
      .join(' ')})`,
    "  if (( CURRENT == 2 )); then _describe -t commands 'whale command' commands; _arguments '--help[show help]' '--version[print the version]'; return; fi",
    '  local cmd=$words[2]',
    '  shift words; (( CURRENT-- ))',
    '  case $cmd in',
  ];
  for (const [name, c] of entries()) {
    const specs = Object.entries(c.options).map(([k, o]) => {
      const rep = o.multiple ? '*' : '';
      if (o.type === 'boolean') return `'${rep}--${k}[${zq(o.help)}]'`;
      const action = o.choices ? `(${o.choices.join(' ')})` : isPath(o) ? '_files' : ' ';
      return `'${rep}--${k}=[${zq(o.help)}]:${zq(o.arg ?? 'value')}:${action}'`;
    });
    specs.push("'(-h --help)'{-h,--help}'[show help]'");
    if (c.args) specs.push("'*::arg:_files'");
    lines.push(`    ${name}) _arguments ${specs.join(' ')} ;;`);
  }
  lines.push('  esac', '}', 'if [[ $zsh_eval_context[-1] == loadautofunc ]]; then _whale "$@"; else compdef _whale whale; fi');
  return lines.join('\n') + '\n';
}

const fq = (s: string) => `'${s.replace(/[\\']/g, (m) => `\\${m}`)}'`;

function fish(): string {
  const names = entries()
    .map(([n]) => n)
    .join(' ');
  const lines = ['# whale completion for fish: whale completion fish | source (or save it as ~/.config/fish/completions/whale.fish)', 'complete -c whale -f'];
  lines.push(
    `complete -c whale -n 'not __fish_seen_subcommand_from ${names}' -l help -s h -d 'show help'`,
    `complete -c whale -n 'not __fish_seen_subcommand_from ${names}' -l version -s V -d 'print the version'`,
  );
  for (const [name, c] of entries()) {
    lines.push(`complete -c whale -n 'not __fish_seen_subcommand_from ${names}' -a ${name} -d ${fq(c.summary)}`);
    const when = `-n '__fish_seen_subcommand_from ${name}'`;
    for (const [k, o] of Object.entries(c.options)) {
      const value = o.type === 'boolean' ? '' : o.choices ? ` -x -a ${fq(o.choices.join(' '))}` : isPath(o) ? ' -r -F' : ' -x';
      lines.push(`complete -c whale ${when} -l ${k}${value} -d ${fq(o.help)}`);
    }
    if (c.args) lines.push(`complete -c whale ${when} -F`);
  }
  return lines.join('\n') + '\n';
}

export async function run(_values: Values, positionals: string[]): Promise<number> {
  const shell = positionals[0];
  if (!shell || !(SHELLS as readonly string[]).includes(shell))
    throw new InputError({ file: '(command line)', field: 'SHELL' }, `name the shell: whale completion ${SHELLS.join('|')}`);
  process.stdout.write(shell === 'bash' ? bash() : shell === 'zsh' ? zsh() : fish());
  return 0;
}
