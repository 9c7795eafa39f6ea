/**
 * Compaction for devices with 'serial-workgroups' (a CPU's few, fat, serial
 * workgroups): the input split into one contiguous chunk per worker (reduce's
 * chunk plan). Pass 1 counts each chunk's non-zero flags; the host reads the
 * counts (it needs their total to size the output anyway) and scans them into the
 * chunks' offsets (a few numbers); pass 2 walks each chunk in order, writing each
 * kept element at the next slot from the chunk's offset. Two dispatches, one
 * readback of `chunks` numbers; the flags are read twice, the input once, and only
 * the kept elements are written: no temporaries of n.
 */
import {
  type Buffer,
  type BufferDType,
  buffer,
  type Device,
  defineKernel,
  type KernelBuilder,
  min,
  u32,
  uniform,
  type Val,
  vec,
} from '@trident/core';
import { cachedKernel, scratch } from '../common.ts';
import { chunkPlan } from '../reduce/reduce.ts';

/**
 * 1 where x != 0, else 0, without a branch: (x | -x) has its top bit set exactly
 * when x is non-zero. Kept flags are data-dependent (a random half in the
 * benchmark), so a branch mispredicts about half the time (LEDGER.md
 * compact.branchFree).
 */
function nonZero(k: KernelBuilder, x: Val<'u32'>): Val<'u32'> {
  const f = k.let(x, 'f');
  return f.or(u32(0).sub(f)).shr(31);
}

/**
 * counts[c] = how many flags of chunk c are non-zero (one invocation per chunk). Width 4:
 * n and chunk count vec4s of the flags, each lane counted in its own lane of the sum.
 */
function countKernel(width: 1 | 4) {
  return cachedKernel(`compact-chunk:count:${width}`, () =>
    defineKernel({
      name: `compact_chunk_count${width === 4 ? '_v4' : ''}`,
      workgroupSize: 1,
      params: { flags: buffer('u32', 'read', { vector: width }), counts: buffer('u32', 'write'), n: uniform('u32'), chunk: uniform('u32') },
      body: ({ flags, counts, n, chunk }, k) => {
        const c = k.let(k.globalIndex, 'c');
        const start = k.let(c.mul(chunk), 'start');
        const end = min(n, start.add(chunk));
        if (width === 1) {
          const kept = k.var('u32', 0, 'kept');
          k.for({ from: start, to: end }, (i) => kept.set(kept.add(nonZero(k, flags.load(i) as Val<'u32'>))));
          counts.store(c, kept);
          return;
        }
        const kept = k.var('vec4<u32>', vec('u32', 0, 0, 0, 0), 'kept');
        k.for({ from: start, to: end }, (i) => {
          const f = k.let(flags.load(i) as unknown as Val<'vec4<u32>'>, 'f');
          // min(f, 1): 1 where the flag is non-zero, one vector instruction a lane.
          kept.set(kept.add(min(f, vec('u32', 1, 1, 1, 1))));
        });
        counts.store(c, kept.x.add(kept.y).add(kept.z.add(kept.w)));
      },
    }),
  );
}

/**
 * Chunk c writes its kept elements, in order, into [offsets[c], offsets[c + 1]) (one
 * invocation per chunk). Branch-free: every element is stored at the next slot and
 * the slot advances only past kept ones, so a dropped element is overwritten by the
 * next kept one; the walk stops once the chunk's last kept element is placed, so
 * no store lands in the next chunk's range.
 */
function writeKernel(dtype: BufferDType) {
  return cachedKernel(`compact-chunk:write:${dtype}`, () =>
    defineKernel({
      name: `compact_chunk_write_${dtype}`,
      workgroupSize: 1,
      params: {
        input: buffer(dtype, 'read'),
        flags: buffer('u32', 'read'),
        offsets: buffer('u32', 'read'),
        out: buffer(dtype, 'write'),
        n: uniform('u32'),
        chunk: uniform('u32'),
      },
      body: ({ input, flags, offsets, out, n, chunk }, k) => {
        const c = k.let(k.globalIndex, 'c');
        const at = k.var('u32', offsets.load(c), 'at');
        const last = k.let(offsets.load(c.add(1)), 'last');
        const end = k.let(min(n, c.mul(chunk).add(chunk)), 'end');
        const i = k.var('u32', c.mul(chunk), 'i');
        k.while(
          () => at.lt(last).and(i.lt(end)),
          () => {
            out.store(at, input.load(i));
            at.set(at.add(nonZero(k, flags.load(i))));
            i.set(i.add(1));
          },
        );
      },
    }),
  );
}

/**
 * The chunked compaction of `input` (n >= 1 elements) by `flags`: resolves to the
 * count and a new buffer of exactly the kept elements, in input order. `chunks`
 * defaults to reduce's chunk plan; tests pass others to pin chunk boundaries.
 * Exported for the tests; `compact` is the public entry.
 */
export async function compactChunked<D extends BufferDType>(
  device: Device,
  input: Buffer<D>,
  flags: Buffer<'u32'>,
  chunks?: number,
): Promise<{ count: number; output: Buffer<D> }> {
  const n = input.length;
  // vec4 counts where the chunks hold whole vec4s (chunkPlan's width: n divides by 4, 'simd').
  const plan = chunks === undefined ? chunkPlan(device, n) : { chunks, chunk: Math.ceil(n / chunks), width: 1 as const };
  // Pooled: the read below is recorded right after the count pass, so it sees this call's counts
  // even if another call records its own count pass into the same buffer meanwhile.
  const counts = scratch(device, 'compact.chunkCounts', 'u32', plan.chunks);
  const w = plan.width;
  device.dispatch(countKernel(w), { invocations: plan.chunks }, { flags, counts, n: n / w, chunk: plan.chunk / w });
  const kept = await counts.read({ offset: 0, length: plan.chunks });
  // The tiny scan of the chunk counts, on the host (the total sizes the output): chunk c owns [offsets[c], offsets[c + 1]).
  const offsets = new Uint32Array(plan.chunks + 1);
  let count = 0;
  for (let c = 0; c < plan.chunks; c++) {
    offsets[c] = count;
    count += kept[c] as number;
  }
  offsets[plan.chunks] = count;
  const output = device.createBuffer(input.dtype, count);
  if (count > 0) {
    // Written and used in the same synchronous stretch: no other call's commands come between.
    const at = scratch(device, 'compact.chunkOffsets', 'u32', plan.chunks + 1);
    at.write(offsets);
    device.dispatch(
      writeKernel(input.dtype),
      { invocations: plan.chunks },
      { input, flags, offsets: at, out: output, n, chunk: plan.chunk },
    );
  }
  return { count, output };
}
