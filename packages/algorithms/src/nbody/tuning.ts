/**
 * N-body's tuning, as data (see device-class.ts). Narratives and rejected
 * alternatives: bench/results/tuning/LEDGER.md, rows "nbody.*".
 */
import type { Tuned } from '../device-class.ts';
import type { NBodyBlocking, NBodyTiling } from './nbody.ts';

/** The largest default tiling of the tiled formulation (narrowed for small n by `defaultTiling`). */
export const TILING: Tuned<NBodyTiling> = {
  value: { workgroupSize: 512, bodiesPerInvocation: 4, unroll: 16 },
  evidence:
    'NVIDIA H100, n = 262144, bench/h100/nbody-check.ts: bench/results/tuning/h100-nbody-check-2026-11-22.json; LEDGER.md nbody.tiling',
};

/** The serial formulation's bodies per invocation (CPU workers). */
export const BLOCKING: Tuned<NBodyBlocking> = {
  value: { bodiesPerInvocation: 8 },
  evidence:
    'bench/nbody-kernel-time.ts, 2048 bodies, one thread of a 2-core Xeon VM: bench/results/cpu/nbody-cpu-2vcpu-2026-11-23.json; LEDGER.md nbody.blocking',
};

/** Other bodies per inner-loop iteration of the gather kernel. */
export const GATHER_UNROLL: Tuned<number> = {
  value: 4,
  evidence: 'WebGL2 on SwiftShader, 2048 bodies, fastest of 5 (2 within 10%, 8 within 3%); LEDGER.md nbody.gatherUnroll',
};
