/**
 * The gather merge sorts' tuning, as data (see device-class.ts). Narratives and rejected
 * alternatives: bench/results/tuning/LEDGER.md, rows "sort.gatherKeys" and "sort.striped".
 */
import type { TuningTable } from '../../device-class.ts';
import type { StripedShape } from './merge-striped.ts';

/** The merge sort a device of gather kernels runs for keys alone: the striped layout (sixteen keys an invocation) or merge path (four). */
export const GATHER_KEYS_SORT: TuningTable<'merge-striped' | 'merge-path'> = {
  default: {
    value: 'merge-striped',
    evidence:
      'bench/results/webgl2/swiftshader-2vcpu-load3-2026-11-27-striped.json (SwiftShader WebGL2, u32: 2^16 43.6 vs 91.2 ms, 2^20 850 vs 1964 ms GPU, load 3-4); LEDGER.md sort.gatherKeys',
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
