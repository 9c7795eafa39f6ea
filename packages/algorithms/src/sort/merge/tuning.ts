/**
 * The gather merge sorts' tuning, as data (see device-class.ts). Narratives and rejected
 * alternatives: bench/results/tuning/LEDGER.md, rows "sort.gather" and "sort.striped".
 */
import type { TuningTable } from '../../device-class.ts';
import type { StripedShape } from './merge-striped.ts';

/** The gather merge sorts. */
export type GatherSortName = 'merge-striped' | 'merge-path';

/** The merge sorts a device of gather kernels runs, for keys alone and for pairs: the striped layout (sixteen keys or eight pairs an invocation) or merge path (four). */
export const GATHER_SORT: TuningTable<{ readonly keys: GatherSortName; readonly pairs: GatherSortName }> = {
  default: {
    value: { keys: 'merge-striped', pairs: 'merge-striped' },
    evidence:
      'bench/results/webgl2/swiftshader-2vcpu-load2-2026-11-27-striped-final.json (SwiftShader WebGL2, u32: 2^16 56.3 vs 109.0 ms, 2^20 983 vs 1428 ms GPU, load 2-3); bench/results/tuning/h100-browser-webgl2-sort-2026-11-27.json (H100 WebGL2 in Chromium, u32 2^24: 53.7 vs 114.4 ms GPU); pairs: interleaved A/B pages; LEDGER.md sort.gather',
  },
};

/** The striped merge sort's diagonal samples. */
export const STRIPED_SHAPE: TuningTable<StripedShape> = {
  default: {
    value: { stride: 128, sampledFrom: 2048 },
    evidence:
      'interleaved A/B pages on SwiftShader WebGL2 (samples every 64 or 128 outputs from runs of 128-8192 within noise); LEDGER.md sort.striped',
  },
};
