/**
 * The scoreboard: per algorithm and platform (machine · runtime · backend) one
 * headline figure and the speedup against the toughest peer measured on that
 * platform, plus a one-line verdict per algorithm.
 *
 * - Headline figure: the algorithm's headline variant (HEADLINE_VARIANTS) at the
 *   largest n it ran on that platform: % of the platform's zcopy ceiling for
 *   memory-bound algorithms, GB/s for zcopy itself (it is the ceiling), GFLOP/s or
 *   GTEPS for compute- and graph-bound ones, ms where the case counts no work.
 * - Peers of a platform: rows of another implementation on the same machine, of
 *   the same backend class (TF.js webgl ↔ webgl2 …; analysis.ts backendClass), in
 *   the same runtime — or native anchors (CUB, CUDA) on that machine's GPU.
 * - Each peer is compared at the largest n both ran, like for like: where the peer
 *   has only a wall clock (which includes reading its result), Trident's wall clock of
 *   runs that read the result into host memory too (`wallWithReadMs`); in rows without
 *   it (files written before it), the same timer where both have it, else Trident's
 *   wall-clock time to completion of its GPU-timed runs (`wallMs`, the result left on
 *   the device); rows with different timers and neither wall time of Trident's are
 *   marked as mixed. Where both rows count their work (bytes
 *   or flops), the speedup is the throughput ratio (so an N-body step of two force
 *   evaluations compares with one CUDA evaluation fairly); otherwise the time ratio.
 * - The cell's peer is the toughest one: the lowest speedup.
 */
import { type Analysis, algoName, backendClass, fmtMs, fmtN, fmtNum, fmtPct, isCeiling, isOurs, platformName } from './analysis.ts';
import type { LabelledMeasurement } from './load.ts';
import { comparePlatforms, implementationName, shortAdapter } from './names.ts';

/** The variant a scoreboard cell shows, in order of preference (the first that ran on the platform). */
export const HEADLINE_VARIANTS: Readonly<Record<string, readonly string[]>> = {
  zcopy: ['copy'],
  reduce: ['sum'],
  scan: ['inclusive'],
  histogram: ['256 bins'],
  compact: ['half kept'],
  sort: ['auto', 'radix keys', 'radix'],
  nbody: ['accelerations', '1 step'],
  bfs: ['rmat', 'random'],
  components: ['rmat', 'random'],
  mst: ['rmat', 'random'],
  apsp: ['random'],
};

export interface PlatformColumn {
  readonly key: string;
  readonly label: string;
  readonly runtime: string;
  readonly backend: string;
  /** The adapter as the device named it (full string), and shortened. */
  readonly adapter: string;
  readonly shortAdapter: string;
}

export type ComparisonBasis = 'same timer' | 'wall vs wall' | 'mixed timers';

export interface Comparison {
  readonly peer: LabelledMeasurement;
  readonly ours: LabelledMeasurement;
  readonly n: number;
  /** > 1: Trident is faster. */
  readonly speedup: number;
  readonly basis: ComparisonBasis;
  readonly ratio: 'throughput' | 'time';
  readonly oursMs: number;
  readonly oursTimer: string;
  /** One line for tooltips and tables. */
  readonly text: string;
}

export interface Figure {
  readonly text: string;
  /** What the figure is, for the tooltip and the Markdown cell. */
  readonly what: string;
  /** Share of the zcopy ceiling (0..), where the figure is one. */
  readonly share?: number;
}

export interface ScoreCell {
  readonly platform: PlatformColumn;
  readonly measurement?: LabelledMeasurement;
  readonly figure?: Figure;
  readonly failure?: string;
  /** The toughest peer (lowest speedup), then every other peer compared. */
  readonly best?: Comparison;
  readonly comparisons: readonly Comparison[];
  /** cpu platforms: the headline row's time as a share of the machine's plain-JS ceiling at the same n (not a peer). */
  readonly ceiling?: { readonly share: number; readonly measurement: LabelledMeasurement; readonly text: string };
  readonly tooltip: string;
}

