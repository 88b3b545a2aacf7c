/**
 * Open-domain QA scoring as the field does it (SQuAD's normalisation, used by Search-R1's `em_check`
 * and FlashRAG): lower-case, drop punctuation and the articles a/an/the, collapse whitespace. A
 * prediction matches when it equals any golden answer; token F1 is the best over golden answers.
 */

const PUNCTUATION = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g;

export function normaliseQa(s: string): string {
  return s
    .toLowerCase()
    .replace(PUNCTUATION, '')
    .replace(/\b(a|an|the)\b/g, ' ')
    .split(/\s+/)
    .filter(Boolean)
    .join(' ');
}

export function exactMatch(prediction: string, golden: readonly string[]): boolean {
  const p = normaliseQa(prediction);
  // An answer that normalises to nothing ('', 'the', '.') matches nothing, even a golden 'a'.
  return p !== '' && golden.some((g) => normaliseQa(g) === p);
}

/** Token-level F1 (SQuAD): the best over golden answers; 0 when either side normalises to nothing. */
export function tokenF1(prediction: string, golden: readonly string[]): number {
  const p = normaliseQa(prediction).split(' ').filter(Boolean);
  let best = 0;
  for (const g of golden) {
    const gt = normaliseQa(g).split(' ').filter(Boolean);
    if (p.length === 0 || gt.length === 0) continue;
    const counts = new Map<string, number>();
    for (const t of gt) counts.set(t, (counts.get(t) ?? 0) + 1);
    let common = 0;
    for (const t of p) {
      const n = counts.get(t) ?? 0;
      if (n > 0) {
        common++;
        counts.set(t, n - 1);
      }
    }
    if (common === 0) continue;
    const precision = common / p.length;
    const recall = common / gt.length;
    best = Math.max(best, (2 * precision * recall) / (precision + recall));
  }
  return best;
}
