/**
 * Size caps for tool outputs. A model that gets a truncated result must know it was cut and how to
 * get the rest, so every page ends with a footer naming the range shown, the total and the next offset.
 */

export interface PageOptions {
  offset: number;
  limit: number;
  /** Characters the whole output may have. */
  cap: number;
  /** What an item is called in the footer ("lines", "trajectories"). */
  unit: string;
}

/** Items [offset, offset+limit) as far as `cap` allows, with a footer when anything was left out. */
export function page(items: readonly string[], o: PageOptions): string {
  const start = Math.max(0, Math.min(o.offset, items.length));
  const out: string[] = [];
  let used = 0;
  let i = start;
  let cut = false;
  for (; i < items.length && i < start + o.limit; i++) {
    const item = items[i];
    if (used + item.length + 1 > o.cap) {
      if (out.length === 0) {
        // One item larger than the cap: show its head, say so.
        out.push(
          item.slice(0, Math.max(0, o.cap - 200)) + `\n[… this item is ${item.length} characters; only the first ${Math.max(0, o.cap - 200)} are shown]`,
        );
        i++;
      }
      cut = true;
      break;
    }
    out.push(item);
    used += item.length + 1;
  }
  const end = i;
  if (start === 0 && end === items.length) return out.join('\n');
  const why = cut ? `output capped at ${o.cap} characters` : `limit ${o.limit}`;
  const next = end < items.length ? `; next page: offset=${end}` : '';
  return `${out.join('\n')}\n[${o.unit} ${items.length === 0 ? 0 : start + 1}–${end} of ${items.length} (${why})${next}]`;
}