export interface ScoreRow {
  readonly algorithm: string;
  /** One per platform column; undefined where the platform has no row of this algorithm. */
  readonly cells: readonly (ScoreCell | undefined)[];
  readonly verdict: string;
}

export interface Scoreboard {
  readonly platforms: readonly PlatformColumn[];
  readonly rows: readonly ScoreRow[];
}

const ok = (m: LabelledMeasurement): boolean => !m.error && m.ms !== undefined;
/** Rows such as 'sum f32 · one call + read' measure call latency for a peer pairing, not the headline. */
const isPairingVariant = (variant: string): boolean => variant.includes('·');
const short = (p: PlatformColumn): string => `${p.label} · ${p.runtime} · ${p.backend}`;

export function peerName(m: LabelledMeasurement): string {
  const variant = m.variant ? ` ${m.variant}` : '';
  return `${implementationName(m.implementation)} ${m.backend}${variant}`;
}

/** The headline measurement of `algorithm` among one platform's rows: preferred variant, largest n. */
export function headline(algorithm: string, rows: readonly LabelledMeasurement[]): LabelledMeasurement | undefined {
  const candidates = rows.filter((m) => !isPairingVariant(m.variant));
  const good = candidates.filter(ok);
  const prefs = HEADLINE_VARIANTS[algorithm] ?? [];
  const byVariant = (v: string): LabelledMeasurement[] => good.filter((m) => m.variant === v);
  let pool = prefs.map(byVariant).find((l) => l.length > 0);
  if (!pool) {
    // The variant that ran at the most sizes (then the first by name).
    const variants = [...new Set(good.map((m) => m.variant))].sort();
    pool = variants.map(byVariant).sort((a, b) => b.length - a.length)[0];
  }
  if (!pool || pool.length === 0) return undefined;
  return pool.reduce((a, b) => (b.n > a.n ? b : a));
}

/** Work one run did, in the unit of its throughput (bytes or flops), if the row counts it. */
function work(m: LabelledMeasurement): { unit: string; amount: number } | undefined {
  if (!m.throughput || !m.ms) return undefined;
  return { unit: m.throughput.unit, amount: m.throughput.value * m.ms.median };
}

/** Compares a peer row with Trident's row of the same n, like for like (see the file's header). */
export function compare(peer: LabelledMeasurement, ours: LabelledMeasurement): Comparison | undefined {
  if (!ok(peer) || !ok(ours)) return undefined;
  const peerMs = peer.ms?.median as number;
  let oursMs = ours.ms?.median as number;
  let oursTimer: string = ours.timer;
  let basis: ComparisonBasis = 'same timer';
  if (peer.timer === 'wall' && ours.wallWithReadMs) {
    oursMs = ours.wallWithReadMs.median;
    oursTimer = 'wall, call + read';
    basis = 'wall vs wall';
  } else if (peer.timer !== ours.timer) {
    if (peer.timer === 'wall' && ours.wallMs) {
      oursMs = ours.wallMs.median;
      oursTimer = 'wall, to completion';
      basis = 'wall vs wall';
    } else {
      basis = 'mixed timers';
    }
  }
  if (!(oursMs > 0) || !(peerMs > 0)) return undefined;
  const wp = work(peer);
  const wo = work(ours);
  const byThroughput = wp !== undefined && wo !== undefined && wp.unit === wo.unit;
  const speedup = byThroughput ? wo.amount / oursMs / (wp.amount / peerMs) : peerMs / oursMs;
  const text =
    `vs ${peerName(peer)} (${peer.runtime}) @ n=${fmtN(peer.n)}: Trident ${fmtMs(oursMs)} ms (${oursTimer}), ` +
    `${implementationName(peer.implementation)} ${fmtMs(peerMs)} ms (${peer.timer}) → ${fmtSpeedup(speedup)}` +
    `${byThroughput ? ' (throughput ratio)' : ''}${basis === 'mixed timers' ? ' — timers differ' : ''}`;
  return { peer, ours, n: peer.n, speedup, basis, ratio: byThroughput ? 'throughput' : 'time', oursMs, oursTimer, text };
}

