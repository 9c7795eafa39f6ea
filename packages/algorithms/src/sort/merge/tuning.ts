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
      'bench/results/webgl2/swiftshader-2vcpu-2026-11-27-striped-first.json (SwiftShader WebGL2, 2^16 and 2^20 u32, one page, load 7-8); LEDGER.md sort.gatherKeys',
  },
};

/** The striped merge sort's diagonal samples. */
export const STRIPED_SHAPE: TuningTable<StripedShape> = {
  default: {
    value: { stride: 128, sampledFrom: 2048 },
    evidence:
      'bench/results/webgl2/swiftshader-2vcpu-2026-11-27-striped-first.json (SwiftShader WebGL2; thresholds from interleaved A/B pages); LEDGER.md sort.striped',
  },
};
