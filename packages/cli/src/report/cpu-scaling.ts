/**
 * The report's "CPU scaling" section: per cpu platform (machine · runtime), the throughput of
 * each case a worker sweep ran (`trident bench --worker-sweep`, bench/worker-sweep.ts) against
 * the backend's worker count, with its share of that platform's copy ceiling on as many
 * threads (the plain-JS `TypedArray.prototype.set`, bench/ceiling.ts, measured at the same n).
 *
 * A sweep row is a Trident cpu row whose adapter says its worker count ("… (4 workers)"); a
 * ceiling row says its threads ("… (4 threads)"). Rows are read from each results file as it
 * was written, not from the report's merged rows (which keep one per case and size of a
 * machine); where several files give the same point, the newest file's is used. No sweep rows:
 * no section.
 */
import { algoName, fmtN, fmtNum, fmtPct, platformName } from './analysis.ts';
import type { Block, Cell } from './document.ts';
import type { LabelledMeasurement, LoadedResults } from './load.ts';
import { comparePlatforms } from './names.ts';

/** One case at one n on one platform, by worker count. */
export interface ScalingLine {
  readonly platform: string;
  /** 'reduce (sum)' etc. */
  readonly algorithm: string;
  readonly n: number;
  readonly points: ReadonlyMap<number, ScalingPoint>;
}

export interface ScalingPoint {
  readonly m: LabelledMeasurement;
  /** GB/s of the copy ceiling on as many threads at the same n, where one was measured. */
  readonly ceilingGbps?: number;
}

/** One platform's sweep: its worker counts, its lines, and its copy ceiling by n and threads. */
export interface PlatformScaling {
  readonly platform: string;
  readonly workers: readonly number[];
  readonly lines: readonly ScalingLine[];
  /** n -> threads -> GB/s. */
  readonly ceilings: ReadonlyMap<number, ReadonlyMap<number, number>>;
}

/** The count an adapter ends in: '(4 workers)' for a sweep's Trident row (bench/worker-sweep.ts), '(4 threads)' for a ceiling row. */
const countIn = (adapter: string, unit: 'worker' | 'thread'): number | undefined => {
  const m = new RegExp(`\\((\\d+) ${unit}s?\\)$`).exec(adapter);
  return m ? Number(m[1]) : undefined;
};

const isCopyCeiling = (m: LabelledMeasurement): boolean => m.role === 'ceiling' && m.algorithm === 'zcopy' && m.variant === 'copy';

/** The newest value per key across files (a file's own rows in order: the later wins). */
class Newest<T> {
  private readonly map = new Map<string, { value: T; at: string }>();
  set(key: string, value: T, at: string): void {
    const cur = this.map.get(key);
    if (!cur || cur.at <= at) this.map.set(key, { value, at });
  }
  values(): T[] {
    return [...this.map.values()].map((v) => v.value);
  }
}