export const fmtSpeedup = (s: number): string => `${s >= 10 ? s.toFixed(0) : s.toFixed(2)}×`;

/** Trident's row to hold `peer` against on one platform: the same variant, else the headline variants, at the peer's n. */
function oursFor(peer: LabelledMeasurement, mine: readonly LabelledMeasurement[]): LabelledMeasurement | undefined {
  const atN = mine.filter((m) => m.n === peer.n && ok(m));
  const same = atN.find((m) => m.variant === peer.variant);
  if (same) return same;
  if (mine.some((m) => m.variant === peer.variant)) return undefined; // we have the variant, just not at this n
  const prefs = HEADLINE_VARIANTS[peer.algorithm] ?? [];
  for (const v of prefs) {
    const hit = atN.find((m) => m.variant === v);
    if (hit) return hit;
  }
  return atN.find((m) => !isPairingVariant(m.variant));
}

function figureOf(m: LabelledMeasurement, analysis: Analysis): Figure {
  const row = analysis.rows.get(m.algorithm)?.find((r) => r.m === m);
  const at = `${algoName(m)} @ n=${fmtN(m.n)}`;
  if (m.throughput?.unit === 'GB/s' && m.algorithm !== 'zcopy' && row?.zcopyShare !== undefined && row.ceiling) {
    const pct = fmtPct(row.zcopyShare);
    return {
      text: pct,
      share: row.zcopyShare,
      what: `${at}: ${fmtNum(m.throughput.value)} GB/s = ${pct} of this platform's copy ceiling (${row.ceiling.source}, ${fmtNum(row.ceiling.gbps)} GB/s @ n=${fmtN(row.ceiling.n)})`,
    };
  }
  if (m.throughput) {
    const text = `${fmtNum(m.throughput.value)} ${m.throughput.unit}`;
    return { text, what: `${at}: ${text}` };
  }
  const text = `${fmtMs(m.ms?.median as number)} ms`;
  return { text, what: `${at}: ${text} per run` };
}

export function buildScoreboard(all: readonly LabelledMeasurement[], analysis: Analysis): Scoreboard {
  const ours = all.filter(isOurs);
  const platformsByKey = new Map<string, PlatformColumn>();
  for (const m of ours) {
    const key = platformName(m);
    if (!platformsByKey.has(key))
      platformsByKey.set(key, {
        key,
        label: m.label,
        runtime: m.runtime,
        backend: m.backend,
        adapter: m.adapter,
        shortAdapter: shortAdapter(m.adapter),
      });
  }
  const platforms = [...platformsByKey.values()].sort(comparePlatforms);
  const others = all.filter((m) => !isOurs(m) && !isCeiling(m));
  const jsCeilings = all.filter(isCeiling);
  const algorithms = analysis.algorithms.filter((a) => ours.some((m) => m.algorithm === a));

  const rows: ScoreRow[] = algorithms.map((algorithm) => {
    const cells = platforms.map((platform): ScoreCell | undefined => {
      const mine = ours.filter((m) => m.algorithm === algorithm && platformName(m) === platform.key);
      if (mine.length === 0) return undefined;
      const m = headline(algorithm, mine);
      if (!m) {
        const failure = mine.find((x) => x.error)?.error ?? (mine.some((x) => x.verified === false) ? 'result differs' : 'no result');
        return { platform, failure, comparisons: [], tooltip: `${algorithm} on ${short(platform)}: ${failure}` };
      }
      const figure = figureOf(m, analysis);
      // Peers on this platform, each at the largest n both ran.
      const rivals = others.filter(
        (p) =>
          p.algorithm === algorithm &&
          p.label === platform.label &&
          (p.runtime === platform.runtime || p.runtime === 'native') &&
          backendClass(p) === platform.backend &&
          ok(p),
      );
      const byPeer = new Map<string, Comparison>();
      for (const p of rivals) {
        const o = oursFor(p, mine);
        const c = o ? compare(p, o) : undefined;
        if (!c) continue;
        const id = [p.implementation, p.backend, p.runtime, p.variant].join('|');
        const cur = byPeer.get(id);
        if (!cur || c.n > cur.n) byPeer.set(id, c);
      }
      const comparisons = [...byPeer.values()].sort((a, b) => a.speedup - b.speedup);
      const best = comparisons[0];
      const ceiling = ceilingOf(m, jsCeilings);
      const tooltip = [
        `${short(platform)} (${platform.shortAdapter || platform.adapter}) — ${figure.what}; ${fmtMs(m.ms?.median as number)} ms, timer ${m.timer}${
          m.verified === false ? '; RESULT DIFFERS from the reference' : ''
        }`,
        ...comparisons.map((c) => c.text),
        ...(ceiling ? [ceiling.text] : []),
      ].join('\n');
      return { platform, measurement: m, figure, ...(best ? { best } : {}), comparisons, ...(ceiling ? { ceiling } : {}), tooltip };
    });
    return { algorithm, cells, verdict: verdict(algorithm, cells) };
  });
  return { platforms, rows };
}

