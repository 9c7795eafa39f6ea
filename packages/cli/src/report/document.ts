/**
 * The report as a list of blocks (headings, paragraphs, tables, charts), built
 * once and rendered twice: REPORT.md (charts omitted) and a self-contained
 * index.html (charts as inline SVG).
 */
import {
  type Analysis,
  algoName,
  backendClass,
  fmtMs,
  fmtN,
  fmtNum,
  fmtPct,
  type PlatformEfficiency,
  platformName,
  type Row,
  spread,
} from './analysis.ts';
import type { LabelledMeasurement, LoadedResults } from './load.ts';
import { type Bar, barChart } from './svg.ts';

export type Block =
  | { readonly kind: 'h'; readonly level: 1 | 2 | 3; readonly text: string }
  | { readonly kind: 'p'; readonly text: string }
  | { readonly kind: 'list'; readonly items: readonly string[] }
  | { readonly kind: 'table'; readonly head: readonly string[]; readonly rows: readonly (readonly string[])[] }
  | { readonly kind: 'chart'; readonly svg: string; readonly alt: string };

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

export function buildDocument(analysis: Analysis, sources: readonly LoadedResults[]): Block[] {
  const out: Block[] = [];
  out.push({ kind: 'h', level: 1, text: 'Trident portability report' });
  out.push({
    kind: 'p',
    text:
      'One algorithm suite, written once against Trident\u2019s kernel IR, timed on every backend that gave a device, beside the peers ' +
      '(gpu.js, TensorFlow.js) and native CUDA/CUB anchors where those were run. Every figure below comes from the results files ' +
      'listed under Sources; nothing is typed in by hand.',
  });

  out.push({ kind: 'h', level: 2, text: 'Performance portability (Pennycook PP)' });
  out.push({
    kind: 'p',
    text:
      'PP = |H| / \u03a3 1/e_i over the platforms H that ran the algorithm (each at the largest n it ran); 0 if any platform failed it. ' +
      'Architectural efficiency: throughput / that platform\u2019s measured zcopy ceiling. Application efficiency: best-known time on ' +
      'that platform (fastest of Trident and every peer or anchor of the same backend class on that machine at that n) / Trident\u2019s time; ' +
      'where no other implementation ran it, e = 1 by definition, so read it with the competitor count.',
  });
  out.push({
    kind: 'table',
    head: [
      'algorithm',
      'platforms',
      'PP (architectural)',
      'PP (application)',
      'per-platform architectural e',
      'per-platform application e',
    ],
    rows: analysis.portability.map((p) => [
      p.algorithm,
      String(p.application.platforms.length),
      ppText(p.architectural.pp),
      ppText(p.application.pp),
      p.architectural.platforms.map(effText).join('; '),
      p.application.platforms.map(effText).join('; '),
    ]),
  });
  const ppBars: Bar[] = analysis.portability
    .filter((p) => p.architectural.pp !== undefined)
    .map((p) => ({ label: p.algorithm, value: p.architectural.pp as number, group: 'architectural', text: ppText(p.architectural.pp) }));
  out.push({
    kind: 'chart',
    alt: 'PP (architectural) per algorithm',
    svg: barChart({
      id: 'chart-pp',
      title: 'PP, architectural efficiency',
      unit: 'harmonic mean of throughput / zcopy ceiling',
      bars: ppBars,
    }),
  });

  out.push({ kind: 'h', level: 2, text: 'Bandwidth ceilings (zcopy, read + write)' });
  out.push({
    kind: 'p',
    text: 'The zcopy throughput each platform reaches: the ceiling every other memory-bound algorithm on that platform is measured against.',
  });
  out.push(measurementTable(analysis.ceilings, false));

  for (const algorithm of analysis.algorithms) {
    const rows = analysis.rows.get(algorithm) ?? [];
    const peers = analysis.peers.get(algorithm) ?? [];
    out.push({ kind: 'h', level: 2, text: algorithm });
    if (rows.length > 0) {
      out.push({
        kind: 'p',
        text:
          algorithm === 'nbody'
            ? 'GFLOP/s counts 20 flop per body-body interaction. Compute-bound: no share of the zcopy ceiling.'
            : 'GB/s = bytes read + written / median time. "% zcopy" = throughput / the same platform\u2019s zcopy ceiling (architectural efficiency).',
      });
      out.push(measurementTable(rows, algorithm !== 'zcopy' && algorithm !== 'nbody'));
      out.push({ kind: 'chart', alt: `${algorithm} throughput`, svg: throughputChart(algorithm, rows, peers) });
    }
    if (peers.length > 0) {
      out.push({ kind: 'h', level: 3, text: `${algorithm}: peers and native anchors` });
      out.push({
        kind: 'p',
        text:
          'Speedup = peer time / Trident time at the same n on the same machine (> 1: Trident is faster). "Like for like" is Trident on the ' +
          'backend the peer\u2019s mode competes with (WebGL \u2194 webgl2, WebGPU \u2194 webgpu, CPU/WASM \u2194 cpu, CUDA \u2194 webgpu on that GPU).',
      });
      if (peers.some(({ peer, likeForLike }) => likeForLike && likeForLike.timer !== peer.timer)) {
        out.push({
          kind: 'p',
          text:
            'Where the timers differ (e.g. Trident on gpu-timestamp, a peer on wall clock including its read-back), the speedup favours ' +
            'the gpu-timestamp side by the read-back and submission overhead; each side’s timer is given.',
        });
      }
      out.push({
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
          peer.adapter,
          fmtN(peer.n),
          peer.timer,
          peer.error ? `error: ${peer.error}` : timeText(peer),
          throughputText(peer),
          likeForLike
            ? `${likeForLike.backend} ${fmtMs(likeForLike.ms?.median as number)} ms (${likeForLike.runtime}, ${likeForLike.timer})`
            : `— (no ${backendClass(peer)} result)`,
          speedup(peer, likeForLike),
          fastest ? `${fastest.backend} ${fmtMs(fastest.ms?.median as number)} ms` : '—',
          speedup(peer, fastest),
        ]),
      });
    }
  }

  out.push({ kind: 'h', level: 2, text: 'Sources' });
  out.push({
    kind: 'table',
    head: ['label', 'file', 'created', 'machine', 'adapters', 'versions', 'measurements'],
    rows: sources.map((s) => [
      s.label,
      s.file,
      s.createdAt,
      [s.machine.os, s.machine.cpu, s.machine.cores !== undefined ? `${s.machine.cores} cores` : undefined].filter(Boolean).join(', '),
      Object.entries(s.adapters)
        .map(([k, v]) => `${k}: ${v}`)
        .join('; '),
      Object.entries(s.versions)
        .map(([k, v]) => `${k} ${v}`)
        .join('; '),
      String(s.measurements.length),
    ]),
  });
  const notes = sources.flatMap((s) => s.notes.map((n) => `${s.label}: ${n}`));
  if (notes.length > 0) {
    out.push({ kind: 'h', level: 3, text: 'Notes from the runs' });
    out.push({ kind: 'list', items: notes });
  }
  const unavailable = sources.flatMap((s) => s.unavailable.map((u) => `${s.label} · ${u.runtime} · ${u.backend}: ${u.reason}`));
  if (unavailable.length > 0) {
    out.push({ kind: 'h', level: 3, text: 'Backends without a device' });
    out.push({ kind: 'list', items: unavailable });
  }
  const warnings = sources.flatMap((s) => s.warnings);
  if (warnings.length > 0) {
    out.push({ kind: 'h', level: 3, text: 'Loader warnings' });
    out.push({ kind: 'list', items: warnings });
  }
  out.push({ kind: 'h', level: 2, text: 'Method' });
  out.push({
    kind: 'list',
    items: [
      'Each measurement: warm-up runs, then repeated timed runs; the median is reported with min–max; every sample of one measurement comes from one timer source (gpu-timestamp or wall), named in the table.',
      'Throughput uses the median. GB/s counts bytes read + written by the algorithm\u2019s minimal traffic (e.g. reduce: n reads; scan, zcopy: n reads + n writes).',
      'Ratios between different machines are not comparable; ratios within one machine\u2019s run are.',
      'Results from other machines (e.g. the H100 run with native CUB/CUDA anchors) appear as rows under their own machine label.',
    ],
  });
  return out;
}

