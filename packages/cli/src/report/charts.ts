/**
 * Charts for the HTML report: Vega-Lite specifications compiled to static SVG in
 * Node (vega's headless renderer: no DOM, no canvas, no scripts in the page), so
 * the page is self-contained and renders offline, in CI screenshots and in mail.
 *
 * Static SVG has no tooltip handler, so each point's description (Vega-Lite's
 * `description` channel, emitted as `aria-label`) is also written as an SVG
 * `<title>`, which browsers show on hover and screen readers read.
 */
import { parse as parseVega, View } from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';

export interface CurvePoint {
  /** One line per series: a Trident platform or a peer. */
  readonly series: string;
  /** 'Trident' or 'peer': Trident's lines are solid, peers' dashed. */
  readonly kind: 'Trident' | 'peer';
  readonly n: number;
  readonly value: number;
  /** Hover text: what ran, time and timer. */
  readonly tooltip: string;
}

export interface CurveChart {
  /** Series -> colour, shared by every chart of a report so one platform keeps its colour. */
  readonly colors?: Readonly<Record<string, string>>;
  readonly id: string;
  readonly title: string;
  readonly subtitle?: string;
  readonly unit: string;
  readonly points: readonly CurvePoint[];
}

const isPowerOfTwo = (n: number): boolean => Number.isInteger(Math.log2(n));

/** Tableau's 20 categorical colours, in pairs (dark, light). */
export const PALETTE = [
  '#4e79a7',
  '#f28e2b',
  '#e15759',
  '#76b7b2',
  '#59a14f',
  '#edc948',
  '#b07aa1',
  '#ff9da7',
  '#9c755f',
  '#bab0ac',
  '#a0cbe8',
  '#ffbe7d',
  '#ff9d9a',
  '#86bcb6',
  '#8cd17d',
  '#f1ce63',
  '#d4a6c8',
  '#fabfd2',
  '#d7b5a6',
  '#79706e',
];

/** A colour per series name, in first-seen order, for `CurveChart.colors`. */
export function seriesColors(names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  [...new Set(names)].forEach((name, i) => {
    out[name] = PALETTE[i % PALETTE.length] as string;
  });
  return out;
}

/** A log-log line chart of throughput vs n, one line per series. */
export function curveSpec(chart: CurveChart): TopLevelSpec {
  const pow2 = chart.points.every((p) => isPowerOfTwo(p.n));
  const series = [...new Set(chart.points.map((p) => p.series))];
  const sizes = [...new Set(chart.points.map((p) => p.n))].sort((a, b) => a - b);
  // Ticks at the sizes run (thinned to every other one when there are many), so labels never repeat.
  const ticks = sizes.length <= 8 ? sizes : sizes.filter((_, i) => i % 2 === 0);
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    width: 250,
    height: 200,
    title: { text: chart.title, ...(chart.subtitle ? { subtitle: chart.subtitle } : {}), anchor: 'start', fontSize: 13 },
    data: { values: chart.points.map((p) => ({ ...p })) },
    encoding: {
      x: {
        field: 'n',
        type: 'quantitative',
        scale: { type: 'log', base: pow2 ? 2 : 10, nice: false },
        axis: {
          title: 'n',
          grid: true,
          values: ticks,
          ...(pow2 ? { labelExpr: "'2^' + round(log(datum.value) / log(2))" } : { format: '~s' }),
        },
      },
      y: { field: 'value', type: 'quantitative', scale: { type: 'log' }, axis: { title: chart.unit, format: '~g', grid: true } },
      color: {
        field: 'series',
        type: 'nominal',
        sort: series,
        scale: chart.colors ? { domain: series, range: series.map((s) => chart.colors?.[s] ?? '#888') } : { scheme: 'tableau20' },
        legend: { orient: 'right', title: null, labelLimit: 0, labelFontSize: 10, symbolStrokeWidth: 2, symbolSize: 60 },
      },
      strokeDash: {
        field: 'kind',
        type: 'nominal',
        scale: {
          domain: ['Trident', 'peer'],
          range: [
            [1, 0],
            [5, 3],
          ],
        },
        legend: null,
      },
      description: { field: 'tooltip' },
    },
    layer: [
      // A line's accessible name is its series; each point's, its own figures.
      { mark: { type: 'line', strokeWidth: 2 }, encoding: { description: { field: 'series' } } },
      { mark: { type: 'point', filled: true, size: 36 } },
    ],
    config: { font: 'system-ui, sans-serif', view: { stroke: '#ccc' } },
  } as TopLevelSpec;
}

/** Compiles a Vega-Lite spec and renders it to an SVG string with an id, a class and an accessible name. */
export async function renderSvg(spec: TopLevelSpec, id: string, label: string): Promise<string> {
  const view = new View(parseVega(compile(spec).spec), { renderer: 'none' });
  try {
    const svg = await view.toSVG();
    return decorate(svg, id, label);
  } finally {
    view.finalize();
  }
}

const escapeXml = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function decorate(svg: string, id: string, label: string): string {
  const opened = svg.replace(/^<svg /, `<svg id="${escapeXml(id)}" class="chart" role="img" aria-label="${escapeXml(label)}" `);
  // Self-closing marks with a description get a <title> child: a hover tooltip without scripts.
  return opened.replace(
    /<(path|rect|circle|line)((?:\s[^>]*?)?\saria-label="([^"]*)"[^>]*?)\/>/g,
    (_all, tag: string, attrs: string, text: string) => `<${tag}${attrs}><title>${text}</title></${tag}>`,
  );
}
