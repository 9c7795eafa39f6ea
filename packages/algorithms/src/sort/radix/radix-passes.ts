/**
 * The four passes of the 8-bit multisplit radix sort: onesweep passes
 * (radix-onesweep.ts) where the shape asks for them and n fits their 30-bit counts,
 * else per pass a count dispatch, a scan of the (digit, tile) counts and the rank +
 * scatter dispatch of radix-multisplit.ts. Its own module so that the two pass
 * formulations, which share the multisplit kernels, do not import each other.
 */
import type { Buffer, Device } from '@trident/core';
import { bindingsOf, dispatchGroups, scratch, tiledRuns } from '../../common.ts';
import { recordScan } from '../../scan/scan.ts';
import { countKernel, MULTISPLIT_PASSES, type MultisplitShape, passTarget, scatterKernel, valueScatterKernel } from './radix-multisplit.ts';
import { ONESWEEP_MAX_N, recordOnesweepPasses } from './radix-onesweep.ts';

const BITS = 32 / MULTISPLIT_PASSES;
const DIGITS = 1 << BITS;

/** A count or scatter dispatch's uniforms: its elements, the digit's shift, and its tiles among the pass's. */
interface TileRange {
  readonly n: number;
  readonly shift: number;
  readonly tiles: number;
  readonly firstTile: number;
  readonly endTile: number;
}

/**
 * Records the 4 passes of the 8-bit multisplit sort of u32 keys `src` (and values
 * `vsrc`) into `keysOut` (and `valuesOut`): onesweep passes (radix-onesweep.ts) when
 * the shape says so and n fits their 30-bit counts, reduce-then-scan passes
 * otherwise. The intermediate passes ping-pong through scratch buffers; n >= 1.
 *
 * Past one binding, reduce-then-scan passes count and scatter one segment of their input
 * a dispatch (`segmentRuns`), the outputs bound whole. Where keys and values together still
 * span more bindings than one kernel may have, each pass scatters the keys
 * and the values in two dispatches that rank the tile alike (the ranking twice), and
 * onesweep passes, whose look-back cannot run twice, give way to reduce-then-scan ones.
 */
export function recordMultisplitPasses(
  device: Device,
  shape: MultisplitShape,
  src: Buffer,
  vsrc: Buffer | undefined,
  keysOut: Buffer,
  valuesOut: Buffer | undefined,
  n: number,
): void {
  // The pairs scatter binds both arrays of keys and of values, the scanned counts and nothing else large.
  const overBindings = (keys: Buffer, kout: Buffer, vals: Buffer | undefined, vout: Buffer | undefined): boolean =>
    vals !== undefined &&
    vout !== undefined &&
    bindingsOf(device, keys) + bindingsOf(device, kout) + bindingsOf(device, vals) + bindingsOf(device, vout) + 1 >
      device.caps.limits.maxBuffersPerKernel;
  if (shape.passes === 'onesweep' && n <= ONESWEEP_MAX_N && !overBindings(src, keysOut, vsrc, valuesOut)) {
    recordOnesweepPasses(device, shape, src, vsrc, keysOut, valuesOut, n);
    return;
  }
  const tile = shape.wg * shape.items;
  const dummy = scratch(device, 'radix8.dummy', 'u32', 1);
  const dummyOut = scratch(device, 'radix8.dummyOut', 'u32', 1);
  let keysIn = src;
  let valsIn = vsrc;
  for (let p = 0; p < MULTISPLIT_PASSES; p++) {
    const dst = passTarget(p, keysOut, () => scratch(device, 'radix8.k', 'u32', n));
    const vdst = vsrc ? passTarget(p, valuesOut as Buffer, () => scratch(device, 'radix8.v', vsrc.dtype, n)) : undefined;
    const shift = p * BITS;
    // Past one binding, the pass counts and scatters the tiles of one segment of its input at
    // a time (input views bind one binding each; the outputs, written anywhere, bind whole).
    // Tiles are cut at segment ends, so the tile count follows this pass's input (a pooled
    // temporary may be split where the caller's array is not).
    const { runs, tiles } = tiledRuns(device, valsIn ? [keysIn, valsIn] : [keysIn], n, tile);
    const counts = scratch(device, 'radix8.counts', 'u32', DIGITS * tiles);
    const offsets = scratch(device, 'radix8.offsets', 'u32', DIGITS * tiles);
    const eachRun = (record: (keys: Buffer, vals: Buffer | undefined, range: TileRange) => void) => {
      for (const { views, n: count, firstTile, tiles: runTiles } of runs)
        record(views[0] as Buffer, views[1], { n: count, shift, tiles, firstTile, endTile: firstTile + runTiles });
    };
    eachRun((keys, _vals, range) =>
      dispatchGroups(device, countKernel(shape), range.endTile - range.firstTile, { keys, counts, ...range }),
    );
    recordScan(device, counts, offsets, DIGITS * tiles, true);
    eachRun((keys, vals, range) => {
      const groups = range.endTile - range.firstTile;
      if (vals && vdst && overBindings(keys, dst, vals, vdst)) {
        // Keys first: the values' dispatch ranks the same input keys (keysIn is not dst), so it finds the same slots.
        dispatchGroups(device, scatterKernel(shape, undefined), groups, {
          keys,
          keysOut: dst,
          vals: dummy,
          valsOut: dummyOut,
          offsets,
          ...range,
        });
        dispatchGroups(device, valueScatterKernel(shape, vals.dtype), groups, { keys, vals, valsOut: vdst, offsets, ...range });
      } else {
        dispatchGroups(device, scatterKernel(shape, vsrc?.dtype), groups, {
          keys,
          keysOut: dst,
          vals: vals ?? dummy,
          valsOut: vdst ?? dummyOut,
          offsets,
          ...range,
        });
      }
    });
    keysIn = dst;
    valsIn = vdst;
  }
}
