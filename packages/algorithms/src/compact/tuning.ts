/**
 * compact's tuning, as data (see device-class.ts). Narratives and rejected
 * alternatives: bench/results/tuning/LEDGER.md, rows "compact.*".
 */
import type { Tuned } from '../device-class.ts';

/**
 * The tile-scan formulation (workgroup devices): invocations per workgroup and flags
 * per invocation (a multiple of 4: quads, loaded as one vec4 each where the length
 * allows). A tile is wg × items consecutive elements; the workgroup size is capped
 * by the device's limits (blockSize).
 */
export const TILES: Tuned<{ wg: number; items: number }> = {
  value: { wg: 256, items: 16 },
  evidence:
    'not yet measured on a GPU: chosen by the scan look-back tile (256 invocations) and 4 vec4 loads in flight per buffer, as histogram.shared; LEDGER.md compact.tiles',
};
