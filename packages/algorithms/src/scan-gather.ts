/**
 * Blocked scan for gather-only devices (WebGL2 fragment passes): few passes, each
 * invocation looping over a block of consecutive elements.
 *
 * Level 0 cuts the input into blocks of `block` elements. A reduce pass writes one
 * sum per block (invocation b loops over block b); the block sums are scanned
 * (exclusive) by the same procedure, recursively, until one block remains; a
 * final pass gives element i its block's carry plus the serial sum of its block's
 * elements up to i (or up to i - 1 for an exclusive scan). Every kernel writes
 * only element `globalIndex` of its outputs (the gather class), so the pass count
 * is 2 · ceil(log_block n) - 1 instead of Hillis–Steele's log2 n, and the work is
 * about n (reduce) + n (block + 1) / 2 (final) element reads instead of 2 n log2 n.
 *
 * `mode: 'flags'` reads the input as flags (non-zero → 1) at level 0, so that
 * compaction and partitioning scan their predicates without a predicate pass.
 */
import { type Buffer, buffer, type Device, defineKernel, select, uniform, type Val } from '@trident/core';
import { cachedKernel, gatherSize, scratch } from './common.ts';

type Num = 'u32' | 'i32' | 'f32';

/** How level-0 elements are read: as they are, or as 0/1 flags (u32 only). */
export type GatherScanInput = 'values' | 'flags';

/**
 * Block length by the cost of one pass (`caps.dispatchCostMicros`), first match.
 * The final pass reads (block + 1) / 2 elements per output on average, so a longer
 * block buys fewer passes with more reads. Measured in headless Chromium on
 * SwiftShader WebGL2 (2 shared cores, 2^20 u32, inclusive, GPU timer, medians of
 * 5; one run per block length, two rounds): block 4: 92 / 168 / 125 ms, 8: 190 /
 * 123 / 104, 16: 135 / 135 / 181, 32: 174 — 4 to 16 within the noise of a loaded
 * machine, 32 slower. A cost model from single-kernel timings in the same page
 * (about 17 ms per 2^20 fragments and 10 ms per 2^20 reads) puts 4 and 8 within 10%.
 * Devices with cheap passes (hardware GPUs) were not measured: they use the same row.
 */
export const GATHER_SCAN_TUNING: ReadonlyArray<{ readonly minDispatchCostMicros: number; readonly block: number }> = [
  { minDispatchCostMicros: 0, block: 8 },
];

/** The block length for `device` (the first tuning row its pass cost reaches). */
export function gatherScanBlock(device: Device): number {
  const cost = device.caps.dispatchCostMicros;
  return (GATHER_SCAN_TUNING.find((r) => cost >= r.minDispatchCostMicros) ?? { block: 8 }).block;
}

/** The value kernels see at index j: the element, or its flag. */
function element(src: { load(i: Val<'u32'>): Val<Num> }, j: Val<'u32'>, input: GatherScanInput): Val<Num> {
  const x = src.load(j);
  return input === 'values' ? x : select((x as Val<'u32'>).ne(0), 1, 0, 'u32');
}

/** sums[b] = x[b·block] + … + x[b·block + block - 1] (elements past n read as 0). */
function blockSumKernel(dtype: Num, block: number, input: GatherScanInput, wg: number) {
  return cachedKernel(`scan-gather-sum:${dtype}:${block}:${input}:${wg}`, () =>
    defineKernel({
      name: `scan_block_sums_${dtype}${input === 'flags' ? '_flags' : ''}`,
      workgroupSize: wg,
      params: { src: buffer(dtype, 'read'), sums: buffer(dtype, 'write'), m: uniform('u32') },
      body: ({ src, sums, m }, k) => {
        const b = k.let(k.globalIndex, 'b');
        k.if(b.lt(m), () => {
          const first = k.let(b.mul(block), 'first');
          const acc = k.var(dtype as Num, 0, 'acc');
          // A constant trip count: the loop is the same for every fragment (loads past n give 0).
          k.for({ from: 0, to: block }, (j) => acc.set(acc.add(element(src as never, first.add(j), input) as never)));
          sums.store(b, acc as never);
        });
      },
    }),
  );
}