/** The plain-JS ceiling that bounds Trident cpu's headline row `m` (same machine, runtime, case, n), as a share. */
function ceilingOf(m: LabelledMeasurement, ceilings: readonly LabelledMeasurement[]): ScoreCell['ceiling'] {
  if (m.backend !== 'cpu' || !ok(m)) return undefined;
  const c = ceilings.find(
    (x) => ok(x) && x.label === m.label && x.runtime === m.runtime && x.algorithm === m.algorithm && x.variant === m.variant && x.n === m.n,
  );
  if (!c) return undefined;
  const oursMs = m.ms?.median as number;
  const ceilingMs = c.ms?.median as number;
  const share = ceilingMs / oursMs;
  return {
    share,
    measurement: c,
    text:
      `${fmtPct(share)} of the plain-JS ceiling @ n=${fmtN(m.n)}: Trident ${fmtMs(oursMs)} ms, ` +
      `plain JS on ${c.adapter.replace(/^.*\((\d+ threads?)\)$/, '$1')} ${fmtMs(ceilingMs)} ms (a bound, not a peer)`,
  };
}

function verdict(algorithm: string, cells: readonly (ScoreCell | undefined)[]): string {
  const ran = cells.filter((c): c is ScoreCell => c?.figure !== undefined);
  const failed = cells.filter((c): c is ScoreCell => c !== undefined && c.failure !== undefined);
  const parts: string[] = [];
  if (ran.length > 0) {
    const shares = ran.filter((c) => c.figure?.share !== undefined);
    const top =
      shares.length > 0
        ? shares.reduce((a, b) => ((b.figure?.share as number) > (a.figure?.share as number) ? b : a))
        : ran.reduce((a, b) => ((b.measurement?.throughput?.value ?? 0) > (a.measurement?.throughput?.value ?? 0) ? b : a));
    const what = shares.length > 0 ? `${top.figure?.text} of zcopy` : (top.figure?.text ?? '');
    parts.push(
      top.measurement?.throughput || shares.length > 0
        ? `best ${what} (${short(top.platform)})`
        : `${what} at the largest n (${short(top.platform)})`,
    );
  }
  const compared = ran.filter((c) => c.best);
  if (compared.length > 0) {
    const wins = compared.filter((c) => (c.best?.speedup as number) >= 1).length;
    const worst = compared.reduce((a, b) => ((b.best?.speedup as number) < (a.best?.speedup as number) ? b : a));
    const w = worst.best as Comparison;
    parts.push(
      `beats the toughest peer on ${wins} of ${compared.length} platform${compared.length === 1 ? '' : 's'}` +
        (w.speedup < 1
          ? `; worst ${fmtSpeedup(w.speedup)} vs ${implementationName(w.peer.implementation)} (${short(worst.platform)})`
          : ''),
    );
  } else if (ran.length > 0) {
    parts.push('no peer measured');
  }
  if (failed.length > 0) parts.push(`failed on ${failed.map((c) => short(c.platform)).join(', ')}`);
  const text = parts.join('; ');
  return `${algorithm}: ${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}
