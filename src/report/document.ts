// A small document model for the report, rendered as Markdown or as a self-contained HTML page.

export interface Table {
  header: string[];
  rows: string[][];
  /** Per column: 'r' right-aligns (numbers). */
  align?: ('l' | 'r')[];
}

export type Block =
  | { kind: 'heading'; level: 1 | 2 | 3; text: string }
  | { kind: 'paragraph'; text: string }
  | { kind: 'list'; items: string[] }
  | { kind: 'table'; table: Table }
  | { kind: 'image'; png: string; svg: string; alt: string };

export interface ReportDocument {
  title: string;
  blocks: Block[];
}

function mdCell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

export function toMarkdown(doc: ReportDocument): string {
  const out: string[] = [];
  for (const b of doc.blocks) {
    switch (b.kind) {
      case 'heading':
        out.push(`${'#'.repeat(b.level)} ${b.text}`, '');
        break;
      case 'paragraph':
        out.push(b.text, '');
        break;
      case 'list':
        out.push(...b.items.map((i) => `- ${i}`), '');
        break;
      case 'table': {
        const { header, rows, align } = b.table;
        out.push(`| ${header.map(mdCell).join(' | ')} |`);
        out.push(`|${header.map((_, i) => (align?.[i] === 'r' ? '---:' : '---')).join('|')}|`);
        for (const r of rows) out.push(`| ${r.map(mdCell).join(' | ')} |`);
        out.push('');
        break;
      }
      case 'image':
        out.push(`![${b.alt}](${encodeURI(b.png)})`, '', `<sub>[SVG](${encodeURI(b.svg)})</sub>`, '');
        break;
    }
  }
  return out.join('\n');
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Inline Markdown used in the report's text: `code` and **bold** only. */
function inline(s: string): string {
  return esc(s)
    .replace(/`([^`]+)`/g, '<code>$1</code>')
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>');
}

export function toHtml(doc: ReportDocument): string {
  const body: string[] = [];
  for (const b of doc.blocks) {
    switch (b.kind) {
      case 'heading':
        body.push(`<h${b.level}>${inline(b.text)}</h${b.level}>`);
        break;
      case 'paragraph':
        body.push(`<p>${inline(b.text)}</p>`);
        break;
      case 'list':
        body.push('<ul>', ...b.items.map((i) => `  <li>${inline(i)}</li>`), '</ul>');
        break;
      case 'table': {
        const { header, rows, align } = b.table;
        const cls = (i: number) => (align?.[i] === 'r' ? ' class="num"' : '');
        body.push('<table>', `  <thead><tr>${header.map((h, i) => `<th${cls(i)}>${inline(h)}</th>`).join('')}</tr></thead>`, '  <tbody>');
        for (const r of rows) body.push(`    <tr>${r.map((c, i) => `<td${cls(i)}>${inline(c)}</td>`).join('')}</tr>`);
        body.push('  </tbody>', '</table>');
        break;
      }
      case 'image':
        body.push(
          `<figure><img src="${esc(encodeURI(b.svg))}" alt="${esc(b.alt)}"><figcaption><a href="${esc(encodeURI(b.png))}">PNG</a> · <a href="${esc(encodeURI(b.svg))}">SVG</a></figcaption></figure>`,
        );
        break;
    }
  }
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${esc(doc.title)}</title>
<style>
  body { font-family: "DejaVu Sans", Verdana, Arial, sans-serif; margin: 2rem auto; max-width: 72rem; padding: 0 1rem; color: #222; line-height: 1.45; }
  table { border-collapse: collapse; margin: 0.8rem 0 1.6rem; font-size: 0.88rem; }
  th, td { border: 1px solid #ccc; padding: 0.3rem 0.55rem; vertical-align: top; }
  th { background: #f4f4f4; text-align: left; }
  td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
  code { background: #f4f4f4; padding: 0 0.2rem; }
  figure { margin: 1rem 0 2rem; }
  figure img { max-width: 100%; border: 1px solid #eee; }
  figcaption { font-size: 0.8rem; color: #666; }
</style>
</head>
<body>
${body.join('\n')}
</body>
</html>
`;
}