/**
 * dst[i] = carries[i / block] + x[block start] + … + x[i] (inclusive; up to x[i - 1]
 * when exclusive). `useCarries` = 0: a single block, no carry.
 */
function blockScanKernel(dtype: Num, block: number, input: GatherScanInput, exclusive: boolean, wg: number) {
  return cachedKernel(`scan-gather-final:${dtype}:${block}:${input}:${exclusive}:${wg}`, () =>
    defineKernel({
      name: `scan_blocks_${dtype}${input === 'flags' ? '_flags' : ''}${exclusive ? '_excl' : ''}`,
      workgroupSize: wg,
      params: {
        src: buffer(dtype, 'read'),
        carries: buffer(dtype, 'read'),
        dst: buffer(dtype, 'write'),
        n: uniform('u32'),
        useCarries: uniform('u32'),
      },
      body: ({ src, carries, dst, n, useCarries }, k) => {
        const i = k.let(k.globalIndex, 'i');
        k.if(i.lt(n), () => {
          const b = k.let(i.div(block), 'b');
          const acc = k.var(dtype as Num, 0, 'acc');
          k.if(useCarries.ne(0), () => acc.set(carries.load(b) as Val<Num>));
          const end = exclusive ? i : i.add(1);
          k.for({ from: b.mul(block), to: end }, (j) => acc.set(acc.add(element(src as never, j, input) as never)));
          dst.store(i, acc as never);
        });
      },
    }),
  );
}

/** Records sums[b] = the sum of block b (`block` elements, flags as 0/1 in 'flags' mode) for the first n elements. */
export function recordBlockSums(device: Device, src: Buffer, sums: Buffer, n: number, block: number, input: GatherScanInput): void {
  const dtype = (input === 'flags' ? 'u32' : src.dtype) as Num;
  const m = Math.ceil(n / block);
  device.dispatch(blockSumKernel(dtype, block, input, gatherSize(device.caps)), { invocations: m }, { src, sums, m });
}

/**
 * Records the blocked scan of the first `n` elements of `src` into `dst`
 * (different buffers; either may be longer). Temporaries come from the pool,
 * one pair per level (`role` keeps callers that nest scans apart).
 */
export function recordGatherBlockScan(
  device: Device,
  src: Buffer,
  dst: Buffer,
  n: number,
  exclusive: boolean,
  input: GatherScanInput = 'values',
  role = 'scan.g',
  level = 0,
): void {
  if (n === 0) return;
  const dtype = (input === 'flags' ? 'u32' : src.dtype) as Num;
  const block = gatherScanBlock(device);
  const wg = gatherSize(device.caps);
  const m = Math.ceil(n / block);
  let carries: Buffer;
  if (m > 1) {
    const sums = scratch(device, `${role}.sums${level}`, dtype, m);
    carries = scratch(device, `${role}.carries${level}`, dtype, m);
    device.dispatch(blockSumKernel(dtype, block, input, wg), { invocations: m }, { src, sums, m });
    recordGatherBlockScan(device, sums, carries, m, true, 'values', role, level + 1);
  } else {
    carries = scratch(device, `${role}.nocarry`, dtype, 1);
  }
  device.dispatch(
    blockScanKernel(dtype, block, input, exclusive, wg),
    { invocations: n },
    {
      src,
      carries,
      dst,
      n,
      useCarries: m > 1 ? 1 : 0,
    },
  );
}

/**
 * The longest chain of f32 additions behind one output (an upper bound): per
 * level, up to `block` serial adds inside a block sum and as many in the final
 * loop, plus the carry's add.
 */
export function gatherScanSumDepth(device: Device, n: number): number {
  const block = gatherScanBlock(device);
  let depth = 1;
  for (let m = n; m > 1; m = Math.ceil(m / block)) depth += 2 * block + 1;
  return depth;
}
