/**
 * scan's tuning, as data (see device-class.ts). Narratives and rejected alternatives:
 * bench/results/tuning/LEDGER.md, rows "scan.*".
 */
import type { Tuned, TuningTable } from '../device-class.ts';
import type { LookbackTuning } from './scan-lookback.ts';

/** The single-pass (decoupled look-back) scan's tile: invocations, quads per invocation, layout, tile ids, spin limit. */
export const LOOKBACK: TuningTable<LookbackTuning> = {
  default: {
    value: { wg: 256, vecs: 12, layout: 'subgroup', ids: 'workgroup', spinLimit: 256, forceFallback: false },
    evidence:
      'NVIDIA H100, Dawn/Vulkan, 2^28 u32: bench/results/tuning/h100-rank-batch-scan-2026-11-23.json; bench/results/archive/h100-suite-2026-11-27-1005.json (1.000x CUB); LEDGER.md scan.lookback',
  },
};

/**
 * The narrowest subgroup the look-back wants: one round trip to memory reads one
 * window of predecessors, and tiles must be published faster than tiles start, so
 * narrower windows (a CPU's width-1 emulation, software adapters' 4) leave the
 * look-back slower than reduce-then-scan.
 */
export const LOOKBACK_MIN_WINDOW: Tuned<number> = { value: 8, evidence: 'LEDGER.md scan.lookbackMinWindow' };

/**
 * The chunked formulation (serial-workgroup devices) runs as one sequential pass (one
 * chunk, one dispatch on the calling thread) while that pass, at `serialNsPerElement`
 * ns an element (scalar, or vec4 in registers), is predicted to take at most
 * `serialDispatchCosts` dispatch costs (`caps.dispatchCostMicros`).
 */
export const SCAN_CHUNKED: Tuned<{ serialNsPerElement: { 1: number; 4: number }; serialDispatchCosts: number }> = {
  value: { serialNsPerElement: { 1: 0.6, 4: 0.3 }, serialDispatchCosts: 6 },
  evidence: 'bench/results/cpu/scan-node-2vcpu-2026-11-23.json (2-vCPU Xeon, Node 20, wasm, u32 2^16); LEDGER.md scan.chunked',
};

/**
 * The gather scan's block length: a longer block buys fewer passes with more reads
 * (the final pass reads (block + 1) / 2 elements per output on average).
 */
export const GATHER_SCAN_BLOCK: TuningTable<number> = {
  default: {
    value: 8,
    evidence: 'SwiftShader WebGL2 in headless Chromium, 2^20 u32 (4 to 16 within noise, 32 slower); LEDGER.md scan.gatherBlock',
  },
};
