/**
 * What the report says, computed from measurements: per-platform rows with the
 * share of that platform's own zcopy ceiling, comparisons with peers and native
 * anchors, and Pennycook's performance-portability metric per algorithm.
 *
 * Definitions (also printed in the report's "Method" section):
 * - A *platform* is one Trident backend on one machine in one runtime, e.g.
 *   `local · node · cpu` or `h100 · node · webgpu`.
 * - *zcopy ceiling*: the read+write copy throughput measured on that platform at
 *   the same n (the largest figure of the platform if that n was not run): Trident's
 *   own zcopy on GPU backends (in the same page for Chromium), and on cpu platforms
 *   the faster of Trident's zcopy and the machine's plain-JS copy
 *   (`TypedArray.prototype.set` on as many threads as the backend has workers,
 *   bench/ceiling.ts): a kernel's copy is the ceiling only where it matches the
 *   platform's own fastest copy.
 * - *Architectural efficiency* e = throughput / zcopy ceiling (GB/s over GB/s;
 *   algorithms counting only reads can exceed 1). Not defined for nbody, which is
 *   compute-bound.
 * - *Application efficiency* e = best-known time / Trident's time, where the
 *   best-known time is the fastest of Trident and every peer or native anchor of
 *   the same backend class measured on the same machine at the same n (a rival's
 *   time scaled to Trident's work where both rows count work in the same unit).
 * - PP = |H| / Σ 1/e_i over the platforms H that Trident's results name for the
 *   algorithm, each at the largest n it ran; 0 if any platform failed it.
 */
import type { Measurement, Stats } from '../bench/schema.ts';
import type { LabelledMeasurement } from './load.ts';

export interface PlatformKey {
  readonly label: string;
  readonly runtime: string;
  readonly backend: string;
}

export const platformName = (p: PlatformKey): string => `${p.label} · ${p.runtime} · ${p.backend}`;

/** Algorithm + variant, the unit PP is computed over. */
export const algoName = (m: Pick<Measurement, 'algorithm' | 'variant'>): string =>
  m.variant ? `${m.algorithm} (${m.variant})` : m.algorithm;

/**
 * The Trident backend a peer's mode competes with: TF.js 'webgl' and gpu.js
 * 'webgl2' run on WebGL2; 'wasm' and 'cpu' modes, and plain JavaScript ('js':
 * graphology, the sequential references) on the CPU; native CUDA/CUB anchors on
 * the GPU WebGPU drives on that machine.
 */
export function backendClass(m: Pick<Measurement, 'implementation' | 'backend'>): string {
  const b = m.backend.toLowerCase();
  if (m.implementation === 'trident') return m.backend;
  if (m.implementation === 'cub' || m.implementation === 'cuda' || m.implementation === 'wgsl-hand' || b === 'cuda') return 'webgpu';
  if (b === 'webgl' || b === 'webgl2' || b === 'gpu') return 'webgl2';
  if (b === 'webgpu') return 'webgpu';
  if (b === 'cpu' || b === 'wasm' || b === 'tensorflow' || b === 'js') return 'cpu';
  return m.backend;
}

export const isOurs = (m: Measurement): boolean => m.implementation === 'trident';

/** The machine's plain-JS ceiling for the cpu backend (bench/ceiling.ts): a bound to approach, not a peer to beat. */
export const isCeiling = (m: Measurement): boolean => m.role === 'ceiling';

/** A plain-JS ceiling row beside Trident cpu's row of the same case, n, machine and runtime. */
export interface CeilingRow {
  readonly ceiling: LabelledMeasurement;
  readonly ours?: LabelledMeasurement;
  /** Ceiling time / Trident's time (1 = as fast as the ceiling; same work, so a time ratio). */
  readonly share?: number;
}

/** Read+write zcopy is the ceiling; a write-only fill is reported but is not the ceiling. */
const isCeilingZcopy = (m: Measurement): boolean => m.algorithm === 'zcopy' && !/fill|write/i.test(m.variant);

/** A platform's copy ceiling at one n: the throughput and what measured it. */
export interface CeilingPoint {
  readonly gbps: number;
  readonly n: number;
  /** 'Trident zcopy' or the plain-JS copy's description ('plain-JS copy, TypedArray set on 16 threads'). */
  readonly source: string;
}

export interface Row {
  readonly m: LabelledMeasurement;
  readonly platform: string;
  /** Throughput / the platform's zcopy ceiling (GB/s only). */
  readonly zcopyShare?: number;
  readonly ceiling?: CeilingPoint;
}

/** What bounds one platform's memory-bound rows: its copy ceiling at the largest n measured. */
export interface PlatformCeiling {
  readonly platform: string;
  readonly best: CeilingPoint;
}

