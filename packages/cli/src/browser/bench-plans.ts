/**
 * What the browser bench on the GPU machine runs (bench/h100/browser-run.ts): per scale,
 * Trident's cases and sizes, the peers' sizes and the timing settings, and the page calls
 * made of them.
 *
 * Trident's GPU backends (webgpu, webgl2) are timed by the sustained protocol, as the Node
 * suite on the same GPU is (bench/sustained.ts: run one at a time with a host round trip
 * between runs, the H100 drops its clock), each backend's first step after back-to-back
 * copies as the suite's devices are; the cpu backend, the plain-JS ceiling and the peers by
 * the adaptive one (bench/timing.ts). Every row says which (`protocol`).
 */
import type { RunSettings } from '../bench/runner.ts';
import { SUSTAINED } from '../bench/sustained.ts';
import type { PageConfig } from './protocol.ts';

const pow2 = (from: number, to: number, step = 1): number[] => {
  const out: number[] = [];
  for (let e = from; e <= to; e += step) out.push(2 ** e);
  return out;
};

/** Stored entries of the R-MAT graphs of 2^s vertices (edge factor 8, both directions): bench/graph-cases.ts. */
const rmat = (scales: readonly number[]): number[] => scales.map((s) => 16 * 2 ** s);

export interface BrowserPlan {
  /** Trident's cases: `algorithm:variant` -> sizes. */
  readonly cases: Readonly<Record<string, readonly number[]>>;
  /** The peers' sizes by operation (browser/peers.ts). */
  readonly peers: Readonly<Record<string, readonly number[]>>;
  /** The adaptive protocol's settings: the cpu backend, the ceiling, the peers, and every run that includes a read. */
  readonly settings: Omit<RunSettings, 'sustained'>;
  /** The sustained protocol's settings: Trident's GPU backends. */
  readonly sustained: NonNullable<RunSettings['sustained']>;
  /** Back-to-back copies before each GPU backend's first step (ms). */
  readonly deviceWarmupMs: number;
  /** A peer's time budget per run (PageConfig.peerBudgetMs). */
  readonly peerBudgetMs: number;
}

export const BROWSER_PLANS = {
  h100: {
    cases: {
      'zcopy:copy': pow2(16, 26, 2),
      'reduce:sum': pow2(16, 26, 2),
      'scan:inclusive': pow2(16, 26, 2),
      'histogram:256 bins': pow2(16, 26, 2),
      'compact:half kept': pow2(16, 26, 2),
      'sort:auto': pow2(16, 26, 2),
      // The formulations side by side, where the device's own choice (sort:auto) is one of them.
      'sort:radix': pow2(16, 24, 4),
      'sort:merge': pow2(16, 24, 4),
      // The Node suite's sort case (outputs allocated once): browser against Node like for like.
      'sort:radix keys': pow2(24, 26, 2),
      // Blended atomics beside the packed counting that gather devices run for 256 bins.
      'histogram:256 bins blended': pow2(16, 24, 4),
      'nbody:accelerations': [4096, 16384, 65536],
      'bfs:rmat': rmat([16, 18, 20]),
      'components:rmat': rmat([16, 18, 20]),
    },
    peers: { reduce: pow2(16, 26, 2), scan: pow2(16, 26, 2), sort: pow2(16, 26, 2), nbody: [4096, 16384, 65536] },
    settings: { warmup: 2, warmupMs: 200, repeats: 7, budgetMs: 2000 },
    // The Node suite's settings and device warm-up (trident bench --suite h100).
    sustained: SUSTAINED,
    deviceWarmupMs: 3000,
    peerBudgetMs: 4000,
  },
  small: {
    cases: {
      'zcopy:copy': [2 ** 12, 2 ** 14],
      'reduce:sum': [2 ** 12, 2 ** 14],
      'scan:inclusive': [2 ** 12, 2 ** 14],
      'histogram:256 bins': [2 ** 12, 2 ** 14],
      'compact:half kept': [2 ** 12, 2 ** 14],
      'sort:auto': [2 ** 10, 2 ** 12],
      'sort:radix keys': [2 ** 10, 2 ** 12],
      'nbody:accelerations': [256, 512],
      'bfs:rmat': rmat([8, 10]),
      'components:rmat': rmat([8, 10]),
    },
    peers: { reduce: [2 ** 12, 2 ** 14], scan: [2 ** 12, 2 ** 14], sort: [2 ** 10, 2 ** 12], nbody: [256, 512] },
    settings: { warmup: 1, warmupMs: 50, repeats: 3, budgetMs: 500 },
    // The same path at a toy's cost (a software GPU here).
    sustained: { batches: 3, warmupMs: 50, batchMs: 20, maxBatchRuns: 8 },
    deviceWarmupMs: 100,
    peerBudgetMs: 1000,
  },
} as const satisfies Record<string, BrowserPlan>;

/** Trident's backends that the sustained protocol times (the GPU ones). */
export const SUSTAINED_BACKENDS: ReadonlySet<string> = new Set(['webgpu', 'webgl2']);

/** The page call that measures one case at one size on one backend; `first`: the backend's first step (its device warms up first). */
export function tridentStep(plan: BrowserPlan, key: string, n: number, backend: string, first: boolean): PageConfig {
  const gpu = SUSTAINED_BACKENDS.has(backend);
  return {
    backends: [backend],
    cases: [{ key, sizes: [n] }],
    settings: gpu ? { ...plan.settings, sustained: plan.sustained } : plan.settings,
    ...(gpu && first ? { deviceWarmupMs: plan.deviceWarmupMs } : {}),
    peers: false,
    peerSizes: {},
  };
}

/** The page call that runs every peer at its sizes. */
export function peersStep(plan: BrowserPlan): PageConfig {
  return { backends: [], cases: [], settings: plan.settings, peers: true, peerSizes: plan.peers, peerBudgetMs: plan.peerBudgetMs };
}

/** The results file's note on how its rows were timed. */
export function timingNote(plan: BrowserPlan): string {
  const s = plan.settings;
  const t = plan.sustained;
  return (
    `Timing: Trident's ${[...SUSTAINED_BACKENDS].join(' and ')} rows by the sustained protocol (protocol: sustained), as the Node suite on this GPU: ` +
    `the median of ${t.batches} batch means, each batch about ${t.batchMs} ms of back-to-back runs (at most ${t.maxBatchRuns}), after at least ` +
    `${t.warmupMs} ms of the same load, following one run checked against the sequential reference; each of these backends' first step began ` +
    `with ${plan.deviceWarmupMs} ms of back-to-back copies. Trident's cpu rows, the plain-JS ceiling and the peers by the adaptive protocol ` +
    `(protocol: adaptive): warm-up ${s.warmup} runs at least (adaptive to ${s.warmupMs} ms), ${s.repeats} repeats or ${s.budgetMs} ms of ` +
    `timed work (at least 3); peers' per-run budget ${plan.peerBudgetMs} ms. wallWithReadMs (Trident's cases with a peer): runs of their own, ` +
    'each from the call until the result was in host memory, by the adaptive protocol as the peers (whose wall time includes reading their ' +
    'result) are. Trident runs one size per page call, on a fresh device.'
  );
}
