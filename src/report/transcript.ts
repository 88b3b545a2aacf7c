// A trajectory as a readable text document (the editor's transcript view), plus a map from lines
// to the structure they show, so decorations, hovers and comments can find a turn or a call by line.
// Pure: no I/O, no vscode. The verifier's data stays hidden: only verdict, score, reason and the
// extracted answer are shown, never what the task's hidden fields hold.
import type { ChatMessage, HarnessEvent, ModelCall, Trajectory } from '../core/trajectory.js';

export type LineKind =
  'header' | 'verdict' | 'turn' | 'call' | 'message' | 'completion' | 'tool' | 'observation' | 'error' | 'limit' | 'log' | 'final' | 'termination' | 'clipped';

/** A run of lines that shows one thing. `turn` is 0-based (turn i = model call i). */
export interface Segment {
  kind: LineKind;
  /** 0-based, inclusive. */
  startLine: number;
  endLine: number;
  turn?: number;
  /** Index into trajectory.modelCalls (for 'call', 'message', 'completion'). */
  call?: number;
  /** Index into trajectory.events. */
  event?: number;
}

export interface Transcript {
  text: string;
  segments: Segment[];
  /** Lines: the verdict line; lines to mark as truncated (turn/token limits, finish=length); errors. */
  marks: { verdict: { line: number; pass: boolean }; truncated: number[]; errors: number[] };
  /** True when the trajectory was too big to show whole. */
  clipped: boolean;
}

export interface TranscriptLimits {
  /** Characters of one message, completion, argument or observation before it is cut. */
  maxFieldChars: number;
  /** Lines of the whole document before the remaining turns are left out. */
  maxLines: number;
}

export const DEFAULT_TRANSCRIPT_LIMITS: TranscriptLimits = { maxFieldChars: 4000, maxLines: 20_000 };

const TRUNCATING = new Set(['turn_limit', 'token_limit', 'timeout', 'cpu_limit', 'memory_limit', 'output_limit']);
const FAILING = new Set(['crash', 'protocol_error', 'rule_violation', 'error']);

/** Whether a termination is a budget running out (rendered as truncation) rather than an answer or a fault. */
export function isTruncation(termination: string): boolean {
  return TRUNCATING.has(termination);
}

class Writer {
  readonly lines: string[] = [];
  readonly segments: Segment[] = [];
  full = false;
  constructor(public maxLines: number) {}

  /** Adds lines as one segment; returns false (adding nothing) once the document is full. */
  add(kind: LineKind, text: string | string[], at: Omit<Segment, 'kind' | 'startLine' | 'endLine'> = {}): boolean {
    if (this.full) return false;
    const lines = (Array.isArray(text) ? text : [text]).flatMap((t) => t.split('\n'));
    if (this.lines.length + lines.length > this.maxLines) {
      this.full = true;
      return false;
    }
    const startLine = this.lines.length;
    this.lines.push(...lines);
    this.segments.push({ kind, startLine, endLine: this.lines.length - 1, ...at });
    return true;
  }

  get next(): number {
    return this.lines.length;
  }
}

/** Cuts a long field, saying how much was cut. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}… [${(text.length - max).toLocaleString('en-US')} more characters not shown]`;
}

const indent = (text: string, prefix = '    ') => text.split('\n').map((l) => prefix + l);

function messagesEqual(a: ChatMessage, b: ChatMessage): boolean {
  return a.role === b.role && a.content === b.content && (a.name ?? '') === (b.name ?? '');
}

/**
 * The messages of call i that the transcript has not shown yet: when call i's messages extend
 * call i-1's messages plus its completion, only the extension; otherwise (the harness rewrote its
 * context) all of them, flagged.
 */
export function newMessages(calls: readonly ModelCall[], i: number): { skipped: number; messages: ChatMessage[]; rewritten: boolean } {
  const msgs = calls[i].messages;
  if (i === 0) return { skipped: 0, messages: msgs, rewritten: false };
  const prev = calls[i - 1];
  const seen: ChatMessage[] = [...prev.messages, { role: 'assistant', content: prev.completion }];
  let common = 0;
  while (common < seen.length && common < msgs.length && messagesEqual(seen[common], msgs[common])) common++;
  // The previous completion counts as seen even when the harness dropped or reworded it.
  const prefixKept = common >= prev.messages.length;
  if (!prefixKept) return { skipped: 0, messages: msgs, rewritten: true };
  return { skipped: common, messages: msgs.slice(common), rewritten: false };
}

