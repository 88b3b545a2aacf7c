/**
 * A unified line diff for the proposer's `diff` tool (what changed between a candidate and its
 * parent is what a Meta-Harness proposer reads most after traces). The edit script is Myers' (the
 * `diff` package, as git's default), on lines; past MAX_EDIT_LENGTH changed lines the tool says so
 * instead of spending time on a diff nobody reads whole.
 */
import { diffArrays } from 'diff';

export const MAX_DIFF_LINES = 200_000;
const MAX_EDIT_LENGTH = 20_000;

type Op = { kind: ' ' | '-' | '+'; line: string };

function ops(a: string[], b: string[]): Op[] | undefined {
  const changes = diffArrays(a, b, { maxEditLength: MAX_EDIT_LENGTH });
  if (!changes) return undefined;
  return changes.flatMap((c) => c.value.map((line): Op => ({ kind: c.added ? '+' : c.removed ? '-' : ' ', line })));
}

/** Unified diff hunks (3 lines of context) of two texts (null: the file does not exist), or '' when equal. */
export function unifiedDiff(before: string | null, after: string | null, name: string, context = 3): string {
  if (before === after) return '';
  const a = before === null ? [] : before.split('\n');
  const b = after === null ? [] : after.split('\n');
  if (a.length > MAX_DIFF_LINES || b.length > MAX_DIFF_LINES)
    return `--- ${name}\n+++ ${name}\n(too large to diff: ${a.length} and ${b.length} lines; read both versions)`;
  const all = ops(a, b);
  if (!all) return `--- ${name}\n+++ ${name}\n(more than ${MAX_EDIT_LENGTH} changed lines; read both versions)`;
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
