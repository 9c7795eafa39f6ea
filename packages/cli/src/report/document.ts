/**
 * The report as a list of blocks, built once and rendered twice: REPORT.md
 * (charts as their data tables, collapsible parts as headings) and a
 * self-contained index.html (charts as static SVG, collapsible parts as
 * <details>). Order: scoreboard, PP, scaling curves, capability matrix, then
 * per-algorithm details, sources and method.
 */
import {
  type Analysis,
  backendClass,
  fmtMs,
  fmtN,
  fmtNum,
  fmtPct,
  type PlatformEfficiency,
  type PortabilityRow,
  type Row,
  spread,
} from './analysis.ts';
import { buildCapabilityMatrix, type CapabilityMatrix } from './capabilities.ts';
import { type CurveChart, seriesColors } from './charts.ts';
import { cpuScalingBlocks } from './cpu-scaling.ts';
import { curveBlocks } from './curves.ts';
import type { LabelledMeasurement, LoadedResults } from './load.ts';
import { implementationName, shortAdapter } from './names.ts';
import { buildScoreboard, compare, fmtSpeedup, headline, type Scoreboard, type ScoreCell } from './scoreboard.ts';

/** A table cell: plain text, or text with HTML extras (pre-escaped inner HTML, a tooltip, a class). */
export interface RichCell {
  /** What REPORT.md shows (and the HTML, unless `html` is given). */
  readonly text: string;
  /** Inner HTML for index.html, already escaped. */
  readonly html?: string;
  readonly title?: string;
  readonly className?: string;
  readonly style?: string;
}
export type Cell = string | RichCell;

