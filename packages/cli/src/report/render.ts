/**
 * Renders report blocks as Markdown (REPORT.md: readable in a terminal and on
 * GitHub; charts become their data tables, collapsible parts headings) and as one
 * self-contained HTML page (charts as static SVG from Vega-Lite, collapsible
 * parts as <details>; no scripts, fonts or network).
 */
import { curveSpec, renderSvg } from './charts.ts';
import { type Block, type Cell, escapeHtml } from './document.ts';

const cellText = (c: Cell): string => (typeof c === 'string' ? c : c.text);
const mdCell = (c: Cell): string => cellText(c).replace(/\|/g, '\\|').replace(/\n/g, ' ');

function mdTable(head: readonly Cell[], rows: readonly (readonly Cell[])[]): string[] {
  const out = [`| ${head.map(mdCell).join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const r of rows) out.push(`| ${r.map(mdCell).join(' | ')} |`);
  if (rows.length === 0) out.push(`| ${head.map(() => '').join(' | ')} |`);
  out.push('');
  return out;
}

export function renderMarkdown(blocks: readonly Block[], depth = 0): string {
  const out: string[] = [];
  for (const b of blocks) {
    if (b.only === 'html') continue;
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
        out.push(...mdTable(b.head, b.rows));
        break;
      case 'charts':
        for (const c of b.charts) out.push(`**${c.chart.title}**`, '', ...mdTable(c.head, c.rows));
        break;
      case 'details':
        out.push(`${'#'.repeat(Math.min(4, 3 + depth))} ${b.summary}`, '', renderMarkdown(b.blocks, depth + 1));
        break;
    }
  }
  return `${out.join('\n').trimEnd()}\n`;
}

const STYLE = `body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:1.2rem auto;max-width:1280px;padding:0 1rem;color:#222;line-height:1.35}
h1{font-size:1.5rem;margin:0 0 .3rem}h2{border-bottom:1px solid #ddd;padding-bottom:.15rem;margin:1.6rem 0 .5rem;font-size:1.2rem}
p{margin:.3rem 0 .6rem}p.legend{font-size:.82rem;color:#444}
table{border-collapse:collapse;margin:.4rem 0 1.2rem;font-size:.8rem}th,td{border:1px solid #ccc;padding:.2rem .45rem;text-align:left;vertical-align:top}
th{background:#f3f3f3;font-weight:600}th small,td small{color:#666;font-weight:400}
table.scoreboard{font-size:.76rem}table.scoreboard td,table.scoreboard th{text-align:center;min-width:6rem}table.scoreboard th{font-size:.72rem}table.scoreboard td.algo{text-align:left;font-weight:600}
td.score{padding:.15rem .3rem}td.score .fig{font-size:.9rem;font-weight:600;border-radius:3px;padding:0 .2rem;white-space:nowrap}
td.score .fig small{font-size:.65rem;font-weight:400}td.verdict{text-align:left!important;font-size:.7rem;color:#333;min-width:17rem!important;max-width:21rem}
td.score.share .fig{background:linear-gradient(90deg,#b9d5f0 var(--share),#f4f7fb var(--share))}
td.score .vs{font-size:.75rem;font-weight:600;border-radius:3px;margin-top:1px}
td.score .ceiling{font-size:.7rem;color:#555;margin-top:1px}
.vs.win{background:#d5f0d5;color:#14571a}.vs.loss{background:#f8d3d0;color:#8a1c12}.fail{color:#8a1c12;font-weight:600}.na{color:#999}
table.compact td{white-space:nowrap}table.matrix td.group{font-weight:600;color:#555}td.cap.yes{background:#eef8ee}td.cap.no{background:#fbeeed;color:#8a1c12}
ul{margin:.2rem 0 .8rem;padding-left:1.3rem;font-size:.85rem}
.charts{display:flex;flex-wrap:wrap;gap:.6rem 1.2rem}.charts figure{margin:0}svg.chart{max-width:100%;height:auto}
details{margin:.3rem 0;border:1px solid #e3e3e3;border-radius:4px;padding:.2rem .6rem}details>summary{cursor:pointer;font-weight:600}
details[open]>summary{margin-bottom:.4rem}`;

const attr = (name: string, value: string | undefined): string => (value ? ` ${name}="${escapeHtml(value)}"` : '');

function htmlCell(tag: 'td' | 'th', c: Cell): string {
  if (typeof c === 'string') return `<${tag}>${escapeHtml(c)}</${tag}>`;
  return `<${tag}${attr('class', c.className)}${attr('title', c.title)}${attr('style', c.style)}>${c.html ?? escapeHtml(c.text)}</${tag}>`;
}

async function htmlBlocks(blocks: readonly Block[]): Promise<string[]> {
  const body: string[] = [];
  for (const b of blocks) {
    if (b.only === 'md') continue;
    switch (b.kind) {
      case 'h':
        body.push(`<h${b.level}${attr('id', b.id)}>${escapeHtml(b.text)}</h${b.level}>`);
        break;
      case 'p':
        body.push(`<p${attr('class', b.className)}>${escapeHtml(b.text)}</p>`);
        break;
      case 'list':
        body.push(`<ul>${b.items.map((i) => `<li>${escapeHtml(i)}</li>`).join('')}</ul>`);
        break;
      case 'table':
        body.push(
          `<table${attr('id', b.id)}${attr('class', b.className)}><thead><tr>${b.head.map((h) => htmlCell('th', h)).join('')}</tr></thead><tbody>${b.rows
            .map((r) => `<tr>${r.map((c) => htmlCell('td', c)).join('')}</tr>`)
            .join('')}</tbody></table>`,
        );
        break;
      case 'charts': {
        const figures: string[] = [];
        for (const c of b.charts) figures.push(`<figure>${await renderSvg(curveSpec(c.chart), c.chart.id, c.chart.title)}</figure>`);
        body.push(`<div${attr('id', b.id)} class="charts">${figures.join('\n')}</div>`);
        break;
      }
      case 'details':
        body.push(
          `<details${attr('id', b.id)}><summary>${escapeHtml(b.summary)}</summary>\n${(await htmlBlocks(b.blocks)).join('\n')}\n</details>`,
        );
        break;
    }
  }
  return body;
}

export async function renderHtml(blocks: readonly Block[], title: string): Promise<string> {
  const body = await htmlBlocks(blocks);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
${body.join('\n')}
</body>
</html>
`;
}
