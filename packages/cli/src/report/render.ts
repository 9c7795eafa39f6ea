/** Renders report blocks as Markdown and as one self-contained HTML page. */
import type { Block } from './document.ts';
import { escapeXml } from './svg.ts';

const mdCell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

export function renderMarkdown(blocks: readonly Block[]): string {
  const out: string[] = [];
  for (const b of blocks) {
    switch (b.kind) {
      case 'h':
        out.push(`${'#'.repeat(b.level)} ${b.text}`, '');
        break;
      case 'p':
        out.push(b.text, '');
        break;
      case 'list':
        out.push(...b.items.map((i) => `- ${i}`), '');
        break;
      case 'table':
        out.push(`| ${b.head.map(mdCell).join(' | ')} |`, `|${b.head.map(() => '---').join('|')}|`);
        for (const r of b.rows) out.push(`| ${r.map(mdCell).join(' | ')} |`);
        if (b.rows.length === 0) out.push(`| ${b.head.map(() => '').join(' | ')} |`);
        out.push('');
        break;
      case 'chart':
        // Charts live in index.html; Markdown keeps the tables they are drawn from.
        out.push(`_Chart: ${b.alt} (see index.html)._`, '');
        break;
    }
  }
  return `${out.join('\n').trimEnd()}\n`;
}

const STYLE = `body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2rem auto;max-width:1200px;padding:0 1rem;color:#222}
table{border-collapse:collapse;margin:0.5rem 0 1.5rem;font-size:0.85rem}th,td{border:1px solid #ccc;padding:0.25rem 0.5rem;text-align:left;vertical-align:top}
th{background:#f3f3f3}h2{border-bottom:1px solid #ddd;padding-bottom:0.2rem;margin-top:2rem}figure{margin:0.5rem 0 1.5rem}svg.chart{max-width:100%;height:auto}`;

export function renderHtml(blocks: readonly Block[], title: string): string {
  const body: string[] = [];
  for (const b of blocks) {
    switch (b.kind) {
      case 'h':
        body.push(`<h${b.level}>${escapeXml(b.text)}</h${b.level}>`);
        break;
      case 'p':
        body.push(`<p>${escapeXml(b.text)}</p>`);
        break;
      case 'list':
        body.push(`<ul>${b.items.map((i) => `<li>${escapeXml(i)}</li>`).join('')}</ul>`);
        break;
      case 'table':
        body.push(
          `<table><thead><tr>${b.head.map((h) => `<th>${escapeXml(h)}</th>`).join('')}</tr></thead><tbody>${b.rows
            .map((r) => `<tr>${r.map((c) => `<td>${escapeXml(c)}</td>`).join('')}</tr>`)
            .join('')}</tbody></table>`,
        );
        break;
      case 'chart':
        body.push(`<figure>${b.svg}</figure>`);
        break;
    }
  }
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeXml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
${body.join('\n')}
</body>
</html>
`;
}