export interface PeerRow {
  readonly peer: LabelledMeasurement;
  /** Trident on the same machine, same backend class, same algorithm and n (fastest runtime). */
  readonly likeForLike?: LabelledMeasurement;
  /** Trident's fastest backend on the same machine at the same n. */
  readonly fastest?: LabelledMeasurement;
}

export interface PlatformEfficiency {
  readonly platform: string;
  readonly n: number;
  /** undefined: not defined for this algorithm (architectural, nbody); 0: the platform failed it. */
  readonly efficiency?: number;
  /** Application efficiency only: how many other implementations the best-known time was taken from. */
  readonly competitors?: number;
  readonly note?: string;
}

export interface PortabilityRow {
  readonly algorithm: string;
  readonly architectural: { readonly pp?: number; readonly platforms: PlatformEfficiency[] };
  readonly application: { readonly pp?: number; readonly platforms: PlatformEfficiency[] };
}

export interface Analysis {
  /** Algorithm names in suite order, then any others. */
  readonly algorithms: string[];
  readonly rows: ReadonlyMap<string, Row[]>;
  readonly peers: ReadonlyMap<string, PeerRow[]>;
  readonly ceilings: Row[];
  /** By algorithm: the plain-JS ceiling rows, each with Trident cpu's share of it. */
  readonly jsCeilings: ReadonlyMap<string, CeilingRow[]>;
  /** Each platform's copy ceiling (the highest throughput measured) and its source. */
  readonly platformCeilings: readonly PlatformCeiling[];
  readonly portability: PortabilityRow[];
}

const SUITE_ORDER = ['zcopy', 'reduce', 'scan', 'histogram', 'compact', 'sort', 'nbody'];

const median = (m: Measurement): number | undefined => (m.error ? undefined : m.ms?.median);

/** Pennycook's harmonic mean; 0 if any platform has e = 0; undefined with no platforms. */
export function pennycook(efficiencies: readonly number[]): number | undefined {
  if (efficiencies.length === 0) return undefined;
  if (efficiencies.some((e) => !(e > 0))) return 0;
  return efficiencies.length / efficiencies.reduce((s, e) => s + 1 / e, 0);
}

