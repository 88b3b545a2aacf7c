// vscode-free: a proposer session as a document a person reads (Markdown, shown as a preview): the
// session's model, cost and end; the candidates it wrote with their fate; each model call's text;
// each tool call with its arguments and answer folded; its report. Built from the session log the
// proposer streams (runs/<id>/proposer/phase-<p>-round-<r>.jsonl) and the round's journal rows.
import { clipLine } from './archiveModel.js';
import { shortHash } from './identity.js';
import { describeRoundCandidate, type ProposerSessionNode, type RoundCandidate } from './runsModel.js';

type LogLine = Record<string, unknown> & { kind?: string };

export interface ProposerTranscriptInput {
  run: string;
  phase: number;
  session: ProposerSessionNode;
  /** The session log's lines (parsed JSONL); empty when the proposer kept none. */
  log: readonly LogLine[];
  /** The round's candidates as the phase scored or rejected them, with their hypotheses when archived. */
  candidates: readonly RoundCandidate[];
  hypothesisOf?: (treeHash: string) => string | undefined;
  /** The policy the round's candidates were scored under, named. */
  policy?: string;
}

/** Parses a session log, skipping torn lines (a session killed mid-write). */
export function parseSessionLog(text: string): LogLine[] {
  return text.split('\n').flatMap((l) => {
    if (!l.trim()) return [];
    try {
      const v = JSON.parse(l) as unknown;
      return v && typeof v === 'object' ? [v as LogLine] : [];
    } catch {
      return [];
    }
  });
}

const str = (x: unknown) => (typeof x === 'string' ? x : '');
const num = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x : 0);
const money = (x: number) => `$${x.toFixed(4)}`;
/** A fenced block that no backtick run inside the text can close. */
function fence(text: string, lang = ''): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const f = '`'.repeat(longest + 1);
  return `${f}${lang}\n${text}\n${f}`;
}
/** Text inside an HTML summary: the preview renders it as HTML, so markup characters are escaped. */
const html = (t: string) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Tool arguments as pretty JSON when they parse, else as given. */
function prettyArgs(raw: string): { text: string; lang: string } {
  try {
    return { text: JSON.stringify(JSON.parse(raw), null, 2), lang: 'json' };
  } catch {
    return { text: raw, lang: '' };
  }
}

/** "read_file(path: harness.ts)": a tool call in a line, from its arguments' first scalar fields. */
export function toolCallLine(tool: string, rawArgs: string): string {
  let args = '';
  try {
    const v = JSON.parse(rawArgs) as unknown;
    if (v && typeof v === 'object' && !Array.isArray(v))
      args = Object.entries(v as Record<string, unknown>)
        .filter(([, x]) => typeof x !== 'object')
        .slice(0, 3)
        .map(([k, x]) => `${k}: ${clipLine(String(x), 40)}`)
        .join(', ');
  } catch {
    args = clipLine(rawArgs, 60);
  }
  return `${tool}(${args})`;
}

export function renderProposerTranscript(x: ProposerTranscriptInput): string {
  const { session } = x;
  const start = x.log.find((e) => e.kind === 'session_start');
  const end = [...x.log].reverse().find((e) => e.kind === 'session_end');
  const out: string[] = [`# Proposer session — run ${x.run}, phase ${x.phase}, round ${session.round}`, ''];
  const who = start ? `${session.proposer} proposer · ${str(start.provider)} ${str(start.model)}` : `${session.proposer} proposer`;
  const counts = end
    ? `${num(end.modelCalls)} model call(s), ${num(end.toolCalls)} tool call(s), ${num(end.inputTokens)} input / ${num(end.outputTokens)} output tokens`
    : '';
  out.push(
    `**${who}**${counts ? ` · ${counts}` : ''} · ${money(session.dollars)}${end ? ` · ended: ${str(end.reason)}` : ''}${session.stopped && session.stopped !== str(end?.reason) ? ` · stopped: ${session.stopped}` : ''}`,
    '',
  );

  out.push('## Candidates it wrote', '');
  if (x.candidates.length === 0) out.push('_No candidate of this round reached the phase._', '');
  else {
    out.push(`| candidate | what it tries | result${x.policy ? ` (harness split, under ${x.policy})` : ''} |`, '|---|---|---|');
    for (const c of x.candidates) {
      const name = c.treeHash ? `\`${shortHash(c.treeHash)}\`` : `(no folder: ${c.dir ?? '?'})`;
      const hyp = (c.treeHash ? x.hypothesisOf?.(c.treeHash) : undefined) ?? '';
      out.push(`| ${name} | ${clipLine(hyp, 160).replace(/\|/g, '\\|')} | ${describeRoundCandidate(c).replace(/\|/g, '\\|')} |`);
    }
    out.push('');
  }

  const knob = x.log.filter((e) => e.kind === 'knob');
  for (const k of knob) {
    const proposed = Array.isArray(k.proposed) ? (k.proposed as { hypothesis?: unknown; parents?: unknown }[]) : [];
    out.push(`## Knob mutation (seed ${num(k.seed)})`, '');
    for (const p of proposed)
      out.push(`- from ${Array.isArray(p.parents) ? p.parents.map((h) => `\`${shortHash(String(h))}\``).join(' + ') : '?'}: ${str(p.hypothesis)}`);
    out.push('');
  }

  const calls = x.log.filter((e) => e.kind === 'model_call');
  if (calls.length) out.push('## Conversation', '');
  for (const c of calls) {
    const n = num(c.call);
    out.push(
      `### Model call ${n}`,
      '',
      `_${num(c.inputTokens)} in / ${num(c.outputTokens)} out tokens · ${money(num(c.dollars))} · ${(num(c.ms) / 1000).toFixed(1)} s · stop: ${str(c.stop)}_`,
      '',
    );
    const text = str(c.text).trim();
    out.push(
      text
        ? text
            .split('\n')
            .map((l) => `> ${l}`)
            .join('\n')
        : '_(no text: tool calls only)_',
      '',
    );
    for (const r of x.log.filter((e) => e.kind === 'retry' && num(e.call) === n))
      out.push(`- ⟳ retry ${num(r.attempt)}${r.status ? ` (HTTP ${num(r.status)})` : ''}: ${str(r.error)}`);
    for (const t of x.log.filter((e) => e.kind === 'tool_call' && num(e.call) === n)) {
      const args = prettyArgs(str(t.args));
      const clippedArgs =
        num(t.argsChars) > str(t.args).length ? `\n\n_(arguments: ${num(t.argsChars)} characters, the first ${str(t.args).length} kept)_` : '';
      const output = typeof t.output === 'string' ? t.output : undefined;
      const clippedOut =
        output !== undefined && num(t.outputChars) > output.length ? `\n\n_(answer: ${num(t.outputChars)} characters, the first ${output.length} kept)_` : '';
      out.push(
        '',
        `<details><summary>${t.isError ? '✗' : '🔧'} ${html(toolCallLine(str(t.tool), str(t.args)))} → ${num(t.outputChars).toLocaleString('en-US')} chars${t.isError ? ' (error)' : ''} · ${num(t.ms)} ms</summary>`,
        '',
        '**arguments**',
        '',
        fence(args.text, args.lang) + clippedArgs,
        '',
        '**answer**',
        '',
        output !== undefined ? fence(output) + clippedOut : '_(not kept: this session log predates answers in logs)_',
        '',
        '</details>',
      );
    }
    out.push('');
  }
  if (x.log.length === 0) out.push('_This proposer kept no session log: only its report is known._', '');

  out.push('## Report', '', session.report.trim() || '_(no report)_', '');
  return out.join('\n');
}
