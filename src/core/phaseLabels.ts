// How a validation point is named to people. Phase -1 is the baseline: the initial harness h0 under
// the initial weights, evaluated before any phase runs ("after phase -1" read as a bug).

export function validationLabel(phase: number): string {
  return phase < 0 ? 'baseline validation (h0, base weights)' : `validation after phase ${phase}`;
}

/** Where a best pair was chosen, after a value: "62.5% (after phase 3)". */
export function chosenWhere(phase: number): string {
  return phase < 0 ? 'baseline validation (h0, base weights)' : `after phase ${phase}`;
}