const pct = (x: number) => `${Math.round(100 * x)}%`;
const secs = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`);

/** Mean and minimum token logprob of a call, when the backend gave them. */
export function logprobStats(call: ModelCall): { mean: number; min: number } | undefined {
  const lp = call.logprobs;
  if (!lp || lp.length === 0) return undefined;
  return { mean: lp.reduce((a, b) => a + b, 0) / lp.length, min: Math.min(...lp) };
}

/** The details a hover on a model call shows (Markdown lines). */
export function callDetails(call: ModelCall): string[] {
  const lp = logprobStats(call);
  const params = Object.entries(call.params)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(', ');
  return [
    `**Model call ${call.index + 1}** · policy \`${call.policyVersion}\``,
    `- tokens: ${call.usage.promptTokens} prompt + ${call.usage.completionTokens} completion`,
    `- finish reason: \`${call.finishReason}\`${call.finishReason === 'length' ? ' (cut by max_tokens)' : ''}`,
    `- logprob: ${lp ? `mean ${lp.mean.toFixed(3)}, min ${lp.min.toFixed(3)} over ${call.logprobs!.length} tokens` : 'not recorded by the backend'}`,
    `- latency: ${secs(call.latencyMs)}${call.t !== undefined ? `, sent at ${secs(call.t)}` : ''}`,
    `- messages sent: ${call.messages.length}${params ? `; params: ${params}` : ''}`,
  ];
}

function eventLines(e: HarnessEvent, max: number): { kind: LineKind; head: string; body?: string[] } {
  const at = `@${secs(e.t)}`;
  switch (e.type) {
    case 'tool': {
      const args = e.args === undefined ? '' : clip(JSON.stringify(e.args), max);
      const body =
        e.observation !== undefined ? indent(clip(e.observation, max), '    → ') : e.message !== undefined ? indent(clip(e.message, max), '    ✗ ') : undefined;
      return { kind: e.message !== undefined && e.observation === undefined ? 'error' : 'tool', head: `  • tool ${e.name ?? '?'}(${args}) ${at}`, body };
    }
    case 'error':
      return { kind: 'error', head: `  ! error${e.name ? ` ${e.name}` : ''}: ${clip(e.message ?? '', max)} ${at}` };
    case 'limit':
      return { kind: 'limit', head: `  ⊘ limit${e.name ? ` ${e.name}` : ''}: ${clip(e.message ?? '', max)} ${at}` };
    default:
      return {
        kind: 'log',
        head: `  · log${e.name ? ` ${e.name}` : ''}: ${clip(e.message ?? '', max)}${e.data !== undefined ? ' ' + clip(JSON.stringify(e.data), max) : ''} ${at}`,
      };
  }
}

/**
 * Which turn each event belongs to: the last call sent at or before it (before the first call:
 * turn -1, the preamble). Without call times (older records) every event goes after the last turn.
 */
export function eventTurns(t: Pick<Trajectory, 'modelCalls' | 'events'>): number[] {
  const timed = t.modelCalls.every((c) => c.t !== undefined);
  return t.events.map((e) => {
    if (!timed) return t.modelCalls.length - 1;
    let turn = -1;
    for (let i = 0; i < t.modelCalls.length; i++) if (t.modelCalls[i].t! <= e.t) turn = i;
    return turn;
  });
}

