/**
 * histogram's tuning, as data (see device-class.ts). Narratives and rejected
 * alternatives: bench/results/tuning/LEDGER.md, rows "histogram.*".
 */
import type { Tuned } from '../device-class.ts';

/**
 * The shared (workgroup-memory) formulation: copies are capped at `maxCopies` (past a
 * 32-lane subgroup they only cost workgroup memory), `unroll` vector loads in flight,
 * and `waves` waves of `caps.concurrency` resident invocations of workgroups.
 */
export const SHARED: Tuned<{ maxCopies: number; unroll: number; waves: number }> = {
  value: { maxCopies: 32, unroll: 4, waves: 4 },
  evidence:
    'NVIDIA H100, bench/h100/hist-check.ts: bench/results/tuning/h100-hist-check-2026-11-22.json (256 bins, 2^28); LEDGER.md histogram.shared',
};

/**
 * The chunked formulation (serial-workgroup devices) keeps one sub-histogram per chunk
 * while bins × chunks <= n × maxBinsPerElement and bins × chunks <= maxSubElements
 * (16 MiB of scratch); otherwise one histogram of global atomics.
 */
export const CHUNKED_HISTOGRAM: Tuned<{ maxBinsPerElement: number; maxSubElements: number }> = {
  value: { maxBinsPerElement: 2, maxSubElements: 2 ** 22 },
  evidence:
    'bench/cpu-hist-bins.ts on a 2-vCPU VM, 2 workers: bench/results/cpu/hist-compact-2vcpu-2026-11-23.json; LEDGER.md histogram.chunked',
};
