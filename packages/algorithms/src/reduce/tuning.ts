/**
 * reduce's tuning, as data (see device-class.ts). Narratives and rejected
 * alternatives: bench/results/tuning/LEDGER.md, rows "reduce.*".
 */
import type { Tuned } from '../device-class.ts';

/** Elements each gather-pass invocation combines (a pairwise tree of depth 4). */
export const FAN_IN: Tuned<number> = { value: 16, evidence: 'gather-only and software devices; LEDGER.md reduce.fanIn' };

/** Loads in flight per grid-stride iteration of the workgroup formulation. */
export const UNROLL: Tuned<number> = {
  value: 8,
  evidence: 'bench/results/archive/h100-suite-2026-11-27-1005.json (reduce u32 2^28 1.008x CUB); LEDGER.md reduce.unroll',
};

/**
 * The chunked formulation (serial-workgroup devices): chunks per unit of
 * `caps.concurrency` (1: one contiguous chunk per worker, the least joining), the
 * fewest elements worth a chunk of their own, the interleaved accumulators, and the
 * vector width of loads and accumulators on devices with 'simd' when the length divides by it.
 */
export const CHUNKED: Tuned<{ chunksPerConcurrency: number; minChunk: number; lanes: number; simdWidth: 4 }> = {
  value: { chunksPerConcurrency: 1, minChunk: 4096, lanes: 8, simdWidth: 4 },
  evidence: 'bench/results/cpu/reduce-node-2vcpu-2026-11-23.json (2-vCPU Xeon, Node 20, u32 sum); LEDGER.md reduce.lanes',
};

/**
 * When `reduce` folds the whole input as one chunk, straight into the result (one
 * dispatch, which a CPU runs on its calling thread): while one thread's pass, at
 * `serialNsPerElement` ns an element (scalar loads, or vec4), is predicted to take at
 * most `serialDispatchCosts` dispatch costs (`caps.dispatchCostMicros`). Two workers
 * break even at twice the round trip of the serial pass.
 */
export const REDUCE_SERIAL: Tuned<{ serialNsPerElement: { 1: number; 4: number }; serialDispatchCosts: number }> = {
  value: { serialNsPerElement: { 1: 0.3, 4: 0.1 }, serialDispatchCosts: 2 },
  evidence: 'bench/results/cpu/cpu-dispatch-2vcpu-2026-11-23.json (2-vCPU Xeon, wasm kernels, u32 sum 2^16); LEDGER.md reduce.serial',
};
