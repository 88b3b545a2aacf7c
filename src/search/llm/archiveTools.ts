/**
 * The tools an LLM proposer works with: a read-only window on the round's ArchiveView, and
 * `write_candidate`, the only way to write anything.
 *
 * What can be read is exactly what the view offers: the sources of the view's candidates (through
 * `view.materialize`), their scores, the per-task results and trajectories of THEIR evaluations
 * (never a key the view does not list, never a test-split evaluation), annotations and past reports.
 * Trajectories are shown without the verifier's reason (it states the expected answer) and without
 * token ids. Nothing reads the environment, the run store or any path named by the model.
 *
 * `write_candidate` copies the parent's folder into a fresh folder under the request's outDir and
 * applies the model's files there; relative paths only (no `..`, no absolute paths, no links, no
 * .git), capped sizes. If the request carries a `validate` callback the candidate is validated at
 * once, and a failing one may be revised ONCE with the error in hand.
 */
import { forEachLineSync } from '../../core/lineReader.js';
import { chmodSync, cpSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, posix, sep } from 'node:path';
import { runInNewContext } from 'node:vm';
import type { Trajectory } from '../../core/trajectory.js';
import { IGNORED } from '../../core/treeHash.js';
import { type ArchiveView, type CandidateRecord, type CandidateScore, type ProposeRequest, scoreUnder } from '../proposer.js';
import type { ToolSpec } from './clients.js';
import { unifiedDiff } from './lineDiff.js';
import { page } from './paging.js';

const MAX_FILE_BYTES = 256 * 1024;
const MAX_CANDIDATE_BYTES = 1024 * 1024;
const MAX_FILES = 64;
/** A string argument (a hash, a path, a filter, a pattern) longer than this is refused. */
const MAX_ARG_CHARS = 4096;
const MAX_HYPOTHESIS_CHARS = 4000;
const MAX_REPORT_CHARS = 64 * 1024;
const MAX_PATH_CHARS = 1024;
/** A grep whose regular expression runs longer than this is stopped (catastrophic backtracking would hang the engine). */
const GREP_TIMEOUT_MS = 2000;

export class ToolError extends Error {}

export interface WrittenCandidate {
  name: string;
  dir: string;
  parents: string[];
  hypothesis: string;
  /** undefined when nothing validated it in the session. */
  valid?: boolean;
  reasons: string[];
  /** The failed candidate of this session this one revises. */
  revisionOf?: string;
  /** The revision written for this one (it had its one second chance). */
  supersededBy?: string;
}

export interface ToolOutcome {
  output: string;
  isError: boolean;
  /** The model called `finish`. */
  finished?: { report: string };
}

type Args = Record<string, unknown>;

const str = (a: Args, k: string, required = true, max = MAX_ARG_CHARS): string | undefined => {
  const v = a[k];
  if (v === undefined && !required) return undefined;
  if (typeof v !== 'string' || (required && v === '')) throw new ToolError(`argument '${k}' must be a non-empty string`);
  if (v.length > max) throw new ToolError(`argument '${k}' is ${v.length} characters; at most ${max}`);
  return v;
};
const bool = (a: Args, k: string): boolean => {
  const v = a[k];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw new ToolError(`argument '${k}' must be true or false`);
  return v;
};
/** A name the model sent, shown back clipped and escaped (it may be huge or hold control characters). */
const shown = (name: string) => JSON.stringify(name.length > 80 ? name.slice(0, 80) + '…' : name);
const int = (a: Args, k: string, dflt: number, min = 0, max = Number.MAX_SAFE_INTEGER): number => {
  const v = a[k];
  if (v === undefined || v === null) return dflt;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    throw new ToolError(`argument '${k}' must be an integer in ${min}..${max === Number.MAX_SAFE_INTEGER ? '∞' : max}`);
  return v;
};

const PAGING = {
  offset: { type: 'integer', minimum: 0, description: 'first item to show (default 0)' },
  limit: { type: 'integer', minimum: 1, description: 'items to show at most' },
};
const CANDIDATE = { type: 'string', description: 'a candidate tree hash or a unique prefix of one (at least 6 characters)' };
const VERSION = { type: 'string', description: "a policy version (default: the round's version, else the candidate's latest evaluation)" };

