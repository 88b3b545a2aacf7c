// How a validation point is named to people. Phase -1 is the baseline: the initial harness h0 under
// the initial weights, evaluated before any phase runs ("after phase -1" read as a bug).

const H0_BASE = '(h0, base weights)';

export function validationLabel(phase: number): string {
  return phase < 0 ? `baseline validation ${H0_BASE}` : `validation after phase ${phase}`;
}

/** Where a best pair was chosen, after a value: "62.5% (after phase 3)". */
export function chosenWhere(phase: number): string {
  return phase < 0 ? `baseline validation ${H0_BASE}` : `after phase ${phase}`;
}

/** Where the sealed test's pair came from: "best pair from phase 3" / "best pair: the baseline (h0, base weights)". */
export function bestPairFrom(phase: number): string {
  return phase < 0 ? `best pair: the baseline ${H0_BASE}` : `best pair from phase ${phase}`;
}
