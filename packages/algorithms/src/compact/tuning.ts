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
  value: { wg: 256, items: 4 },
  evidence:
    'bench/results/tuning/h100-compact-tiles-2026-11-27.json: 256 x 16 gave wrong output on the H100 (Dawn/Vulkan, driver 580) from 2^12 up while 64 x 4 and 256 x 4 were exact; one round a tile until that is understood; LEDGER.md compact.tiles',
};