export function analyze(all: readonly LabelledMeasurement[]): Analysis {
  const ours = all.filter(isOurs);
  // Peers and anchors: every other implementation except the plain-JS ceilings, which are reported beside Trident cpu.
  const others = all.filter((m) => !isOurs(m) && !isCeiling(m));
  const keyOf = (m: LabelledMeasurement): string => platformName(m);

  const jsCeilings = new Map<string, CeilingRow[]>();
  for (const c of sortMeasurements(all.filter(isCeiling))) {
    const mine = cpuRowFor(c, ours);
    const share =
      mine && median(c) !== undefined && median(mine) !== undefined ? (median(c) as number) / (median(mine) as number) : undefined;
    const list = jsCeilings.get(c.algorithm) ?? [];
    list.push({ ceiling: c, ...(mine ? { ours: mine } : {}), ...(share !== undefined ? { share } : {}) });
    jsCeilings.set(c.algorithm, list);
  }

  // Copy ceilings per platform, by n: Trident's zcopy, and on cpu platforms the plain-JS copy of the same machine and runtime.
  const ceilingByPlatform = new Map<string, Map<number, CeilingPoint>>();
  const ceilings: Row[] = [];
  const addCeiling = (platform: string, n: number, gbps: number, source: string): void => {
    const byN = ceilingByPlatform.get(platform) ?? new Map<number, CeilingPoint>();
    const cur = byN.get(n);
    if (!cur || gbps > cur.gbps) byN.set(n, { gbps, n, source });
    ceilingByPlatform.set(platform, byN);
  };
  for (const m of ours.filter(isCeilingZcopy)) {
    if (m.throughput?.unit !== 'GB/s' || m.error) continue;
    addCeiling(keyOf(m), m.n, m.throughput.value, 'Trident zcopy');
  }
  const cpuPlatforms = new Set(ours.filter((m) => m.backend === 'cpu').map(keyOf));
  for (const c of all.filter((m) => isCeiling(m) && isCeilingZcopy(m))) {
    if (c.throughput?.unit !== 'GB/s' || c.error) continue;
    const platform = platformName({ label: c.label, runtime: c.runtime, backend: 'cpu' });
    if (!cpuPlatforms.has(platform)) continue;
    const threads = /\((\d+ threads?)\)$/.exec(c.adapter)?.[1];
    addCeiling(platform, c.n, c.throughput.value, `plain-JS copy (TypedArray set${threads ? ` on ${threads}` : ''})`);
  }
  const ceilingFor = (m: LabelledMeasurement): CeilingPoint | undefined => {
    const byN = ceilingByPlatform.get(keyOf(m));
    if (!byN || byN.size === 0) return undefined;
    const same = byN.get(m.n);
    if (same !== undefined) return same;
    let best: CeilingPoint | undefined;
    for (const p of byN.values()) if (!best || p.gbps > best.gbps) best = p;
    return best;
  };
  const platformCeilings: PlatformCeiling[] = [...ceilingByPlatform]
    .map(([platform, byN]) => ({
      platform,
      best: [...byN.values()].reduce((a, b) => (b.gbps > a.gbps ? b : a)),
    }))
    .sort((a, b) => a.platform.localeCompare(b.platform));

  const rows = new Map<string, Row[]>();
  for (const m of sortMeasurements(ours)) {
    const ceiling = m.throughput?.unit === 'GB/s' ? ceilingFor(m) : undefined;
    const row: Row = {
      m,
      platform: keyOf(m),
      ...(ceiling ? { ceiling } : {}),
      ...(ceiling && m.throughput ? { zcopyShare: m.throughput.value / ceiling.gbps } : {}),
    };
    const list = rows.get(m.algorithm) ?? [];
    list.push(row);
    rows.set(m.algorithm, list);
    if (isCeilingZcopy(m)) ceilings.push(row);
  }

  // A peer is compared with Trident's rows of the same variant where Trident has that variant
  // (CUB 'copy' with zcopy 'copy', not 'fill'); a peer's own operation name (TF.js 'top-k') matches any.
  const ourVariants = new Map<string, Set<string>>();
  for (const o of ours) ourVariants.set(o.algorithm, (ourVariants.get(o.algorithm) ?? new Set()).add(o.variant));
  const comparable = (peer: Measurement, mine: Measurement): boolean =>
    peer.algorithm === mine.algorithm && (peer.variant === mine.variant || !ourVariants.get(peer.algorithm)?.has(peer.variant));
  const fastestOurs = (peer: LabelledMeasurement, cls?: string): LabelledMeasurement | undefined => {
    let best: LabelledMeasurement | undefined;
    for (const o of ours) {
      if (o.label !== peer.label || o.n !== peer.n || !comparable(peer, o)) continue;
      if (cls !== undefined && o.backend !== cls) continue;
      const t = median(o);
      if (t === undefined) continue;
      if (!best || t < (median(best) as number)) best = o;
    }
    return best;
  };

  const peers = new Map<string, PeerRow[]>();
  for (const p of sortMeasurements(others)) {
    const likeForLike = fastestOurs(p, backendClass(p));
    const fastest = fastestOurs(p);
    const list = peers.get(p.algorithm) ?? [];
    list.push({ peer: p, ...(likeForLike ? { likeForLike } : {}), ...(fastest ? { fastest } : {}) });
    peers.set(p.algorithm, list);
  }

  // Portability per algorithm + variant.
  const portability: PortabilityRow[] = [];
  const variants = new Map<string, LabelledMeasurement[]>();
  for (const m of ours) {
    const k = algoName(m);
    const list = variants.get(k) ?? [];
    list.push(m);
    variants.set(k, list);
  }
  for (const [name, list] of variants) {
    const platforms = [...new Set(list.map(keyOf))].sort();
    const arch: PlatformEfficiency[] = [];
    const app: PlatformEfficiency[] = [];
    const computeBound = list.some((m) => m.throughput?.unit === 'GFLOP/s' || m.throughput?.unit === 'GTEPS' || m.algorithm === 'nbody');
    for (const platform of platforms) {
      const mine = list.filter((m) => keyOf(m) === platform);
      const ok = mine.filter((m) => median(m) !== undefined);
      if (ok.length === 0) {
        const why = mine.find((m) => m.error)?.error ?? 'no result';
        arch.push({ platform, n: Math.max(...mine.map((m) => m.n)), efficiency: 0, note: why });
        app.push({ platform, n: Math.max(...mine.map((m) => m.n)), efficiency: 0, note: why });
        continue;
      }
      const largest = ok.reduce((a, b) => (b.n > a.n ? b : a));
      const t = median(largest) as number;
      if (computeBound) {
        const counted = largest.throughput?.unit === 'GTEPS' ? 'edge-bound' : 'compute-bound';
        arch.push({ platform, n: largest.n, note: `${counted}: no memory ceiling` });
      } else {
        const ceiling = ceilingFor(largest);
        if (ceiling && largest.throughput) arch.push({ platform, n: largest.n, efficiency: largest.throughput.value / ceiling.gbps });
        else arch.push({ platform, n: largest.n, note: 'no zcopy ceiling measured' });
      }
      const rivals = others.filter(
        (o) =>
          o.label === largest.label &&
          comparable(o, largest) &&
          o.n === largest.n &&
          backendClass(o) === largest.backend &&
          median(o) !== undefined,
      );
      // A rival's time for our work: scaled by the throughput ratio where both count work in one unit
      // (an H100 N-body step is two force evaluations, the CUDA anchor's row one).
      const equivalent = (o: LabelledMeasurement): number =>
        o.throughput && largest.throughput && o.throughput.unit === largest.throughput.unit
          ? (t * largest.throughput.value) / o.throughput.value
          : (median(o) as number);
      // Like for like: against a rival with only a wall clock (a peer, whose wall time includes reading
      // its result), our wall time with the read where the row has it, else our wall time to completion.
      const ours = (o: LabelledMeasurement): number =>
        o.timer === 'wall' && largest.timer !== 'wall' ? (largest.wallWithReadMs?.median ?? largest.wallMs?.median ?? t) : t;
      const efficiency = Math.min(1, ...rivals.map((o) => equivalent(o) / ours(o)));
      app.push({ platform, n: largest.n, efficiency, competitors: rivals.length });
    }
    const archE = arch.map((p) => p.efficiency);
    const archPP = archE.every((e) => e !== undefined) ? pennycook(archE as number[]) : archE.some((e) => e === 0) ? 0 : undefined;
    portability.push({
      algorithm: name,
      architectural: { ...(archPP !== undefined ? { pp: archPP } : {}), platforms: arch },
      application: { ...withPP(pennycook(app.map((p) => p.efficiency as number))), platforms: app },
    });
  }
  portability.sort((a, b) => orderKey(a.algorithm) - orderKey(b.algorithm) || a.algorithm.localeCompare(b.algorithm));

  const algorithms = [...new Set([...rows.keys(), ...peers.keys()])].sort((a, b) => orderKey(a) - orderKey(b) || a.localeCompare(b));
  return { algorithms, rows, peers, ceilings, jsCeilings, platformCeilings, portability };
}

