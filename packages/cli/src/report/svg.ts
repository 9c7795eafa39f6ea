/**
 * Inline SVG charts for the HTML report: no scripts, no fonts, no external
 * files, so the page renders the same offline, in CI screenshots and in mail.
 */

export interface Bar {
  readonly label: string;
  readonly value: number;
  /** Bars of one group share a colour (e.g. the backend). */
  readonly group: string;
  /** Text shown at the end of the bar; defaults to the value. */
  readonly text?: string;
}

const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];

export function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * A horizontal bar chart. `log` uses a log10 axis, which suits throughputs that
 * span a CPU, a software GPU and an H100 (several orders of magnitude).
 */
export function barChart(options: { title: string; unit: string; bars: readonly Bar[]; log?: boolean; id?: string }): string {
  const bars = options.bars.filter((b) => Number.isFinite(b.value) && b.value > 0);
  const labelWidth = 300;
  const plotWidth = 420;
  const textWidth = 90;
  const barHeight = 18;
  const gap = 6;
  const top = 34;
  const width = labelWidth + plotWidth + textWidth;
  const height = top + Math.max(1, bars.length) * (barHeight + gap) + 24;
  const groups = [...new Set(bars.map((b) => b.group))];
  const colour = (g: string): string => PALETTE[groups.indexOf(g) % PALETTE.length] as string;
  const values = bars.map((b) => b.value);
  const maxV = Math.max(...values, Number.MIN_VALUE);
  const minV = Math.min(...values, maxV);
  const log = options.log === true && bars.length > 0;
  // Log axis: from one decade below the smallest value to the decade above the largest.
  const lo = log ? 10 ** (Math.floor(Math.log10(minV)) - 1) : 0;
  const hi = log ? 10 ** Math.ceil(Math.log10(maxV)) : maxV;
  const scale = (v: number): number =>
    log ? (plotWidth * (Math.log10(v) - Math.log10(lo))) / (Math.log10(hi) - Math.log10(lo)) : (plotWidth * v) / hi;
  const parts: string[] = [];
  const idAttr = options.id ? ` id="${escapeXml(options.id)}"` : '';
  parts.push(
    `<svg${idAttr} class="chart" xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeXml(options.title)}">`,
  );
  parts.push(`<title>${escapeXml(options.title)}</title>`);
  parts.push(
    `<text x="0" y="16" font-size="14" font-weight="bold" font-family="sans-serif">${escapeXml(options.title)} (${escapeXml(options.unit)}${log ? ', log scale' : ''})</text>`,
  );
  if (bars.length === 0) {
    parts.push(`<text x="0" y="${top + 12}" font-size="12" font-family="sans-serif">no data</text>`);
  }
  // Gridlines at each decade (log) or quarter (linear).
  const ticks: number[] = [];
  if (log) for (let t = lo; t <= hi * 1.0001; t *= 10) ticks.push(t);
  else if (bars.length > 0) for (let i = 0; i <= 4; i++) ticks.push((hi * i) / 4);
  const plotBottom = height - 20;
  for (const t of ticks) {
    const x = labelWidth + scale(t);
    parts.push(`<line x1="${x.toFixed(1)}" y1="${top - 4}" x2="${x.toFixed(1)}" y2="${plotBottom}" stroke="#ddd"/>`);
    parts.push(
      `<text x="${x.toFixed(1)}" y="${plotBottom + 14}" font-size="10" text-anchor="middle" font-family="sans-serif" fill="#555">${escapeXml(tickLabel(t))}</text>`,
    );
  }
  bars.forEach((b, i) => {
    const y = top + i * (barHeight + gap);
    const w = Math.max(1, scale(b.value));
    parts.push(
      `<text x="${labelWidth - 6}" y="${y + barHeight - 5}" font-size="11" text-anchor="end" font-family="sans-serif">${escapeXml(b.label)}</text>`,
    );
    parts.push(
      `<rect class="bar" x="${labelWidth}" y="${y}" width="${w.toFixed(1)}" height="${barHeight}" fill="${colour(b.group)}"><title>${escapeXml(`${b.label}: ${b.text ?? b.value}`)}</title></rect>`,
    );
    parts.push(
      `<text x="${(labelWidth + w + 4).toFixed(1)}" y="${y + barHeight - 5}" font-size="11" font-family="sans-serif">${escapeXml(b.text ?? tickLabel(b.value))}</text>`,
    );
  });
  parts.push('</svg>');
  return parts.join('');
}

function tickLabel(v: number): string {
  if (v === 0) return '0';
  if (v >= 1e3 || v < 1e-2) return v.toExponential(0);
  return String(Number(v.toPrecision(3)));
}
