/**
 * What the harness phase gives a proposer beyond the archive view, and keeps of its sessions:
 *
 * - the session log: `runs/<id>/proposer/phase-<p>-round-<r>.jsonl`, one JSON object per line
 *   (session_start, model_call with tokens and dollars, retry, tool_call with args and output size,
 *   session_end). The proposer appends to it as it goes; a proposer that only returns `Proposal.log`
 *   (the knob one) has it written after the round.
 * - money a session spent and could not report (the engine was killed mid-session, or the session
 *   threw): the next attempt at the round finds the old log, charges its dollars to the ledger
 *   (`proposer_session_lost`) and moves the file aside, so nothing paid for goes uncounted.
 * - a `validate` callback: the phase's own validation of a folder, cached by tree hash, so the smoke
 *   run a proposer triggers is not paid for again when the phase validates the archived candidate.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { gitTreeHash } from '../core/treeHash.js';
import { dollarsInLog } from '../search/llm/llmProposer.js';
import type { ValidateOptions, ValidationResult } from '../search/validate.js';
import { validateCandidate } from '../search/validate.js';
import type { RunContext } from './context.js';

export function sessionLogFile(runDir: string, phase: number, round: number): string {
  return join(runDir, 'proposer', `phase-${phase}-round-${round}.jsonl`);
}

function readLog(file: string): { kind?: string; dollars?: number }[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as { kind?: string; dollars?: number }];
      } catch {
        return [];
      }
    });
}

/** Charges (and moves aside) the log of an earlier, unfinished session of this round. */
export function chargeLostSession(ctx: Pick<RunContext, 'journal'>, phase: number, round: number, file: string): void {
  if (!existsSync(file)) return;
  const dollars = dollarsInLog(readLog(file));
  let n = 1;
  while (existsSync(file.replace(/\.jsonl$/, `.lost-${n}.jsonl`))) n++;
  const aside = file.replace(/\.jsonl$/, `.lost-${n}.jsonl`);
  renameSync(file, aside);
  ctx.journal.append('proposer_session_lost', { phase, round, dollars, log: aside });
}

/** Writes a returned Proposal.log when the proposer did not stream one into the file. */
export function saveSessionLog(file: string, log: unknown[] | undefined): void {
  if (!log || existsSync(file)) return;
  mkdirSync(dirname(file), { recursive: true });
  appendFileSync(file, log.map((e) => JSON.stringify(e) + '\n').join(''));
}

/** Validation of a folder, memoised by tree hash for the round (the phase and the proposer share it). */
export class ValidationCache {
  private readonly done = new Map<string, Promise<ValidationResult>>();

  constructor(private readonly opts: () => Promise<ValidateOptions>) {}

  validate(dir: string, treeHash = gitTreeHash(dir)): Promise<ValidationResult> {
    let p = this.done.get(treeHash);
    if (!p) {
      p = this.opts().then((o) => validateCandidate(dir, o));
      this.done.set(treeHash, p);
    }
    return p;
  }
}