function speedup(peer: LabelledMeasurement, ours: LabelledMeasurement | undefined): string {
  const p = peer.ms?.median;
  const o = ours?.ms?.median;
  if (peer.error || p === undefined || o === undefined || !(o > 0)) return '—';
  return `${(p / o).toFixed(2)}×`;
}

function measurementTable(rows: readonly Row[], withShare: boolean): Block {
  const head = ['machine', 'runtime', 'backend', 'variant', 'adapter', 'n', 'timer', 'median ms (min–max)', 'throughput'];
  if (withShare) head.push('% zcopy ceiling');
  head.push('verified');
  return {
    kind: 'table',
    head,
    rows: rows.map(({ m, zcopyShare }) => {
      const cells = [
        m.label,
        m.runtime,
        m.backend,
        m.variant || '—',
        m.adapter,
        fmtN(m.n),
        m.timer,
        m.error ? `error: ${m.error}` : timeText(m),
        throughputText(m),
      ];
      if (withShare) cells.push(fmtPct(zcopyShare));
      cells.push(verifiedText(m));
      return cells;
    }),
  };
}

/** Throughput of every implementation at each one's largest n for this algorithm, per machine. */
function throughputChart(algorithm: string, rows: readonly Row[], peers: readonly { peer: LabelledMeasurement }[]): string {
  const largest = new Map<string, LabelledMeasurement>();
  const consider = (m: LabelledMeasurement): void => {
    if (m.error || !m.throughput) return;
    const key = `${platformName(m)}|${m.implementation}|${algoName(m)}`;
    const cur = largest.get(key);
    if (!cur || m.n > cur.n) largest.set(key, m);
  };
  for (const r of rows) consider(r.m);
  for (const p of peers) consider(p.peer);
  const list = [...largest.values()];
  const unit = list[0]?.throughput?.unit ?? (algorithm === 'nbody' ? 'GFLOP/s' : 'GB/s');
  const bars: Bar[] = list
    .filter((m) => m.throughput?.unit === unit)
    .map((m) => ({
      label: `${m.label} ${m.runtime} ${m.implementation === 'trident' ? '' : `${m.implementation} `}${m.backend}${m.variant ? ` ${m.variant}` : ''} n=${fmtN(m.n)}`,
      value: m.throughput?.value as number,
      group: m.implementation,
      text: throughputText(m),
    }));
  return barChart({ id: `chart-${algorithm}`, title: `${algorithm}: throughput at the largest n run`, unit, bars, log: true });
}