export function cpuScaling(sources: readonly LoadedResults[]): PlatformScaling[] {
  const rows = new Newest<{ m: LabelledMeasurement; workers: number }>();
  const copies = new Newest<{ m: LabelledMeasurement; threads: number }>();
  for (const s of sources) {
    for (const m of s.measurements) {
      const workers = m.implementation === 'trident' && m.backend === 'cpu' ? countIn(m.adapter, 'worker') : undefined;
      if (workers !== undefined) rows.set([m.label, m.runtime, algoName(m), m.n, workers].join('|'), { m, workers }, s.createdAt);
      const threads = isCopyCeiling(m) ? countIn(m.adapter, 'thread') : undefined;
      if (threads !== undefined && !m.error && m.throughput?.unit === 'GB/s')
        copies.set([m.label, m.runtime, m.n, threads].join('|'), { m, threads }, s.createdAt);
    }
  }
  const platformOf = (m: LabelledMeasurement): string => platformName({ label: m.label, runtime: m.runtime, backend: 'cpu' });
  const ceilings = new Map<string, Map<number, Map<number, number>>>();
  for (const { m, threads } of copies.values()) {
    const byN = ceilings.get(platformOf(m)) ?? new Map<number, Map<number, number>>();
    const byThreads = byN.get(m.n) ?? new Map<number, number>();
    byThreads.set(threads, m.throughput?.value as number);
    byN.set(m.n, byThreads);
    ceilings.set(platformOf(m), byN);
  }
  const platforms = new Map<
    string,
    { key: LabelledMeasurement; lines: Map<string, ScalingLine & { points: Map<number, ScalingPoint> }> }
  >();
  for (const { m, workers } of rows.values()) {
    const platform = platformOf(m);
    const entry = platforms.get(platform) ?? { key: m, lines: new Map() };
    const lineKey = `${algoName(m)}|${m.n}`;
    const line = entry.lines.get(lineKey) ?? { platform, algorithm: algoName(m), n: m.n, points: new Map<number, ScalingPoint>() };
    const ceiling = ceilings.get(platform)?.get(m.n)?.get(workers);
    line.points.set(workers, { m, ...(ceiling !== undefined ? { ceilingGbps: ceiling } : {}) });
    entry.lines.set(lineKey, line);
    platforms.set(platform, entry);
  }
  return [...platforms.entries()]
    .sort(([, a], [, b]) => comparePlatforms({ ...a.key, backend: 'cpu' }, { ...b.key, backend: 'cpu' }))
    .map(([platform, { lines }]) => {
      const list = [...lines.values()].sort((a, b) => a.algorithm.localeCompare(b.algorithm) || a.n - b.n);
      const workers = [...new Set(list.flatMap((l) => [...l.points.keys()]))].sort((a, b) => a - b);
      return { platform, workers, lines: list, ceilings: ceilings.get(platform) ?? new Map() };
    });
}

function pointCell(p: ScalingPoint | undefined): Cell {
  if (!p) return '—';
  const { m } = p;
  if (m.error || !m.throughput) return { text: 'failed', title: m.error ?? 'no time', className: 'fail' };
  const gbps = m.throughput.value;
  const share = p.ceilingGbps !== undefined && m.throughput.unit === 'GB/s' ? ` · ${fmtPct(gbps / p.ceilingGbps)} of copy` : '';
  const unverified = m.verified === false ? ' ✗ result differs' : '';
  return { text: `${fmtNum(gbps)} ${m.throughput.unit}${share}${unverified}`, title: `n=${m.n}, median ${m.ms?.median ?? '—'} ms` };
}

/** The section's blocks: nothing where no results file holds a worker sweep. */
export function cpuScalingBlocks(sources: readonly LoadedResults[]): Block[] {
  const platforms = cpuScaling(sources);
  if (platforms.length === 0) return [];
  const out: Block[] = [
    { kind: 'h', level: 2, text: 'CPU scaling', id: 'cpu-scaling-title' },
    {
      kind: 'p',
      text:
        'The cpu backend against its worker count (`trident bench --worker-sweep`): GB/s of each case, and its share of the same ' +
        'machine\u2019s copy ceiling on as many threads at the same n (the plain-JS copy, TypedArray set, one chunk per thread: the ' +
        'fastest copy the platform offers). A share that holds as workers are added scales as the memory does; one that falls is ' +
        'limited by something else (joins, dispatch, a serial pass).',
    },
  ];
  for (const p of platforms) {
    const head: Cell[] = ['case @ n', ...p.workers.map((w) => `${w} worker${w === 1 ? '' : 's'}`)];
    const rows: Cell[][] = p.lines.map((l) => [`${l.algorithm} @ ${fmtN(l.n)}`, ...p.workers.map((w) => pointCell(l.points.get(w)))]);
    for (const n of [...new Set(p.lines.map((l) => l.n))].sort((a, b) => a - b)) {
      const byThreads = p.ceilings.get(n);
      if (byThreads === undefined) continue;
      rows.push([
        `copy ceiling @ ${fmtN(n)}`,
        ...p.workers.map((w) => {
          const g = byThreads.get(w);
          return g === undefined ? '—' : `${fmtNum(g)} GB/s`;
        }),
      ]);
    }
    out.push({ kind: 'h', level: 3, text: p.platform });
    out.push({ kind: 'table', className: 'cpu-scaling', head, rows });
  }
  return out;
}
