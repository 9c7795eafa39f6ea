/**
 * Scaling curves: throughput vs n per algorithm, one line per Trident platform
 * (its headline variant, as on the scoreboard) and one per peer, so "how cost
 * grows as work grows" shows at a glance.
 *
 * Rows that count no work (latency pairings such as 'sum f32 · one call + read',
 * peers without a byte count) are drawn in the chart's unit from the bytes per
 * element Trident's own rows of that algorithm count; where no row of the
 * algorithm counts work at all, the chart shows milliseconds.
 */
import { fmtMs, fmtN, fmtNum, isOurs, platformName } from './analysis.ts';
import type { CurveChart, CurvePoint } from './charts.ts';
import type { LabelledMeasurement } from './load.ts';
import { comparePlatforms, implementationName } from './names.ts';
import { HEADLINE_VARIANTS, headline } from './scoreboard.ts';

export interface CurveBlock {
  readonly chart: CurveChart;
  /** The same points as a table (series × n), for REPORT.md. */
  readonly head: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

const ok = (m: LabelledMeasurement): boolean => !m.error && m.ms !== undefined;

/** 'sum f32 · one call + read' -> 'call + read'. */
const pairing = (variant: string): string =>
  variant.includes('·') ? ` (${(variant.split('·')[1] ?? '').replace('one call', 'call').trim()})` : '';

/** Legend names: where it ran, then what; a peer's variant only where that peer drew several. */
function seriesName(m: LabelledMeasurement, headlineVariant: string | undefined, peerVariants: ReadonlyMap<string, number>): string {
  const where = `${m.label} · ${m.runtime}`;
  if (isOurs(m)) {
    const other = !m.variant.includes('·') && m.variant !== headlineVariant && m.variant ? ` (${m.variant})` : '';
    return `${where} · ${m.backend}${pairing(m.variant)}${other}`;
  }
  const id = `${where}|${m.implementation}|${m.backend}`;
  const variant = (peerVariants.get(id) ?? 0) > 1 && !m.variant.includes('·') ? ` ${m.variant}` : '';
  return `${where} · ${implementationName(m.implementation)} ${m.backend}${variant}${pairing(m.variant)}`;
}

export function curveBlocks(all: readonly LabelledMeasurement[], algorithms: readonly string[]): CurveBlock[] {
  const out: CurveBlock[] = [];
  for (const algorithm of algorithms) {
    const rows = all.filter((m) => m.algorithm === algorithm && ok(m));
    const ours = rows.filter(isOurs);
    if (ours.length === 0) continue;
    // The chart's unit: what Trident's rows of this algorithm count; bytes (or flops) per element to convert the rest.
    const counted = ours.filter((m) => m.throughput);
    const units = counted.map((m) => m.throughput?.unit as string);
    const unit = units.sort((a, b) => units.filter((u) => u === b).length - units.filter((u) => u === a).length)[0];
    const perElement = counted
      .filter((m) => m.throughput?.unit === unit)
      .map((m) => ((m.throughput?.value as number) * (m.ms?.median as number)) / m.n);
    const workPerElement = perElement.length > 0 ? perElement.sort((a, b) => a - b)[Math.floor(perElement.length / 2)] : undefined;
    const scaled = algorithm === 'nbody' || algorithm === 'apsp'; // work grows faster than n: no per-element conversion
    const plotted = (m: LabelledMeasurement): number | undefined => {
      if (unit === undefined) return m.ms?.median;
      if (m.throughput?.unit === unit) return m.throughput.value;
      if (workPerElement === undefined || scaled) return undefined;
      return (workPerElement * m.n) / (m.ms?.median as number);
    };

    // Trident: each platform's headline variant, and its latency pairings; peers: every variant but ours that are not headlines.
    const platforms = [...new Set(ours.map(platformName))];
    const headlineOf = new Map<string, string>();
    for (const p of platforms) {
      const h = headline(
        algorithm,
        ours.filter((m) => platformName(m) === p),
      );
      if (h) headlineOf.set(p, h.variant);
    }
    const ourVariants = new Set(ours.map((m) => m.variant));
    const headlines = new Set(headlineOf.values());
    const drawn = rows.filter((m) => {
      if (isOurs(m)) return m.variant === headlineOf.get(platformName(m)) || m.variant.includes('·');
      return !ourVariants.has(m.variant) || headlines.has(m.variant) || m.variant.includes('·');
    });
    const peerVariants = new Map<string, number>();
    for (const id of new Set(
      drawn.filter((m) => !isOurs(m)).map((m) => `${m.label} · ${m.runtime}|${m.implementation}|${m.backend}|${m.variant}`),
    )) {
      const key = id.slice(0, id.lastIndexOf('|'));
      peerVariants.set(key, (peerVariants.get(key) ?? 0) + 1);
    }
    const points: (CurvePoint & { order: LabelledMeasurement })[] = [];
    for (const m of drawn) {
      const value = plotted(m);
      if (value === undefined || !(value > 0)) continue;
      const series = seriesName(m, headlineOf.get(platformName(m)), peerVariants);
      const timer = [
        m.timer,
        ...(isOurs(m) && m.wallMs ? [`wall ${fmtMs(m.wallMs.median)} ms`] : []),
        ...(isOurs(m) && m.wallWithReadMs ? [`call + read ${fmtMs(m.wallWithReadMs.median)} ms`] : []),
      ].join('; ');
      points.push({
        series,
        kind: isOurs(m) ? 'Trident' : 'peer',
        n: m.n,
        value,
        tooltip: `${series} @ n=${fmtN(m.n)}: ${fmtNum(value)} ${unit ?? 'ms'}; ${fmtMs(m.ms?.median as number)} ms (${timer})${
          m.throughput?.unit === unit ? '' : ' [work counted per element from Trident’s rows]'
        }`,
        order: m,
      });
    }
    if (points.length === 0) continue;
    // Legend order: Trident first (platform order), then peers.
    points.sort(
      (a, b) =>
        (a.kind === 'Trident' ? 0 : 1) - (b.kind === 'Trident' ? 0 : 1) ||
        comparePlatforms(a.order, b.order) ||
        a.series.localeCompare(b.series) ||
        a.n - b.n,
    );
    const unitText = unit ?? 'ms per run (lower is better)';
    const variants = HEADLINE_VARIANTS[algorithm]?.filter((v) => headlines.has(v)) ?? [...headlines];
    const chart: CurveChart = {
      id: `curve-${algorithm}`,
      title: `${algorithm}${variants.length > 0 ? ` (${variants.join(' / ')})` : ''}: ${unitText} vs n`,
      subtitle: 'log-log · solid: Trident · dashed: peers and native anchors',
      unit: unitText,
      points: points.map(({ order: _order, ...p }) => p),
    };
    const sizes = [...new Set(points.map((p) => p.n))].sort((a, b) => a - b);
    const series = [...new Set(points.map((p) => p.series))];
    out.push({
      chart,
      head: [`series (${unitText})`, ...sizes.map(fmtN)],
      rows: series.map((s) => [
        s,
        ...sizes.map((n) => {
          const p = points.find((q) => q.series === s && q.n === n);
          return p ? fmtNum(p.value) : '';
        }),
      ]),
    });
  }
  return out;
}