export function renderTranscript(t: Trajectory, limits: TranscriptLimits = DEFAULT_TRANSCRIPT_LIMITS): Transcript {
  const w = new Writer(limits.maxLines);
  const max = limits.maxFieldChars;
  const promptTokens = t.modelCalls.reduce((a, c) => a + c.usage.promptTokens, 0);
  const completionTokens = t.modelCalls.reduce((a, c) => a + c.usage.completionTokens, 0);
  w.add('header', [
    `# Trajectory ${t.id}`,
    `harness     ${t.harnessHash}`,
    `policy      ${t.policyVersion}`,
    `task        ${t.taskId}   (domain ${t.domain}, split ${t.split}, sample ${t.sampleIndex}, seed ${t.seed})`,
    ...(t.runId ? [`run         ${t.runId}${t.phase !== undefined ? `   phase ${t.phase}` : ''}`] : []),
  ]);
  const verdictLine = w.next;
  const v = t.verdict;
  w.add(
    'verdict',
    `verdict     ${v.pass ? 'PASS' : 'FAIL'}   score ${v.score}   ${clip(v.reason, max)}${v.extracted !== null ? `   (extracted: ${clip(JSON.stringify(v.extracted), 200)})` : ''}`,
  );
  const truncated: number[] = [];
  const errors: number[] = [];
  const endLine = w.next;
  w.add(
    'termination',
    `ended       ${t.termination}${t.terminationDetail ? ` — ${clip(t.terminationDetail, max)}` : ''}   · ${t.modelCalls.length} model call${t.modelCalls.length === 1 ? '' : 's'} · ${promptTokens}+${completionTokens} tokens · ${secs(t.timings.wallMs)}`,
  );
  if (isTruncation(t.termination)) truncated.push(endLine);
  if (FAILING.has(t.termination)) errors.push(endLine);

  const turnOf = eventTurns(t);
  const writeEvents = (turn: number): boolean => {
    for (let i = 0; i < t.events.length; i++) {
      if (turnOf[i] !== turn) continue;
      const r = eventLines(t.events[i], max);
      const at = { ...(turn >= 0 ? { turn } : {}), event: i };
      const line = w.next;
      if (!w.add(r.kind, r.head, at)) return false;
      if (r.body && !w.add(r.kind === 'tool' ? 'observation' : r.kind, r.body, at)) return false;
      if (r.kind === 'error') errors.push(line);
      if (r.kind === 'limit') truncated.push(line);
    }
    return true;
  };

  let shownTurns = 0;
  const body = (): boolean => {
    w.add('header', '');
    if (!writeEvents(-1)) return false;
    for (let i = 0; i < t.modelCalls.length; i++) {
      const c = t.modelCalls[i];
      if (!w.add('turn', `══ turn ${i + 1} ${'═'.repeat(60)}`, { turn: i })) return false;
      const lp = logprobStats(c);
      const callLine = w.next;
      if (
        !w.add(
          'call',
          `▶ model call ${i + 1} · ${c.usage.promptTokens} prompt + ${c.usage.completionTokens} completion tokens · finish ${c.finishReason} · ${secs(c.latencyMs)}${lp ? ` · mean logprob ${lp.mean.toFixed(2)}` : ''}`,
          { turn: i, call: i },
        )
      )
        return false;
      if (c.finishReason === 'length') truncated.push(callLine);
      if (c.finishReason === 'error') errors.push(callLine);
      const nm = newMessages(t.modelCalls, i);
      if (nm.skipped > 0 && !w.add('message', `  (${nm.skipped} earlier message${nm.skipped === 1 ? '' : 's'} as before)`, { turn: i, call: i })) return false;
      if (nm.rewritten && !w.add('message', `  (context rewritten by the harness: all ${nm.messages.length} messages sent)`, { turn: i, call: i }))
        return false;
      for (const m of nm.messages) {
        if (!w.add('message', [`  [${m.role}${m.name ? ` ${m.name}` : ''}]`, ...indent(clip(m.content, max))], { turn: i, call: i })) return false;
      }
      if (!w.add('completion', ['◀ completion', ...indent(clip(c.completion, max))], { turn: i, call: i })) return false;
      if (!writeEvents(i)) return false;
      shownTurns = i + 1;
    }
    return true;
  };
  const whole = body();
  const clipped = !whole;
  if (!whole) {
    // The document is full: say so plainly, then still show how it ended (space reserved below).
    w.full = false;
    w.maxLines = Number.POSITIVE_INFINITY;
    w.add(
      'clipped',
      `⋯ transcript truncated at ${limits.maxLines.toLocaleString('en-US')} lines: ${t.modelCalls.length - shownTurns} of ${t.modelCalls.length} turns not shown`,
    );
    truncated.push(w.next - 1);
  }
  w.add('header', '══ end ' + '═'.repeat(64));
  w.add('final', `final answer  ${t.finalAnswer === null ? '(none)' : clip(JSON.stringify(t.finalAnswer), max)}`);
  const termLine = w.next;
  w.add('termination', `termination   ${t.termination}${t.terminationDetail ? ` — ${clip(t.terminationDetail, max)}` : ''}`);
  if (isTruncation(t.termination)) truncated.push(termLine);
  if (FAILING.has(t.termination)) errors.push(termLine);
  if (t.modelCalls.length > 0) {
    const lengthCut = t.modelCalls.filter((c) => c.finishReason === 'length').length;
    if (lengthCut > 0)
      w.add(
        'termination',
        `note          ${lengthCut} completion${lengthCut === 1 ? '' : 's'} cut by max_tokens (${pct(lengthCut / t.modelCalls.length)} of calls)`,
      );
  }
  return { text: w.lines.join('\n') + '\n', segments: w.segments, marks: { verdict: { line: verdictLine, pass: v.pass }, truncated, errors }, clipped };
}

/** The innermost segment at a line (a call or event line rather than its turn). */
export function segmentAt(tr: Pick<Transcript, 'segments'>, line: number): Segment | undefined {
  let found: Segment | undefined;
  for (const s of tr.segments) if (s.startLine <= line && line <= s.endLine) found = s;
  return found;
}

/** The turn shown on a line range (the first turn it touches), or undefined for header/footer lines. */
export function turnAt(tr: Pick<Transcript, 'segments'>, startLine: number, endLine = startLine): number | undefined {
  for (const s of tr.segments) if (s.turn !== undefined && s.endLine >= startLine && s.startLine <= endLine) return s.turn;
  return undefined;
}

/** The line of a turn's header, for placing a note made on that turn. */
export function turnLine(tr: Pick<Transcript, 'segments'>, turn: number): number | undefined {
  return tr.segments.find((s) => s.kind === 'turn' && s.turn === turn)?.startLine;
}