/** Trident cpu's row that a plain-JS ceiling row bounds: same machine, runtime, case and n. */
export function cpuRowFor<T extends LabelledMeasurement>(ceiling: LabelledMeasurement, ours: readonly T[]): T | undefined {
  return ours.find(
    (o) =>
      o.backend === 'cpu' &&
      o.label === ceiling.label &&
      o.runtime === ceiling.runtime &&
      o.algorithm === ceiling.algorithm &&
      o.variant === ceiling.variant &&
      o.n === ceiling.n,
  );
}

const withPP = (pp: number | undefined): { pp?: number } => (pp === undefined ? {} : { pp });

function orderKey(name: string): number {
  const base = name.split(' ')[0] ?? name;
  const i = SUITE_ORDER.indexOf(base);
  return i < 0 ? SUITE_ORDER.length : i;
}

function sortMeasurements<T extends LabelledMeasurement>(list: readonly T[]): T[] {
  return [...list].sort(
    (a, b) =>
      orderKey(a.algorithm) - orderKey(b.algorithm) ||
      a.variant.localeCompare(b.variant) ||
      a.label.localeCompare(b.label) ||
      a.runtime.localeCompare(b.runtime) ||
      a.implementation.localeCompare(b.implementation) ||
      a.backend.localeCompare(b.backend) ||
      a.n - b.n,
  );
}

export function spread(s: Stats): string {
  return `${fmtMs(s.min)}–${fmtMs(s.max)}`;
}

export function fmtMs(ms: number): string {
  if (ms >= 100) return ms.toFixed(0);
  if (ms >= 10) return ms.toFixed(1);
  if (ms >= 1) return ms.toFixed(2);
  return ms.toPrecision(2);
}

export function fmtNum(v: number): string {
  if (v >= 1000) return v.toFixed(0);
  if (v >= 100) return v.toFixed(1);
  if (v >= 1) return v.toFixed(2);
  return v.toPrecision(3);
}

export function fmtPct(v: number | undefined): string {
  if (v === undefined) return '—';
  // Two significant digits below 1% (0.0% must not hide a small share).
  return `${v > 0 && v < 0.01 ? (100 * v).toPrecision(2) : (100 * v).toFixed(v < 0.1 ? 1 : 0)}%`;
}

export function fmtN(n: number): string {
  const log = Math.log2(n);
  return Number.isInteger(log) && n >= 1024 ? `2^${log}` : String(n);
}
