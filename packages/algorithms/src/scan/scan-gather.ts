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
 * Where both buffers hold whole texels (length a multiple of 4), the kernels read
 * and write vec4s: blocks of 16 elements (four texels), one invocation per output
 * texel in the final pass, which reads at most four texels instead of four
 * invocations each re-reading its block's earlier elements one at a time.
 *
 * `mode: 'flags'` reads the input as flags (non-zero → 1) at level 0, so that
 * compaction and partitioning scan their predicates without a predicate pass.
 */
import { type Buffer, buffer, type Device, defineKernel, select, uniform, type Val, vec } from '@trident/core';
import { cachedKernel, gatherSize, scratch } from '../common.ts';
import { tuned } from '../device-class.ts';
import { GATHER_SCAN_BLOCK } from './tuning.ts';

type Num = 'u32' | 'i32' | 'f32';

/** How level-0 elements are read: as they are, or as 0/1 flags (u32 only). */
export type GatherScanInput = 'values' | 'flags';

/** The block length for `device` (the first tuning row its pass cost reaches). */
export function gatherScanBlock(device: Device): number {
  return tuned(GATHER_SCAN_BLOCK, device.caps);
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

/** Elements per block where both buffers are read and written as vec4s (four texels). */
const VECTOR_BLOCK = 16;

type Vec4Loader = { load(i: Val<'u32'>): Val<'vec4<u32>' | 'vec4<i32>' | 'vec4<f32>'> };

/** The four values kernels see in texel v: the elements, or their flags. */
function texelElements(v: Val<'vec4<u32>' | 'vec4<i32>' | 'vec4<f32>'>, input: GatherScanInput): Array<Val<Num>> {
  const parts = [v.x, v.y, v.z, v.w] as Array<Val<Num>>;
  return input === 'values' ? parts : parts.map((x) => select((x as Val<'u32'>).ne(0), 1, 0, 'u32'));
}

/** sums[b] = the elements of texels b·t … b·t + t - 1 of `src` (a vec4 view; texels past its end read as 0). */
function vectorBlockSumKernel(dtype: Num, texelsPerBlock: number, input: GatherScanInput, wg: number) {
  return cachedKernel(`scan-gather-sum4:${dtype}:${texelsPerBlock}:${input}:${wg}`, () =>
    defineKernel({
      name: `scan_block_sums4_${dtype}${input === 'flags' ? '_flags' : ''}`,
      workgroupSize: wg,
      params: { src: buffer(dtype, 'read', { vector: 4 }), sums: buffer(dtype, 'write'), m: uniform('u32') },
      body: ({ src, sums, m }, k) => {
        const b = k.let(k.globalIndex, 'b');
        k.if(b.lt(m), () => {
          const acc = k.var(dtype as Num, 0, 'acc');
          for (let q = 0; q < texelsPerBlock; q++) {
            const v = k.let((src as unknown as Vec4Loader).load(b.mul(texelsPerBlock).add(q)), `v${q}`);
            for (const x of texelElements(v, input)) acc.set(acc.add(x as never));
          }
          sums.store(b, acc as never);
        });
      },
    }),
  );
}

/**
 * dst texel f = the scan of elements 4f … 4f + 3 within their block of 16, plus
 * the block's carry: one invocation per texel (vec4 views of `src` and `dst`), which
 * reads the earlier texels of its block (at most three) and its own.
 */
function vectorBlockScanKernel(dtype: Num, input: GatherScanInput, exclusive: boolean, wg: number) {
  return cachedKernel(`scan-gather-final4:${dtype}:${input}:${exclusive}:${wg}`, () =>
    defineKernel({
      name: `scan_blocks4_${dtype}${input === 'flags' ? '_flags' : ''}${exclusive ? '_excl' : ''}`,
      workgroupSize: wg,
      params: {
        src: buffer(dtype, 'read', { vector: 4 }),
        carries: buffer(dtype, 'read'),
        dst: buffer(dtype, 'write', { vector: 4 }),
        texels: uniform('u32'),
        useCarries: uniform('u32'),
      },
      body: ({ src, carries, dst, texels, useCarries }, k) => {
        const f = k.let(k.globalIndex, 'f');
        k.if(f.lt(texels), () => {
          const b = k.let(f.shr(2), 'b');
          const acc = k.var(dtype as Num, 0, 'acc');
          k.if(useCarries.ne(0), () => acc.set(carries.load(b) as Val<Num>));
          k.for({ from: b.mul(VECTOR_BLOCK / 4), to: f }, (q) => {
            for (const x of texelElements((src as unknown as Vec4Loader).load(q), input)) acc.set(acc.add(x as never));
          });
          const own = texelElements(k.let((src as unknown as Vec4Loader).load(f), 'own'), input);
          const out: Array<Val<Num>> = [];
          for (const x of own) {
            if (exclusive) out.push(k.let(acc as Val<Num>, 'o'));
            acc.set(acc.add(x as never));
            if (!exclusive) out.push(k.let(acc as Val<Num>, 'o'));
          }
          (dst as unknown as { store(i: Val<'u32'>, v: Val<ValueOf4>): void }).store(
            f,
            vec(dtype, out[0] as never, out[1] as never, out[2] as never, out[3] as never) as Val<ValueOf4>,
          );
        });
      },
    }),
  );
}

type ValueOf4 = 'vec4<u32>' | 'vec4<i32>' | 'vec4<f32>';

/** Records sums[b] = the sum of block b (`block` elements, flags as 0/1 in 'flags' mode) for the first n elements. */
export function recordBlockSums(device: Device, src: Buffer, sums: Buffer, n: number, block: number, input: GatherScanInput): void {
  const dtype = (input === 'flags' ? 'u32' : src.dtype) as Num;
  const m = Math.ceil(n / block);
  const wg = gatherSize(device.caps);
  // Whole texels: one vec4 load per four elements (the same elements the scalar kernel reads).
  if (block % 4 === 0 && src.length % 4 === 0) {
    device.dispatch(vectorBlockSumKernel(dtype, block / 4, input, wg), { invocations: m }, { src, sums, m });
  } else {
    device.dispatch(blockSumKernel(dtype, block, input, wg), { invocations: m }, { src, sums, m });
  }
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
  // vec4 views need whole texels in both buffers; the last texel's outputs past n may then be written.
  const vector = src.length % 4 === 0 && dst.length % 4 === 0;
  const block = vector ? VECTOR_BLOCK : gatherScanBlock(device);
  const wg = gatherSize(device.caps);
  const m = Math.ceil(n / block);
  let carries: Buffer;
  if (m > 1) {
    const sums = scratch(device, `${role}.sums${level}`, dtype, m);
    carries = scratch(device, `${role}.carries${level}`, dtype, m);
    if (vector) device.dispatch(vectorBlockSumKernel(dtype, VECTOR_BLOCK / 4, input, wg), { invocations: m }, { src, sums, m });
    else device.dispatch(blockSumKernel(dtype, block, input, wg), { invocations: m }, { src, sums, m });
    recordGatherBlockScan(device, sums, carries, m, true, 'values', role, level + 1);
  } else {
    carries = scratch(device, `${role}.nocarry`, dtype, 1);
  }
  if (vector) {
    const texels = Math.ceil(n / 4);
    device.dispatch(vectorBlockScanKernel(dtype, input, exclusive, wg), { invocations: texels }, {
      src,
      carries,
      dst,
      texels,
      useCarries: m > 1 ? 1 : 0,
    } as never);
    return;
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
  // A bound for either block length (vec4 buffers or not): the levels of the shorter, each costing as much as the longer's.
  const short = Math.min(gatherScanBlock(device), VECTOR_BLOCK);
  const long = Math.max(gatherScanBlock(device), VECTOR_BLOCK);
  let depth = 1;
  for (let m = n; m > 1; m = Math.ceil(m / short)) depth += 2 * long + 1;
  return depth;
}
