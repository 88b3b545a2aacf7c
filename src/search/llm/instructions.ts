/**
 * The proposer's instructions: the domain's search space and rules, the mode (full programs or
 * FST's prompts only), and the habits that made Meta-Harness work (REFERENCE.md §3).
 */
import type { ProposeRequest } from '../proposer.js';
import { scoreUnder } from '../proposer.js';

export function systemPrompt(req: ProposeRequest): string {
  const { view } = req;
  const mode =
    view.mode === 'fst'
      ? `MODE: FST (prompts only). A candidate may differ from the run's initial harness h0 ONLY in the values of the prompt strings under "prompts" in harness.json. Any other change (code, knobs, settings, adding or removing a prompt) is rejected by validation.`
      : `MODE: full. A candidate is a whole program: you may rewrite any file of the harness (prompts, tool use and formatting, what enters the context, parsing, error feedback, turn and token budgets, termination), within the domain's rules below.`;
  return `You are the proposer of a harness search (Meta-Harness) inside WHALE, which alternates fine-tuning of a model's weights with a search over the harness code that runs the model as an agent. Each round you read the archive of earlier candidates — their source, scores, per-task results and full trajectories — and write ${req.count} new candidate harness(es). Each is then scored with one rollout per task on the search split under policy version ${view.policyVersion}; the best across the whole archive is accepted.

DOMAIN ${view.domain.id}:
${view.domain.searchSpace}

${mode}

HOW TO WORK:
1. Diagnose before you change code. Read the incumbent's and the best candidates' source, their per-task results, and failing trajectories (trajectories with verdict "fail"; filter by termination). Find WHY rollouts fail: what the model saw, what it wrote, what the harness did with it. Read passing ones too, to keep what works.
2. Make whole-program changes that address a diagnosed failure mode, not mere parameter tweaks: changing a number or a knob setting alone is rarely worth a candidate.
3. Never put task ids, questions, answers, entity names or dataset names into the code or prompts. The harness must generalise to unseen tasks; validation and a sealed test split will tell.
4. Harness code is untrusted and sandboxed: no network, no files outside its folder, no secrets. It never sees answers. Keep it self-contained.
5. Write each candidate with write_candidate (a copy of its parent with the files you give, in full). If validation rejects one, you get the reasons and may fix it once (revise).
6. End with finish and a short report (Markdown, at most ~15 lines): what the traces showed, what each candidate changes and why, what to try next.

Tool outputs are capped; when one is cut, its last line says how to get the next page (offset).`;
}

export function firstUserMessage(req: ProposeRequest): string {
  const { view } = req;
  const inc = view.candidates.find((c) => c.treeHash === view.incumbent);
  const s = inc ? scoreUnder(inc, view.policyVersion) : undefined;
  const reports = view.pastReports.length;
  return `Round ${req.round}. The archive has ${view.candidates.length} candidate(s); the incumbent is ${view.incumbent.slice(0, 12)}${s ? `, scoring ${(100 * s.mean).toFixed(1)}% on the search split under policy ${view.policyVersion}` : ''}. ${reports ? `There ${reports === 1 ? 'is 1 earlier report' : `are ${reports} earlier reports`} (past_reports). ` : ''}${view.annotations.length ? `People left ${view.annotations.length} annotation(s) (annotations). ` : ''}${seedRequest(view)}Write ${req.count} new candidate(s), then call finish with your report.`;
}

/** A person's request to start from a chosen candidate: its id (as the tools take it), score and direction. */
function seedRequest(view: ProposeRequest['view']): string {
  if (!view.seed) return '';
  const c = view.candidates.find((x) => x.treeHash === view.seed!.treeHash);
  const s = c ? scoreUnder(c, view.policyVersion) : undefined;
  const direction = view.seed.direction.trim();
  return `A person asks that this round's candidates derive from candidate ${view.seed.treeHash.slice(0, 12)}${s ? ` (${(100 * s.mean).toFixed(1)}% on the search split)` : ''}, not from the incumbent: read its source and results first and give it as the parent in write_candidate.${direction ? ` Their direction: "${direction}"` : ''} `;
}
