/**
 * A unified line diff for the proposer's `diff` tool (what changed between a candidate and its
 * parent is what a Meta-Harness proposer reads most after traces). LCS by dynamic programming:
 * harness files are a few hundred lines; larger inputs are refused rather than made slow.
 */

export const MAX_DIFF_LINES = 3000;

type Op = { kind: ' ' | '-' | '+'; line: string };

function ops(a: string[], b: string[]): Op[] {
  const n = a.length;
  const m = b.length;
  // lcs[i][j]: length of the LCS of a[i..] and b[j..], in one flat array.
  const lcs = new Uint32Array((n + 1) * (m + 1));
  const at = (i: number, j: number) => i * (m + 1) + j;
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) lcs[at(i, j)] = a[i] === b[j] ? lcs[at(i + 1, j + 1)] + 1 : Math.max(lcs[at(i + 1, j)], lcs[at(i, j + 1)]);
  const out: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      out.push({ kind: ' ', line: a[i] });
      i++;
      j++;
    } else if (lcs[at(i + 1, j)] >= lcs[at(i, j + 1)]) out.push({ kind: '-', line: a[i++] });
    else out.push({ kind: '+', line: b[j++] });
  }
  while (i < n) out.push({ kind: '-', line: a[i++] });
  while (j < m) out.push({ kind: '+', line: b[j++] });
  return out;
}

/** Unified diff hunks (3 lines of context) of two texts (null: the file does not exist), or '' when equal. */
export function unifiedDiff(before: string | null, after: string | null, name: string, context = 3): string {
  if (before === after) return '';
  const a = before === null ? [] : before.split('\n');
  const b = after === null ? [] : after.split('\n');
  if (a.length > MAX_DIFF_LINES || b.length > MAX_DIFF_LINES) return `--- ${name}\n+++ ${name}\n(too large to diff: ${a.length} and ${b.length} lines; read both versions)`;
  const all = ops(a, b);
  const changed = all.map((o, k) => (o.kind !== ' ' ? k : -1)).filter((k) => k >= 0);
  const hunks: string[] = [before === null ? '--- /dev/null' : `--- a/${name}`, after === null ? '+++ /dev/null' : `+++ b/${name}`];
  let k = 0;
  while (k < changed.length) {
    const start = Math.max(0, changed[k] - context);
    let end = changed[k];
    while (k + 1 < changed.length && changed[k + 1] - end <= 2 * context + 1) end = changed[++k];
    end = Math.min(all.length - 1, end + context);
    k++;
    // Line numbers of the hunk's start in each version.
    let la = 1;
    let lb = 1;
    for (let x = 0; x < start; x++) {
      if (all[x].kind !== '+') la++;
      if (all[x].kind !== '-') lb++;
    }
    const slice = all.slice(start, end + 1);
    const na = slice.filter((o) => o.kind !== '+').length;
    const nb = slice.filter((o) => o.kind !== '-').length;
    // An empty side starts at line 0, as in git.
    hunks.push(`@@ -${na ? la : la - 1},${na} +${nb ? lb : lb - 1},${nb} @@`, ...slice.map((o) => `${o.kind}${o.line}`));
  }
  return hunks.join('\n');
}