export const TOOL_SPECS: ToolSpec[] = [
  {
    name: 'list_candidates',
    description:
      "Every candidate of the run: tree hash, parents, round, origin, validity (with reasons), hypothesis, and its scores on the search split under each policy version (mean pass rate, standard error, mean turns). Best first under the round's policy version.",
    schema: { type: 'object', properties: { ...PAGING }, additionalProperties: false },
  },
  {
    name: 'list_files',
    description: "A candidate's files with their sizes.",
    schema: { type: 'object', properties: { candidate: CANDIDATE }, required: ['candidate'], additionalProperties: false },
  },
  {
    name: 'read_file',
    description: 'A file of a candidate, with line numbers. Paged by lines.',
    schema: {
      type: 'object',
      properties: { candidate: CANDIDATE, path: { type: 'string' }, ...PAGING },
      required: ['candidate', 'path'],
      additionalProperties: false,
    },
  },
  {
    name: 'grep',
    description: 'Lines matching a regular expression (JavaScript syntax) in the files of one candidate or of all of them.',
    schema: {
      type: 'object',
      properties: { pattern: { type: 'string' }, candidate: CANDIDATE, ignore_case: { type: 'boolean' }, ...PAGING },
      required: ['pattern'],
      additionalProperties: false,
    },
  },
  {
    name: 'diff',
    description: 'Unified diff of every file between two candidates (default: the candidate against its first parent).',
    schema: {
      type: 'object',
      properties: { candidate: CANDIDATE, against: { ...CANDIDATE, description: 'the candidate to compare with (default: its first parent)' }, ...PAGING },
      required: ['candidate'],
      additionalProperties: false,
    },
  },
  {
    name: 'task_results',
    description: "Per-task results of a candidate's evaluation on the search split: passes, samples, terminations. Worst first.",
    schema: { type: 'object', properties: { candidate: CANDIDATE, policy_version: VERSION, ...PAGING }, required: ['candidate'], additionalProperties: false },
  },
  {
    name: 'trajectories',
    description:
      "Transcripts of a candidate's rollouts on the search split (model messages and completions, tool calls and observations, final answer, termination, pass/fail). Filter by verdict, termination or task. Paged by trajectory.",
    schema: {
      type: 'object',
      properties: {
        candidate: CANDIDATE,
        policy_version: VERSION,
        verdict: { type: 'string', enum: ['pass', 'fail'] },
        termination: { type: 'string' },
        task: { type: 'string', description: 'a task id' },
        ...PAGING,
      },
      required: ['candidate'],
      additionalProperties: false,
    },
  },
  {
    name: 'annotations',
    description: 'Comments people wrote on trajectories, tasks or candidates.',
    schema: { type: 'object', properties: { ...PAGING }, additionalProperties: false },
  },
  {
    name: 'past_reports',
    description: 'The reports written in earlier rounds (what was tried, what it gave).',
    schema: { type: 'object', properties: { ...PAGING }, additionalProperties: false },
  },
  {
    name: 'write_candidate',
    description:
      "Writes a new candidate: a copy of the parent's folder with the given files replaced or added (full contents) and `delete` removed. Returns whether it passed validation (manifest, bundling, a one-task smoke run, the search mode's rules). A candidate that fails may be fixed ONCE: call write_candidate again with `revise` set to its name.",
    schema: {
      type: 'object',
      properties: {
        parent: CANDIDATE,
        files: { type: 'object', additionalProperties: { type: 'string' }, description: 'relative path → full new content' },
        delete: { type: 'array', items: { type: 'string' }, description: 'relative paths to remove from the copy' },
        hypothesis: { type: 'string', description: 'what the change is and why it should help (one or two sentences)' },
        revise: { type: 'string', description: 'the name of a candidate of this session that failed validation, to replace it' },
      },
      required: ['parent', 'files', 'hypothesis'],
      additionalProperties: false,
    },
  },
  {
    name: 'finish',
    description: 'Ends the round. `report`: a short Markdown report of the round (what the traces showed, what each candidate changes and why).',
    schema: { type: 'object', properties: { report: { type: 'string' } }, required: ['report'], additionalProperties: false },
  },
];

