// vscode-free: how the cockpit names things. One hash length for candidates everywhere in the UI,
// policies by what made them ("base", "policy after phase 2") with the hash kept for hovers.
import type { JournalEntry } from '../../archive/journal.js';

/** Hex digits a candidate (or a bare policy hash) shows in labels; the full hash goes in hovers. */
export const SHORT_HASH = 8;

export function shortHash(hash: string): string {
  return hash.slice(0, SHORT_HASH);
}

/**
 * Policy version → a name people read, from one run's journal: the run's starting policy is "base";
 * the policy a phase ends with is "policy after phase N"; one mid-phase (a weight step's) is "policy
 * after step S (phase N)". The first name a version gets wins (a harness phase keeps its policy).
 */
export function policyNames(entries: readonly JournalEntry[], into: Map<string, string> = new Map()): Map<string, string> {
  const fromStep = new Set<string>();
  const name = (v: unknown, n: string) => {
    if (typeof v !== 'string' || (into.has(v) && !fromStep.has(v))) return;
    into.set(v, n);
    fromStep.delete(v);
  };
  for (const e of entries) {
    if (e.type === 'run_started') name(e.version, 'base');
    if (e.type === 'phase_completed') name(e.version, `policy after phase ${String(e.phase)}`);
    // A weight phase's last step makes the version the phase ends with: the phase's name replaces it.
    if (e.type === 'weight_step' && typeof e.versionAfter === 'string' && !into.has(e.versionAfter)) {
      into.set(e.versionAfter, `policy after step ${Number(e.globalStep) + 1} (phase ${String(e.phase)})`);
      fromStep.add(e.versionAfter);
    }
  }
  return into;
}

/** A policy's name for a label: its journal name, else its short hash. */
export function policyLabel(version: string, names: ReadonlyMap<string, string>): string {
  return names.get(version) ?? shortHash(version);
}

/** A policy for a hover: its name and the full version. */
export function policyHover(version: string, names: ReadonlyMap<string, string>): string {
  const n = names.get(version);
  return n ? `${n} (\`${version}\`)` : `\`${version}\``;
}

/** What `whale eval --json` prints that names the figure: the split, the harness and the policy it was under. */
export interface EvaluationSummary {
  meanAtK: number;
  standardError: number;
  k: number;
  cacheHit?: boolean;
  key?: { split?: string; harnessHash?: string; policyVersion?: string };
}

/** "mean@4 on the val split = 40.0% ± 5.0 · harness 82fa96f4 under base": every h0 figure says which split and policy it is. */
export function describeEvaluation(s: EvaluationSummary, names: ReadonlyMap<string, string>): string {
  const pct = (x: number) => (100 * x).toFixed(1);
  const k = s.key ?? {};
  return (
    [
      `mean@${s.k}${k.split ? ` on the ${k.split} split` : ''} = ${pct(s.meanAtK)}% ± ${pct(s.standardError)}`,
      ...(k.harnessHash ? [`harness ${shortHash(k.harnessHash)}`] : []),
      ...(k.policyVersion ? [`under ${policyLabel(k.policyVersion, names)}`] : []),
    ].join(' · ') + (s.cacheHit ? ' (cached)' : '')
  );
}
