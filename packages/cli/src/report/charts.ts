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
  readonly id: string;
  readonly title: string;
  readonly subtitle?: string;
  readonly unit: string;
  readonly points: readonly CurvePoint[];
}

const isPowerOfTwo = (n: number): boolean => Number.isInteger(Math.log2(n));

/** A log-log line chart of throughput vs n, one line per series. */
export function curveSpec(chart: CurveChart): TopLevelSpec {
  const pow2 = chart.points.every((p) => isPowerOfTwo(p.n));
  const series = [...new Set(chart.points.map((p) => p.series))];
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    width: 430,
    height: 220,
    title: { text: chart.title, ...(chart.subtitle ? { subtitle: chart.subtitle } : {}), anchor: 'start', fontSize: 13 },
    data: { values: chart.points.map((p) => ({ ...p })) },
    encoding: {
      x: {
        field: 'n',
        type: 'quantitative',
        scale: { type: 'log', base: pow2 ? 2 : 10, nice: false },
        axis: {
          title: 'n (elements; bodies, vertices or stored edges)',
          grid: true,
          ...(pow2 ? { labelExpr: "'2^' + round(log(datum.value) / log(2))" } : { format: '~s' }),
        },
      },
      y: { field: 'value', type: 'quantitative', scale: { type: 'log' }, axis: { title: chart.unit, format: '~g', grid: true } },
      color: {
        field: 'series',
        type: 'nominal',
        sort: series,
        scale: { scheme: 'tableau10' },
        legend: { orient: 'right', title: null, labelLimit: 240, symbolStrokeWidth: 2 },
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
    layer: [{ mark: { type: 'line', strokeWidth: 2 } }, { mark: { type: 'point', filled: true, size: 36 } }],
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