/**
 * A relative path inside a candidate, normalised; throws a ToolError naming the argument (`arg`) and
 * saying why it is refused.
 */
export function safeRelativePath(p: unknown, arg = 'path'): string {
  const refuse = (why: string) => new ToolError(`argument '${arg}': ${why}`);
  if (typeof p !== 'string' || p.trim() === '') throw refuse('a path must be a non-empty string');
  if (p.length > MAX_PATH_CHARS) throw refuse(`a path of ${p.length} characters; at most ${MAX_PATH_CHARS}`);
  const q = shown(p);
  if (p.includes('\0')) throw refuse(`path ${q} contains a NUL byte`);
  if (/[\x01-\x1f\x7f]/.test(p)) throw refuse(`path ${q} contains a control character`);
  if (p.includes('\\')) throw refuse(`path ${q}: use '/' as the separator`);
  if (posix.isAbsolute(p) || /^[A-Za-z]:/.test(p)) throw refuse(`path ${q} is absolute; paths are relative to the candidate folder`);
  const norm = posix.normalize(p);
  if (norm === '..' || norm.startsWith('../') || p.split('/').includes('..')) throw refuse(`path ${q} leaves the candidate folder ('..' is not allowed)`);
  if (norm === '.' || norm === './') throw refuse(`path ${q} is the candidate folder itself; name a file in it`);
  if (norm.split('/').some((s) => s.length > 255)) throw refuse(`path ${q} has a name longer than 255 characters`);
  if (norm.split('/').some((s) => IGNORED.has(s))) throw refuse(`path ${q} names a reserved folder (${[...IGNORED].join(', ')})`);
  return norm.replace(/^\.\//, '').replace(/\/$/, '');
}

function listTree(root: string): { path: string; size: number }[] {
  const out: { path: string; size: number }[] = [];
  const walk = (d: string, rel: string) => {
    for (const name of readdirSync(d).sort()) {
      if (IGNORED.has(name)) continue;
      const full = join(d, name);
      const path = rel ? `${rel}/${name}` : name;
      const st = lstatSync(full);
      if (st.isDirectory()) walk(full, path);
      else if (st.isFile()) out.push({ path, size: st.size });
      else out.push({ path: `${path} (a link or special file: not readable)`, size: 0 });
    }
  };
  walk(root, '');
  return out;
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const fmtScore = (s: CandidateScore) => `${pct(s.mean)} ± ${pct(s.se)}, ${s.meanTurns.toFixed(2)} turns (policy ${s.policyVersion})`;

/** The outcome of a trajectory without the verifier's private reason. */
function outcome(t: Trajectory): string {
  if (t.verdict.pass) return 'pass';
  if (t.finalAnswer === null || t.verdict.extracted === null) return 'fail (no answer)';
  return 'fail (wrong answer)';
}

/** A readable transcript: each model call's new messages and completion, the harness events, the end. */
export function transcript(t: Trajectory): string {
  const lines = [
    `## trajectory ${t.id} — task ${t.taskId}, sample ${t.sampleIndex}: ${outcome(t)}; termination ${t.termination}${t.terminationDetail ? ` (${t.terminationDetail})` : ''}`,
  ];
  let prev: { role: string; content: string }[] = [];
  for (const call of t.modelCalls) {
    const isPrefix = prev.length <= call.messages.length && prev.every((m, i) => call.messages[i]?.role === m.role && call.messages[i]?.content === m.content);
    const fresh = isPrefix ? call.messages.slice(prev.length) : call.messages;
    if (!isPrefix) lines.push(`(call ${call.index}: the harness rebuilt the context)`);
    for (const m of fresh) lines.push(`[${m.role}] ${m.content}`);
    lines.push(`[model → call ${call.index}, ${call.finishReason}, ${call.usage.completionTokens} tokens] ${call.completion}`);
    prev = [...call.messages, { role: 'assistant', content: call.completion }];
  }
  for (const e of t.events) {
    if (e.type === 'tool') lines.push(`[tool ${e.name ?? ''} @${Math.round(e.t)}ms] args ${JSON.stringify(e.args)} → ${e.observation ?? ''}`);
    else lines.push(`[${e.type}${e.name ? ` ${e.name}` : ''}] ${e.message ?? ''}${e.data !== undefined ? ` ${JSON.stringify(e.data)}` : ''}`);
  }
  lines.push(
    `final answer: ${t.finalAnswer === null ? '(none)' : JSON.stringify(t.finalAnswer)}${t.verdict.extracted !== null ? `; the verifier read ${JSON.stringify(t.verdict.extracted)}` : ''}`,
  );
  return lines.join('\n');
}

export class ArchiveTools {
  readonly written: WrittenCandidate[] = [];
  private readonly view: ArchiveView;

  constructor(
    private readonly req: ProposeRequest,
    private readonly cap: number,
  ) {
    this.view = req.view;
  }

  /** Slots still open: candidates not yet written, plus failed ones that may still be revised. */
  pending(): { toWrite: number; toRevise: string[] } {
    const firsts = this.written.filter((w) => w.revisionOf === undefined);
    return { toWrite: Math.max(0, this.req.count - firsts.length), toRevise: firsts.filter((w) => w.valid === false && !w.supersededBy).map((w) => w.name) };
  }

  async call(name: string, args: Args | undefined, argsError?: string): Promise<ToolOutcome> {
    if (!TOOL_SPECS.some((t) => t.name === name))
      return { output: `unknown tool '${name}'. The tools are: ${TOOL_SPECS.map((t) => t.name).join(', ')}.`, isError: true };
    if (argsError || !args)
      return { output: `${name}: ${argsError ?? 'no arguments'}. Send the arguments as a JSON object matching the tool's schema.`, isError: true };
    const known = Object.keys((TOOL_SPECS.find((t) => t.name === name)!.schema as { properties: Record<string, unknown> }).properties);
    const unknown = Object.keys(args).filter((k) => !known.includes(k));
    if (unknown.length)
      return {
        output: `${name}: unknown argument${unknown.length > 1 ? 's' : ''} ${unknown.slice(0, 5).map(shown).join(', ')}; ${name} takes ${known.join(', ') || 'no arguments'}`,
        isError: true,
      };
    try {
      return await this.dispatch(name, args);
    } catch (e) {
      if (e instanceof ToolError) return { output: `${name}: ${e.message}`, isError: true };
      // Our failure, not the model's (a file system error, a validation run that broke): the paid
      // session goes on, and the phase validates every written candidate again anyway.
      return { output: `${name}: internal error (not caused by your arguments): ${e instanceof Error ? e.message : String(e)}`, isError: true };
    }
  }

  private async dispatch(name: string, a: Args): Promise<ToolOutcome> {
    const ok = (output: string): ToolOutcome => ({ output, isError: false });
    const paging = (dflt: number, unit: string) => ({ offset: int(a, 'offset', 0), limit: int(a, 'limit', dflt, 1), cap: this.cap, unit });
    switch (name) {
      case 'list_candidates':
        return ok(page(this.candidateLines(), paging(50, 'candidates')));
      case 'list_files': {
        const c = this.candidate(a, 'candidate')!;
        const files = listTree(await this.view.materialize(c.treeHash));
        return ok(
          page(
            files.map((f) => `${f.path}\t${f.size} bytes`),
            paging(500, 'files'),
          ),
        );
      }
      case 'read_file': {
        const c = this.candidate(a, 'candidate')!;
        const rel = safeRelativePath(a.path);
        const base = await this.view.materialize(c.treeHash);
        // Every component is checked: a link anywhere on the way could lead out of the candidate.
        let full = base;
        for (const part of rel.split('/')) {
          full = join(full, part);
          if (!existsSync(full) && !isLink(full))
            throw new ToolError(`argument 'path': ${rel}: no such file in candidate ${c.treeHash.slice(0, 12)} (list_files shows its files)`);
          const st = lstatSync(full);
          if (st.isSymbolicLink() || (!st.isDirectory() && !st.isFile()))
            throw new ToolError(`argument 'path': ${rel}: ${part} is a link or special file (not readable)`);
        }
        if (!lstatSync(full).isFile()) throw new ToolError(`argument 'path': ${rel}: a folder (list_files shows its files)`);
        if (lstatSync(full).size > MAX_CANDIDATE_BYTES) throw new ToolError(`argument 'path': ${rel}: ${lstatSync(full).size} bytes, too large to show`);
        const lines = readFileSync(full, 'utf8')
          .split('\n')
          .map((l, i) => `${String(i + 1).padStart(5)}  ${l}`);
        return ok(page(lines, paging(2000, 'lines')));
      }
      case 'diff': {
        const c = this.candidate(a, 'candidate')!;
        if (a.against === undefined && !c.parents[0])
          throw new ToolError(`candidate ${c.treeHash.slice(0, 12)} has no parent; name one to compare with in 'against'`);
        const base = this.candidate(a.against === undefined ? { against: c.parents[0] } : a, 'against')!;
        const [da, db] = [await this.view.materialize(base.treeHash), await this.view.materialize(c.treeHash)];
        const read = (dir: string, path: string) => (existsSync(join(dir, path)) ? readFileSync(join(dir, path), 'utf8') : null);
        const paths = [...new Set([...listTree(da), ...listTree(db)].filter((f) => !f.path.includes(' (a link')).map((f) => f.path))].sort();
        const lines = paths
          .map((path) => unifiedDiff(read(da, path), read(db, path), path))
          .filter(Boolean)
          .join('\n')
          .split('\n');
        const head = `diff ${base.treeHash.slice(0, 12)} → ${c.treeHash.slice(0, 12)}`;
        return ok(lines.length === 1 && lines[0] === '' ? `${head}: identical files` : `${head}\n` + page(lines, paging(1000, 'lines')));
      }
      case 'grep':
        return ok(await this.grep(a, paging(200, 'matches')));
      case 'task_results': {
        const s = this.evaluation(this.candidate(a, 'candidate')!, str(a, 'policy_version', false));
        const rows = [...this.view.taskResults(s.keyHash)].sort((x, y) => x.mean - y.mean || x.taskId.localeCompare(y.taskId));
        const lines = rows.map(
          (r) =>
            `${r.taskId}\t${r.passes}/${r.samples} passed\t${Object.entries(r.terminations)
              .map(([k, v]) => `${k} ${v}`)
              .join(', ')}`,
        );
        return ok(`evaluation ${s.keyHash.slice(0, 12)}: ${fmtScore(s)}\n` + page(lines, paging(300, 'tasks')));
      }
      case 'trajectories':
        return ok(this.trajectories(a, paging(5, 'trajectories')));
      case 'annotations':
        return ok(
          this.view.annotations.length === 0
            ? 'no annotations'
            : page(
                this.view.annotations.map(
                  (n) =>
                    `- ${[n.harnessHash && `candidate ${n.harnessHash.slice(0, 12)}`, n.taskId && `task ${n.taskId}`, n.trajectoryId && `trajectory ${n.trajectoryId}`, n.author && `by ${n.author}`].filter(Boolean).join(', ')}: ${n.text}`,
                ),
                paging(100, 'annotations'),
              ),
        );
      case 'past_reports':
        return ok(
          this.view.pastReports.length === 0
            ? 'no earlier reports'
            : page(
                this.view.pastReports.map((r) => `### round ${r.round}\n${r.text}`),
                paging(20, 'reports'),
              ),
        );
      case 'write_candidate':
        return ok(await this.write(a));
      case 'finish':
        return { output: 'round finished', isError: false, finished: { report: str(a, 'report', true, MAX_REPORT_CHARS)! } };
    }
    throw new ToolError('not implemented');
  }

  /** The view's candidate that `a[arg]` names (a hash or unique prefix); a ToolError naming `arg` otherwise. */
  private candidate(a: Args, arg: string, required = true): CandidateRecord | undefined {
    const ref = str(a, arg, required);
    if (ref === undefined) return undefined;
    const r = ref.trim().toLowerCase();
    if (!/^[0-9a-f]{6,40}$/.test(r))
      throw new ToolError(`argument '${arg}': ${shown(ref)} is not a candidate hash (6–40 hex digits); list_candidates shows the candidates you can read`);
    const hits = this.view.candidates.filter((c) => c.treeHash.startsWith(r));
    if (hits.length === 0)
      throw new ToolError(`argument '${arg}': no candidate '${ref}' in this archive view; list_candidates shows the candidates you can read`);
    if (hits.length > 1)
      throw new ToolError(`argument '${arg}': '${ref}' is ambiguous (${hits.map((c) => c.treeHash.slice(0, 12)).join(', ')}); give more digits`);
    return hits[0];
  }

  /** The candidate's evaluation the model may read: a search-split score listed by the view, never the test split. */
  private evaluation(c: CandidateRecord, version?: string): CandidateScore {
    const readable = c.scores.filter((s) => s.split !== 'test');
    const s =
      version !== undefined
        ? readable.filter((x) => x.policyVersion === version).pop()
        : (scoreUnder(c, this.view.policyVersion) ?? readable[readable.length - 1]);
    if (s && s.split !== 'test') return s;
    const versions = [...new Set(readable.map((x) => x.policyVersion))];
    throw new ToolError(
      `${version !== undefined ? "argument 'policy_version': " : ''}candidate ${c.treeHash.slice(0, 12)} has no evaluation${version !== undefined ? ` under policy ${version.slice(0, 80)}` : ''}${versions.length ? ` (it has: ${versions.join(', ')})` : ' yet'}`,
    );
  }

  private candidateLines(): string[] {
    const v = this.view.policyVersion;
    const rank = (c: CandidateRecord) => scoreUnder(c, v)?.mean ?? -1;
    return [...this.view.candidates]
      .sort((a, b) => rank(b) - rank(a) || a.round - b.round)
      .map((c) => {
        const scores = c.scores.filter((s) => s.split !== 'test');
        return [
          `- ${c.treeHash.slice(0, 12)}${c.treeHash === this.view.incumbent ? ' (incumbent)' : ''}: round ${c.round}, ${c.origin}, parents ${c.parents.map((p) => p.slice(0, 12)).join(', ') || 'none'}`,
          `  hypothesis: ${c.hypothesis.split('\n')[0]}`,
          c.valid ? undefined : `  INVALID: ${c.invalidReasons.join('; ')}`,
          scores.length ? `  scores: ${scores.map(fmtScore).join('; ')}` : '  not scored',
        ]
          .filter(Boolean)
          .join('\n');
      });
  }

  private async grep(a: Args, o: { offset: number; limit: number; cap: number; unit: string }): Promise<string> {
    const pattern = str(a, 'pattern')!;
    let re: RegExp;
    try {
      re = new RegExp(pattern, bool(a, 'ignore_case') ? 'i' : '');
    } catch (e) {
      throw new ToolError(`argument 'pattern': invalid regular expression: ${e instanceof Error ? e.message : String(e)}`);
    }
    const one = this.candidate(a, 'candidate', false);
    const cands = one ? [one] : this.view.candidates;
    const lines: string[] = [];
    const where: string[] = [];
    for (const c of cands) {
      const dir = await this.view.materialize(c.treeHash);
      for (const f of listTree(dir)) {
        if (f.size > MAX_FILE_BYTES || f.path.includes(' (a link')) continue;
        readFileSync(join(dir, f.path), 'utf8')
          .split('\n')
          .forEach((line, i) => {
            if (line.length > 2000) return;
            lines.push(line);
            where.push(`${c.treeHash.slice(0, 12)}:${f.path}:${i + 1}: `);
          });
      }
    }
    // The pattern is the model's: one that backtracks catastrophically would hang the engine, so it
    // runs under a VM timeout, which interrupts a regular expression mid-match.
    let matched: number[];
    try {
      matched = runInNewContext('lines.flatMap((l, i) => (re.test(l) ? [i] : []))', { lines, re }, { timeout: GREP_TIMEOUT_MS }) as number[];
    } catch (e) {
      if ((e as { code?: string }).code !== 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw e;
      throw new ToolError(`argument 'pattern': the regular expression ran longer than ${GREP_TIMEOUT_MS} ms (catastrophic backtracking?); simplify it`);
    }
    const hits = matched.map((i) => where[i] + lines[i]);
    return hits.length === 0 ? `no line matches /${pattern}/` : page(hits, o);
  }

  private trajectories(a: Args, o: { offset: number; limit: number; cap: number; unit: string }): string {
    const s = this.evaluation(this.candidate(a, 'candidate')!, str(a, 'policy_version', false));
    const verdict = str(a, 'verdict', false);
    if (verdict !== undefined && verdict !== 'pass' && verdict !== 'fail') throw new ToolError("argument 'verdict' must be 'pass' or 'fail'");
    const termination = str(a, 'termination', false);
    const task = str(a, 'task', false);
    const file = this.view.trajectoriesFile(s.keyHash);
    if (!existsSync(file)) throw new ToolError(`evaluation ${s.keyHash.slice(0, 12)} has no trajectories on disk`);
    const all: Trajectory[] = [];
    forEachLineSync(file, (line) => {
      if (!line.trim()) return;
      try {
        all.push(JSON.parse(line) as Trajectory);
      } catch {
        // a line torn by a crash mid-write: the store cuts it off on its next append
      }
    });
    const picked = all.filter(
      (t) =>
        t.split !== 'test' &&
        (verdict === undefined || t.verdict.pass === (verdict === 'pass')) &&
        (termination === undefined || t.termination === termination) &&
        (task === undefined || t.taskId === task),
    );
    const counts = `${picked.length} of ${all.length} trajectories match (passed ${all.filter((t) => t.verdict.pass).length}; terminations: ${Object.entries(
      countBy(all.map((t) => t.termination)),
    )
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')})`;
    return `evaluation ${s.keyHash.slice(0, 12)}: ${fmtScore(s)}\n${counts}\n\n` + page(picked.map(transcript), o);
  }

  private async write(a: Args): Promise<string> {
    const parent = this.candidate(a, 'parent')!;
    const hypothesis = str(a, 'hypothesis', true, MAX_HYPOTHESIS_CHARS)!;
    const files = a.files;
    if (typeof files !== 'object' || files === null || Array.isArray(files))
      throw new ToolError("argument 'files' must be an object mapping relative paths to file contents");
    const del = a.delete === undefined ? [] : a.delete;
    if (!Array.isArray(del) || del.some((d) => typeof d !== 'string')) throw new ToolError("argument 'delete' must be an array of relative paths");
    if (del.length > MAX_FILES) throw new ToolError(`argument 'delete': at most ${MAX_FILES} paths`);
    const revise = str(a, 'revise', false, 200);
    let slot: WrittenCandidate | undefined;
    if (revise !== undefined) {
      slot = this.written.find((w) => w.name === revise);
      if (!slot) throw new ToolError(`argument 'revise': no candidate ${shown(revise)} was written in this session`);
      if (slot.revisionOf !== undefined || slot.supersededBy !== undefined)
        throw new ToolError(
          `'${revise}' ${slot.revisionOf !== undefined ? 'is itself a revision' : 'was already revised once'}; no further revision is allowed`,
        );
      if (slot.valid !== false) throw new ToolError(`'${revise}' did not fail validation; only a failed candidate may be revised`);
    } else if (this.pending().toWrite === 0) {
      throw new ToolError(`this round asks for ${this.req.count} candidates and all are written; revise a failed one or call finish`);
    }
    const entries = Object.entries(files as Record<string, unknown>);
    if (entries.length > MAX_FILES) throw new ToolError(`argument 'files': at most ${MAX_FILES} files per candidate`);
    const writes: [string, string][] = [];
    for (const [p, content] of entries) {
      if (typeof content !== 'string') throw new ToolError(`argument 'files': files[${shown(p)}] must be the file's full content as a string`);
      if (Buffer.byteLength(content) > MAX_FILE_BYTES)
        throw new ToolError(`argument 'files': ${shown(p)}: ${Buffer.byteLength(content)} bytes is more than the ${MAX_FILE_BYTES} a file may have`);
      writes.push([safeRelativePath(p, 'files'), content]);
    }
    const deletes = (del as string[]).map((d) => safeRelativePath(d, 'delete'));

    const name = revise !== undefined ? `${revise}-revised` : `cand-${this.written.filter((w) => w.revisionOf === undefined).length + 1}`;
    const dir = join(this.req.outDir, name);
    if (existsSync(dir)) throw new ToolError(`internal: ${name} exists`);
    const from = await this.view.materialize(parent.treeHash);
    cpSync(from, dir, { recursive: true, filter: (src) => !IGNORED.has(src.slice(from.length + 1).split('/')[0] ?? '') && !lstatSync(src).isSymbolicLink() });
    makeWritable(dir);
    for (const d of deletes) rmSync(join(dir, d), { recursive: true, force: true });
    for (const [p, content] of writes) {
      const full = join(dir, p);
      // A folder on the way that is a file or a link would redirect the write: refuse.
      let up = dirname(full);
      while (up.length > dir.length) {
        if ((existsSync(up) || isLink(up)) && !lstatSync(up).isDirectory())
          throw this.abandon(dir, `argument 'files': ${shown(p)}: ${up.slice(dir.length + 1)} is not a folder`);
        up = dirname(up);
      }
      mkdirSync(dirname(full), { recursive: true });
      if ((existsSync(full) || isLink(full)) && !lstatSync(full).isFile())
        throw this.abandon(dir, `argument 'files': ${shown(p)}: exists and is not a regular file`);
      writeFileSync(full, content);
    }
    const total = listTree(dir).reduce((n, f) => n + f.size, 0);
    if (total > MAX_CANDIDATE_BYTES) throw this.abandon(dir, `the candidate would be ${total} bytes; at most ${MAX_CANDIDATE_BYTES}`);

    const entry: WrittenCandidate = { name, dir, parents: [parent.treeHash], hypothesis, reasons: [], ...(revise !== undefined ? { revisionOf: revise } : {}) };
    let verdict = 'written (not validated in this session; the harness phase validates it)';
    let v: Awaited<ReturnType<NonNullable<ProposeRequest['validate']>>> | undefined;
    try {
      v = await this.req.validate?.(dir);
    } catch (e) {
      // Our failure, not the candidate's: keep it; the phase validates every candidate again.
      verdict = `written, but validation could not run here (internal error: ${e instanceof Error ? e.message : String(e)}); the harness phase will validate it`;
    }
    if (v) {
      entry.valid = v.ok;
      // The model knows its candidate's files by relative path, not by where this session put them.
      entry.reasons = v.reasons.map((r) => r.split(dir + sep).join(''));
      verdict = v.ok
        ? `valid${v.warnings?.length ? ` (warnings: ${v.warnings.join('; ')})` : ''}; it will be evaluated`
        : `INVALID:\n${entry.reasons.map((r) => `- ${r}`).join('\n')}\n${revise === undefined ? `You may fix it once: call write_candidate with revise: "${name}".` : 'This was its one revision; it is archived as invalid.'}`;
    }
    if (slot) slot.supersededBy = name;
    this.written.push(entry);
    const left = this.pending();
    return `${name} (parent ${parent.treeHash.slice(0, 12)}; ${writes.length} file(s) written, ${deletes.length} deleted): ${verdict}\n${left.toWrite} candidate(s) still to write${left.toRevise.length ? `; may be revised: ${left.toRevise.join(', ')}` : ''}.`;
  }

  private abandon(dir: string, why: string): ToolError {
    rmSync(dir, { recursive: true, force: true });
    return new ToolError(why);
  }
}

/** A link (existsSync follows links, so a dangling one looks absent). */
function isLink(p: string): boolean {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

function makeWritable(dir: string): void {
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    const st = lstatSync(full);
    if (st.isDirectory()) {
      chmodSync(full, 0o755);
      makeWritable(full);
    } else chmodSync(full, st.mode & 0o111 ? 0o755 : 0o644);
  }
  chmodSync(dir, 0o755);
}

function countBy(xs: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of xs) out[x] = (out[x] ?? 0) + 1;
  return out;
}
