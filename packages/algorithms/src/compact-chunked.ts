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
import { type Buffer, type BufferDType, buffer, type Device, defineKernel, min, select, uniform } from '@trident/core';
import { cachedKernel, scratch } from './common.ts';
import { chunkPlan } from './reduce.ts';

/** counts[c] = how many flags of chunk c are non-zero (one invocation per chunk). */
function countKernel() {
  return cachedKernel('compact-chunk:count', () =>
    defineKernel({
      name: 'compact_chunk_count',
      workgroupSize: 1,
      params: { flags: buffer('u32', 'read'), counts: buffer('u32', 'write'), n: uniform('u32'), chunk: uniform('u32') },
      body: ({ flags, counts, n, chunk }, k) => {
        const c = k.let(k.globalIndex, 'c');
        const start = k.let(c.mul(chunk), 'start');
        const kept = k.var('u32', 0, 'kept');
        k.for({ from: start, to: min(n, start.add(chunk)) }, (i) => kept.set(kept.add(select(flags.load(i).ne(0), 1, 0, 'u32'))));
        counts.store(c, kept);
      },
    }),
  );
}

/** Chunk c writes its kept elements, in order, from offsets[c] on (one invocation per chunk). */
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
        const start = k.let(c.mul(chunk), 'start');
        k.for({ from: start, to: min(n, start.add(chunk)) }, (i) => {
          k.if(flags.load(i).ne(0), () => {
            out.store(at, input.load(i));
            at.set(at.add(1));
          });
        });
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
  const plan = chunks === undefined ? chunkPlan(device, n) : { chunks, chunk: Math.ceil(n / chunks) };
  // Pooled: the read below is recorded right after the count pass, so it sees this call's counts
  // even if another call records its own count pass into the same buffer meanwhile.
  const counts = scratch(device, 'compact.chunkCounts', 'u32', plan.chunks);
  device.dispatch(countKernel(), { invocations: plan.chunks }, { flags, counts, n, chunk: plan.chunk });
  const kept = await counts.read({ offset: 0, length: plan.chunks });
  // The tiny scan of the chunk counts, on the host (the total sizes the output).
  const offsets = new Uint32Array(plan.chunks);
  let count = 0;
  for (let c = 0; c < plan.chunks; c++) {
    offsets[c] = count;
    count += kept[c] as number;
  }
  const output = device.createBuffer(input.dtype, count);
  if (count > 0) {
    // Written and used in the same synchronous stretch: no other call's commands come between.
    const at = scratch(device, 'compact.chunkOffsets', 'u32', plan.chunks);
    at.write(offsets);
    device.dispatch(
      writeKernel(input.dtype),
      { invocations: plan.chunks },
      { input, flags, offsets: at, out: output, n, chunk: plan.chunk },
    );
  }
  return { count, output };
}