export interface ChartBlock {
  readonly chart: CurveChart;
  /** The chart's data as a table: REPORT.md shows it instead of the chart. */
  readonly head: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

/** A block shown in one rendering only ('md': REPORT.md, 'html': index.html); both by default. */
type Only = { readonly only?: 'md' | 'html' };

export type Block = Only &
  (
    | { readonly kind: 'h'; readonly level: 1 | 2 | 3; readonly text: string; readonly id?: string }
    | { readonly kind: 'p'; readonly text: string; readonly className?: string }
    | { readonly kind: 'list'; readonly items: readonly string[] }
    | {
        readonly kind: 'table';
        readonly head: readonly Cell[];
        readonly rows: readonly (readonly Cell[])[];
        readonly id?: string;
        readonly className?: string;
      }
    | { readonly kind: 'charts'; readonly id: string; readonly charts: readonly ChartBlock[] }
    | { readonly kind: 'details'; readonly summary: string; readonly blocks: readonly Block[]; readonly id?: string }
  );

export function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const throughputText = (m: LabelledMeasurement): string => (m.throughput ? `${fmtNum(m.throughput.value)} ${m.throughput.unit}` : '—');
const timeText = (m: LabelledMeasurement): string => (m.ms ? `${fmtMs(m.ms.median)} (${spread(m.ms)})` : '—');
const implName = (m: LabelledMeasurement): string => `${m.implementation} ${m.backend}${m.variant ? ` [${m.variant}]` : ''}`;
const verifiedText = (m: LabelledMeasurement): string => (m.verified === undefined ? '—' : m.verified ? 'yes' : 'NO');
/** 3 decimals, but small non-zero values keep 2 significant digits (0.000 must mean a failed platform). */
const effNum = (e: number): string => (e === 0 ? '0' : e < 0.01 ? e.toPrecision(2) : e.toFixed(3));
const ppText = (pp: number | undefined): string => (pp === undefined ? '—' : pp === 0 ? '0 (a platform failed)' : effNum(pp));
const effText = (p: PlatformEfficiency): string =>
  `${p.platform}: ${p.efficiency === undefined ? `n/a (${p.note ?? ''})` : `${effNum(p.efficiency)}${p.note ? ` (${p.note})` : ''}`}${
    p.competitors !== undefined ? ` vs ${p.competitors} other${p.competitors === 1 ? '' : 's'}` : ''
  } @ n=${fmtN(p.n)}`;

export function buildDocument(analysis: Analysis, sources: readonly LoadedResults[], all: readonly LabelledMeasurement[]): Block[] {
  const out: Block[] = [];
  const board = buildScoreboard(all, analysis);
  out.push({ kind: 'h', level: 1, text: 'Trident portability report' });
  out.push({
    kind: 'p',
    text:
      'One algorithm suite, written once against Trident\u2019s kernel IR, timed on every backend that gave a device, beside the peers ' +
      '(TensorFlow.js, gpu.js, graphology) and native CUDA/CUB anchors where those ran. Every figure comes from the results files under ' +
      'Sources; nothing is typed in.',
  });

  out.push({ kind: 'h', level: 2, text: 'Scoreboard', id: 'scoreboard-title' });
  out.push({
    kind: 'p',
    className: 'legend',
    text:
      'Per algorithm and platform (machine · runtime · backend), at the largest n run: % of that platform\u2019s own zcopy ceiling ' +
      '(the bar; GB/s for zcopy itself, GFLOP/s or GTEPS where compute or edges bound) and the speedup against the toughest peer on ' +
      'the same platform, like for like (▲ green: Trident faster; ▼ red: slower; * timers differ). cpu cells of reduce, scan, histogram and ' +
      'compact also give Trident\u2019s share of the machine\u2019s own plain-JS ceiling (plain loops on as many threads as the backend has ' +
      'workers, same data, same run; a bound to approach, not a peer). Hover a cell for n, both times and timers.',
  });
  // index.html: the verdict as the table's last column; REPORT.md: as a list under it (a terminal wraps a list, not a table).
  out.push({ ...scoreboardTable(board, true), only: 'html' });
  out.push({ ...scoreboardTable(board, false), only: 'md' });
  out.push({ kind: 'list', items: board.rows.map((r) => r.verdict), only: 'md' });
  out.push({
    kind: 'p',
    only: 'md',
    text: `Adapters: ${board.platforms.map((p) => `${p.label} ${p.runtime} ${p.backend} = ${p.shortAdapter || p.adapter}`).join('; ')}.`,
  });

  out.push({ kind: 'p', className: 'legend', text: ceilingsLine(board, analysis) });
  for (const line of browserVsNode(all)) out.push({ kind: 'p', className: 'legend', text: line });

  out.push({ kind: 'h', level: 2, text: 'Performance portability (Pennycook PP)' });
  out.push({
    kind: 'p',
    text:
      'PP = |H| / \u03a3 1/e_i over the platforms H that ran the algorithm (each at its largest n); 0 if any failed. Architectural e: ' +
      'throughput / the platform\u2019s zcopy ceiling. Application e: the best-known time on the platform (fastest of Trident and every peer ' +
      'or anchor of the same backend class at that n) / Trident\u2019s time — 1 where nothing else ran, so read it with the competitor count.',
  });
  out.push(ppTable(analysis.portability));

  const curveData = curveBlocks(all, analysis.algorithms);
  // One colour per series across all charts: a platform or peer keeps its colour from chart to chart.
  const colors = seriesColors(curveData.flatMap((c) => c.chart.points.map((p) => p.series)));
  const curves = curveData.map((c) => ({ ...c, chart: { ...c.chart, colors } }));
  out.push({ kind: 'h', level: 2, text: 'Scaling curves', id: 'curves-title' });
  out.push({
    kind: 'p',
    text:
      'Throughput vs n, log-log, per algorithm: one line per Trident platform (the scoreboard\u2019s variant) and per peer. A flat line ' +
      'scales linearly; a rising one is still paying fixed costs (dispatch, launch, read-back) at small n.',
  });
  out.push({ kind: 'charts', id: 'curves', charts: curves });
  out.push(...cpuScalingBlocks(sources));

  const matrix = buildCapabilityMatrix(sources);
  out.push({ kind: 'h', level: 2, text: 'Capability matrix', id: 'capabilities-title' });
  out.push({
    kind: 'p',
    text:
      'Generated from each measured device\u2019s caps and info (`trident devices` prints the same), with the formulation each algorithm ' +
      'chose there — chosen from caps, never from the backend\u2019s name.' +
      (matrix.undescribed.length > 0
        ? ` No device descriptions in the results of: ${matrix.undescribed.join(', ')} (files written before the field existed).`
        : ''),
  });
  out.push(matrixTable(matrix));

  out.push({ kind: 'h', level: 2, text: 'Details per algorithm' });
  for (const algorithm of analysis.algorithms) out.push(algorithmDetails(algorithm, analysis));

  out.push({
    kind: 'details',
    summary: 'Bandwidth ceilings (zcopy, read + write)',
    blocks: [
      {
        kind: 'p',
        text: 'The zcopy throughput each platform reaches: the ceiling every other memory-bound algorithm on that platform is measured against.',
      },
      measurementTable(analysis.ceilings, false),
    ],
  });
  out.push({ kind: 'details', summary: 'Sources', blocks: sourceBlocks(sources) });

  out.push({ kind: 'h', level: 2, text: 'Method' });
  out.push({
    kind: 'list',
    items: [
      'Each measurement: warm-up runs, then repeated timed runs; the median is reported with min–max; every sample of one measurement comes from one timer (gpu-timestamp or wall), named beside it.',
      'Throughput uses the median. GB/s counts the bytes the operation must read + write (reduce: n reads; scan, zcopy: n reads + n writes; sorts: each key read once and written once). GFLOP/s counts 20 flop per N-body interaction; GTEPS stored edges per second.',
      'Speedups (scoreboard, peer tables) are Trident\u2019s speed over the peer\u2019s at the same n on the same machine, like for like. Where the peer has only a wall clock (TF.js, gpu.js, Node\u2019s plain loops: their time includes reading the result into host memory), Trident\u2019s "wall, call + read": runs of its own, each timed from the call until its result was in host memory, by the same adaptive warm-up and repeats as the peers \u2014 a ratio of wall times, reads included. Rows without that figure (files written before it) fall back to the same timer where both have it, else to "wall, to completion" (Trident\u2019s GPU-timed runs on the wall clock, from the call until the timestamps were read back; its result left on the device, so the ratio flatters Trident); rows marked "timers differ" had neither. Where both rows count their work, the ratio is of throughputs (so one N-body step of two force evaluations compares fairly with one CUDA evaluation), otherwise of times.',
      'In the per-algorithm tables, "wall ms" is the wall clock of the GPU-timed runs themselves (to completion, the result left on the device) and "call + read ms" the runs that also read the result into host memory (the figure held against wall-clock peers). A row timed by the sustained protocol (the GPU machine\u2019s suite, the GPU backends of its browser bench; each results file\u2019s settings.protocol, or each row\u2019s protocol where they differ, says which) is the median of batch means of back-to-back runs; the others are medians of single runs with a host round trip between them.',
      'Native anchors (CUB, CUDA) count as peers of the WebGPU backend on the same GPU; they were timed with CUDA events, as GPU timestamps.',
      'Ratios between different machines are not comparable; ratios within one machine\u2019s run are.',
      'Results from other machines (e.g. the H100 run with native CUB/CUDA anchors) appear under their own machine label.',
    ],
  });
  return out;
}

// ---------- scoreboard ----------

function scoreCell(cell: ScoreCell | undefined): Cell {
  if (!cell) return { text: '—', className: 'score none', html: '<span class="na">not run</span>' };
  if (cell.failure || !cell.figure || !cell.measurement) {
    return { text: 'failed', className: 'score failed', title: cell.tooltip, html: '<span class="fail">failed</span>' };
  }
  const m = cell.measurement;
  const share = cell.figure.share;
  const best = cell.best;
  const tone = best ? (best.speedup >= 1 ? 'win' : 'loss') : '';
  const vsText = best ? `${best.speedup >= 1 ? '▲' : '▼'} ${fmtSpeedup(best.speedup)} ${implementationName(best.peer.implementation)}` : '';
  const mixed = best?.basis === 'mixed timers' ? '*' : '';
  const unverified = m.verified === false ? ' ✗ result differs' : '';
  const ceilingText = cell.ceiling ? `${fmtPct(cell.ceiling.share)} of plain-JS ceiling` : '';
  const pct = share === undefined ? undefined : Math.max(0, Math.min(100, 100 * share));
  const html =
    `<div class="fig"${pct === undefined ? '' : ` style="--share:${pct.toFixed(1)}%"`}>${escapeHtml(cell.figure.text)}` +
    `${unverified ? `<br><span class="fail">${escapeHtml(unverified)}</span>` : ''}</div>` +
    (best ? `<div class="vs ${tone}">${escapeHtml(vsText + mixed)}</div>` : '') +
    (ceilingText ? `<div class="ceiling">${escapeHtml(ceilingText)}</div>` : '');
  return {
    text: `${cell.figure.text}${best ? ` ${vsText}${mixed}` : ''}${ceilingText ? `; ${ceilingText}` : ''}${unverified}`,
    html,
    title: cell.tooltip,
    className: `score${pct === undefined ? '' : ' share'}`,
  };
}

function scoreboardTable(board: Scoreboard, withVerdict: boolean): Block & { kind: 'table' } {
  const head: Cell[] = [
    'algorithm',
    ...board.platforms.map((p) => ({
      // REPORT.md keeps the header short (a terminal wraps wide tables); the adapters follow as a list.
      text: withVerdict ? `${p.label} · ${p.runtime} · ${p.backend}` : `${p.label} ${p.runtime} ${p.backend}`,
      html: `${escapeHtml(`${p.label} · ${p.runtime}`)}<br><b>${escapeHtml(p.backend)}</b><br><small>${escapeHtml(p.shortAdapter)}</small>`,
      title: p.adapter,
    })),
    ...(withVerdict ? ['verdict'] : []),
  ];
  return {
    kind: 'table',
    ...(withVerdict ? { id: 'scoreboard' } : {}),
    className: 'scoreboard',
    head,
    rows: board.rows.map((r) => [
      { text: r.algorithm, className: 'algo', title: r.verdict },
      ...r.cells.map(scoreCell),
      ...(withVerdict ? [{ text: r.verdict.replace(/^[^:]+: /, ''), className: 'verdict' }] : []),
    ]),
  };
}

/** Each scoreboard platform's copy ceiling: what the % figures are of, and what measured it. */
function ceilingsLine(board: Scoreboard, analysis: Analysis): string {
  const parts = board.platforms.map((p) => {
    const c = analysis.platformCeilings.find((x) => x.platform === p.key);
    return c ? `${p.key} ${fmtNum(c.best.gbps)} GB/s @ n=${fmtN(c.best.n)} (${c.best.source})` : `${p.key} none measured`;
  });
  return (
    'Copy ceilings (read + write, the highest measured on each platform; the % figures use the one at the same n): ' +
    `${parts.join('; ')}. GPU platforms: Trident\u2019s zcopy on that backend, in the same process or page. cpu platforms: the faster of ` +
    'Trident\u2019s zcopy and the machine\u2019s plain-JS copy (TypedArray set, one chunk per thread, as many threads as the backend has workers).'
  );
}

/** Algorithms the browser-vs-Node line compares, headline variants (scoreboard.ts). */
const BROWSER_VS_NODE = ['zcopy', 'reduce', 'scan', 'histogram', 'compact', 'sort', 'nbody'];

/**
 * One line per machine that ran Trident's WebGPU both in Node (Dawn) and in Chromium: the browser's
 * figure against Node's per algorithm (the same case only), at the largest n both ran by the same
 * timing protocol (a time ratio), else at each one's largest n (a throughput ratio, marked with
 * what differs).
 */
export function browserVsNode(all: readonly LabelledMeasurement[]): string[] {
  const ours = all.filter((m) => m.implementation === 'trident' && m.backend === 'webgpu' && !m.error && m.ms);
  const labels = [...new Set(ours.filter((m) => m.runtime === 'chromium').map((m) => m.label))].sort();
  const lines: string[] = [];
  for (const label of labels) {
    const parts: string[] = [];
    // Which builds the compared rows came from: a formulation may have changed between them.
    const commits = new Set<string>();
    for (const algorithm of BROWSER_VS_NODE) {
      const rows = (runtime: string) => ours.filter((m) => m.label === label && m.runtime === runtime && m.algorithm === algorithm);
      const b = headline(algorithm, rows('chromium'));
      const n = headline(algorithm, rows('node'));
      if (!b || !n) continue;
      if (b.variant !== n.variant) {
        // Different cases (e.g. sort() allocating its output against radixSort into outputs allocated once) are no comparison.
        parts.push(`${algorithm}: not compared (the browser ran '${b.variant}', Node '${n.variant}')`);
        continue;
      }
      // Like for like: the same case, timed by the same protocol (a row's own or its file's).
      const twin = (x: LabelledMeasurement, y: LabelledMeasurement) => y.variant === x.variant && y.n === x.n && y.protocol === x.protocol;
      const pairs = rows('chromium')
        .filter((x) => x.variant === b.variant)
        .flatMap((x) => rows('node').flatMap((y) => (twin(x, y) ? [[x, y] as const] : [])));
      const at = pairs.length > 0 ? Math.max(...pairs.map(([x]) => x.n)) : undefined;
      if (at !== undefined) {
        const [bm, nm] = pairs.find(([x]) => x.n === at) as readonly [LabelledMeasurement, LabelledMeasurement];
        const r = (nm.ms?.median as number) / (bm.ms?.median as number);
        commits.add(`Chromium at ${bm.commit ?? 'an unnamed commit'}, Node at ${nm.commit ?? 'an unnamed commit'}`);
        parts.push(
          `${algorithm} n=${fmtN(at)} ${fmtMs(bm.ms?.median as number)} ms vs ${fmtMs(nm.ms?.median as number)} ms (${r.toFixed(2)}×, ${bm.protocol ?? 'adaptive'})`,
        );
      } else if (b.throughput && n.throughput && b.throughput.unit === n.throughput.unit) {
        const r = b.throughput.value / n.throughput.value;
        const unlike = [
          ...(b.n !== n.n ? ['different n'] : []),
          ...(b.protocol !== n.protocol ? [`protocols ${b.protocol ?? 'adaptive'} / ${n.protocol ?? 'adaptive'}`] : []),
        ];
        parts.push(
          `${algorithm} ${fmtNum(b.throughput.value)} ${b.throughput.unit} @ n=${fmtN(b.n)} vs ${fmtNum(n.throughput.value)} @ n=${fmtN(n.n)} (${r.toFixed(2)}×, throughput, ${unlike.join(', ')})`,
        );
      }
    }
    if (parts.length > 0)
      lines.push(
        `Browser WebGPU against Node (Dawn) WebGPU on the same GPU (${label}; GPU time, Chromium first; ratio = the browser\u2019s speed over Node\u2019s, from different runs${commits.size > 0 ? `: ${[...commits].join('; ')}` : ''}): ${parts.join('; ')}.`,
      );
  }
  return lines;
}

// ---------- PP ----------

function ppTable(rows: readonly PortabilityRow[]): Block {
  const weakest = (list: readonly PlatformEfficiency[]): string => {
    const defined = list.filter((p) => p.efficiency !== undefined);
    if (defined.length === 0) return '—';
    const w = defined.reduce((a, b) => ((b.efficiency as number) < (a.efficiency as number) ? b : a));
    return `${w.platform}: ${effNum(w.efficiency as number)}${w.note ? ` (${w.note})` : ''}`;
  };
  return {
    kind: 'table',
    id: 'pp',
    className: 'compact',
    head: ['algorithm', 'platforms', 'PP architectural', 'PP application', 'weakest platform (architectural)', 'weakest (application)'],
    rows: rows.map((p) => [
      p.algorithm,
      String(p.application.platforms.length),
      ppText(p.architectural.pp),
      ppText(p.application.pp),
      weakest(p.architectural.platforms),
      weakest(p.application.platforms),
    ]),
  };
}

// ---------- capability matrix ----------

function matrixTable(matrix: CapabilityMatrix): Block {
  let lastGroup = '';
  return {
    kind: 'table',
    id: 'capabilities',
    className: 'matrix',
    head: [
      'group',
      'property',
      ...matrix.columns.map((c) => ({
        text: `${c.key}${c.shortAdapter ? ` (${c.shortAdapter})` : ''}`,
        html: `${escapeHtml(c.key)}<br><small>${escapeHtml(c.shortAdapter)}</small>`,
        title: c.adapter,
      })),
    ],
    rows: matrix.rows.map((r) => {
      const group = r.group === lastGroup ? '' : r.group;
      lastGroup = r.group;
      return [
        { text: group, className: 'group' },
        r.property,
        ...r.cells.map((c) => ({ text: c.text, className: `cap ${c.tone}`, ...(c.title ? { title: c.title } : {}) })),
      ];
    }),
  };
}

// ---------- details ----------

function algorithmDetails(algorithm: string, analysis: Analysis): Block {
  const rows = analysis.rows.get(algorithm) ?? [];
  const peers = analysis.peers.get(algorithm) ?? [];
  const blocks: Block[] = [];
  if (rows.length > 0) {
    blocks.push({
      kind: 'p',
      text:
        algorithm === 'nbody'
          ? 'GFLOP/s counts 20 flop per body-body interaction. Compute-bound: no share of the zcopy ceiling.'
          : 'GB/s = bytes read + written / median time. "% zcopy" = throughput / the same platform\u2019s zcopy ceiling (architectural efficiency).',
    });
    blocks.push(measurementTable(rows, algorithm !== 'zcopy' && algorithm !== 'nbody'));
  }
  const pp = analysis.portability.filter((p) => p.algorithm === algorithm || p.algorithm.startsWith(`${algorithm} (`));
  if (pp.length > 0) {
    blocks.push({
      kind: 'table',
      className: 'compact',
      head: ['variant', 'per-platform architectural e', 'per-platform application e'],
      rows: pp.map((p) => [
        p.algorithm,
        p.architectural.platforms.map(effText).join('; '),
        p.application.platforms.map(effText).join('; '),
      ]),
    });
  }
  const jsCeilings = analysis.jsCeilings.get(algorithm) ?? [];
  if (jsCeilings.length > 0) {
    blocks.push({
      kind: 'p',
      text:
        'The machine\u2019s plain-JS ceiling for the cpu backend: the same operation as plain loops, one per thread over a contiguous ' +
        'chunk of the same SharedArrayBuffer data, on as many threads as the backend has workers, timed in the same run (a bound, ' +
        'not a peer). Share = ceiling time / Trident cpu time.',
    });
    blocks.push({
      kind: 'table',
      head: [
        'machine',
        'runtime',
        'variant',
        'threads',
        'n',
        'ceiling median ms (min–max)',
        'Trident cpu median ms',
        '% of ceiling',
        'verified',
      ],
      rows: jsCeilings.map(({ ceiling, ours, share }) => [
        ceiling.label,
        ceiling.runtime,
        ceiling.variant || '—',
        { text: ceiling.adapter.replace(/^.*\((\d+) threads?\)$/, '$1'), title: ceiling.adapter },
        fmtN(ceiling.n),
        ceiling.error ? `error: ${ceiling.error}` : timeText(ceiling),
        ours?.ms ? fmtMs(ours.ms.median) : '—',
        fmtPct(share),
        verifiedText(ceiling),
      ]),
    });
  }
  if (peers.length > 0) {
    blocks.push({
      kind: 'p',
      text:
        'Peers and native anchors. Speedup = Trident\u2019s speed / the peer\u2019s at the same n on the same machine (> 1: Trident is ' +
        'faster), like for like as the Method section says (Trident\u2019s call + read wall time where the peer has only a wall clock). ' +
        '"Like for like": Trident on the backend the peer\u2019s mode competes with (WebGL \u2194 webgl2, WebGPU \u2194 webgpu, CPU/WASM ' +
        '\u2194 cpu, CUDA \u2194 webgpu on that GPU); "fastest": Trident\u2019s fastest backend on that machine.',
    });
    blocks.push({
      kind: 'table',
      head: [
        'machine',
        'peer',
        'runtime',
        'adapter',
        'n',
        'timer',
        'median ms (min–max)',
        'throughput',
        'Trident like for like',
        'speedup',
        'Trident fastest',
        'speedup',
      ],
      rows: peers.map(({ peer, likeForLike, fastest }) => [
        peer.label,
        implName(peer),
        peer.runtime,
        { text: shortAdapter(peer.adapter), title: peer.adapter },
        fmtN(peer.n),
        peer.timer,
        peer.error ? `error: ${peer.error}` : timeText(peer),
        throughputText(peer),
        likeForLike ? `${likeForLike.backend} ${oursTimeText(peer, likeForLike)}` : `— (no ${backendClass(peer)} result)`,
        speedup(peer, likeForLike),
        fastest ? `${fastest.backend} ${oursTimeText(peer, fastest)}` : '—',
        speedup(peer, fastest),
      ]),
    });
  }
  return { kind: 'details', summary: algorithm, id: `details-${algorithm}`, blocks };
}

/** Trident's time and the speedup against `peer`, like for like (scoreboard.ts `compare`). */
function oursTimeText(peer: LabelledMeasurement, ours: LabelledMeasurement): string {
  const c = compare(peer, ours);
  return c
    ? `${fmtMs(c.oursMs)} ms (${ours.runtime}, ${c.oursTimer})`
    : ours.ms
      ? `${fmtMs(ours.ms.median)} ms (${ours.runtime}, ${ours.timer})`
      : '—';
}

function speedup(peer: LabelledMeasurement, ours: LabelledMeasurement | undefined): string {
  const c = ours ? compare(peer, ours) : undefined;
  if (!c) return '—';
  return `${fmtSpeedup(c.speedup)}${c.basis === 'mixed timers' ? ' (timers differ)' : ''}`;
}

function measurementTable(rows: readonly Row[], withShare: boolean): Block {
  // The call + read column only where a row has the figure (the cases with a peer).
  const withRead = rows.some(({ m }) => m.wallWithReadMs !== undefined);
  const head = ['machine', 'runtime', 'backend', 'variant', 'adapter', 'n', 'timer', 'median ms (min–max)', 'wall ms'];
  if (withRead) head.push('call + read ms');
  head.push('throughput');
  if (withShare) head.push('% zcopy ceiling');
  head.push('verified');
  return {
    kind: 'table',
    head,
    rows: rows.map(({ m, zcopyShare }) => {
      const cells: Cell[] = [
        m.label,
        m.runtime,
        m.backend,
        m.variant || '—',
        { text: shortAdapter(m.adapter), title: m.adapter },
        fmtN(m.n),
        m.timer,
        m.error ? `error: ${m.error}` : timeText(m),
        m.wallMs ? fmtMs(m.wallMs.median) : '—',
        ...(withRead ? [m.wallWithReadMs ? fmtMs(m.wallWithReadMs.median) : '—'] : []),
        throughputText(m),
      ];
      if (withShare) cells.push(fmtPct(zcopyShare));
      cells.push(verifiedText(m));
      return cells;
    }),
  };
}

function sourceBlocks(sources: readonly LoadedResults[]): Block[] {
  const blocks: Block[] = [
    {
      kind: 'table',
      head: ['label', 'file', 'created', 'machine', 'adapters (full strings)', 'versions', 'measurements'],
      rows: sources.map((s) => [
        s.label,
        s.file,
        s.createdAt,
        [s.machine.os, s.machine.cpu, s.machine.cores !== undefined ? `${s.machine.cores} cores` : undefined, s.machine.gpu]
          .filter(Boolean)
          .join(', '),
        Object.entries(s.adapters)
          .map(([k, v]) => `${k}: ${v}`)
          .join('; '),
        Object.entries(s.versions)
          .map(([k, v]) => `${k} ${v}`)
          .join('; '),
        String(s.measurements.length),
      ]),
    },
  ];
  const notes = sources.flatMap((s) => s.notes.map((n) => `${s.label}: ${n}`));
  if (notes.length > 0) blocks.push({ kind: 'h', level: 3, text: 'Notes from the runs' }, { kind: 'list', items: notes });
  const unavailable = sources.flatMap((s) => s.unavailable.map((u) => `${s.label} · ${u.runtime} · ${u.backend}: ${u.reason}`));
  if (unavailable.length > 0) blocks.push({ kind: 'h', level: 3, text: 'Backends without a device' }, { kind: 'list', items: unavailable });
  const warnings = sources.flatMap((s) => s.warnings);
  if (warnings.length > 0) blocks.push({ kind: 'h', level: 3, text: 'Loader warnings' }, { kind: 'list', items: warnings });
  return blocks;
}
