/**
 * Compaction for devices with 'serial-workgroups' (a CPU's few, fat, serial
 * workgroups): the input split into one contiguous chunk per worker (reduce's
 * chunk plan). Pass 1 counts each chunk's non-zero flags; the host reads the
 * counts (it needs their total to size the output anyway); pass 2 gives each chunk
 * its offset (the earlier chunks' counts, added in order: a scan of a few numbers)
 * and walks the chunk in order, writing each kept element at the next slot. Two
 * dispatches, one readback of `chunks` numbers; the flags are read twice, the
 * input once, and only the kept elements are written: no temporaries of n.
 */
import { type Buffer, type BufferDType, buffer, type Device, defineKernel, min, select, uniform } from '@trident/core';
import { cachedKernel } from './common.ts';
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

/** Chunk c writes its kept elements, in order, from the sum of counts[0..c) on (one invocation per chunk). */
function writeKernel(dtype: BufferDType) {
  return cachedKernel(`compact-chunk:write:${dtype}`, () =>
    defineKernel({
      name: `compact_chunk_write_${dtype}`,
      workgroupSize: 1,
      params: {
        input: buffer(dtype, 'read'),
        flags: buffer('u32', 'read'),
        counts: buffer('u32', 'read'),
        out: buffer(dtype, 'write'),
        n: uniform('u32'),
        chunk: uniform('u32'),
      },
      body: ({ input, flags, counts, out, n, chunk }, k) => {
        const c = k.let(k.globalIndex, 'c');
        const at = k.var('u32', 0, 'at');
        k.for({ from: 0, to: c }, (j) => at.set(at.add(counts.load(j))));
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
  // Fresh: it is read by pass 2 after an await, when a pooled buffer could have been taken meanwhile.
  const counts = device.createBuffer('u32', plan.chunks);
  try {
    device.dispatch(countKernel(), { invocations: plan.chunks }, { flags, counts, n, chunk: plan.chunk });
    let count = 0;
    for (const kept of await counts.read()) count += kept;
    const output = device.createBuffer(input.dtype, count);
    if (count > 0) {
      device.dispatch(writeKernel(input.dtype), { invocations: plan.chunks }, { input, flags, counts, out: output, n, chunk: plan.chunk });
    }
    return { count, output };
  } finally {
    void device
      .flush()
      .catch(() => undefined)
      .finally(() => counts.destroy());
  }
}
