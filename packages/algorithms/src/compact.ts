/**
 * compact / filter (seed 000's list method): keep the elements whose flag is
 * non-zero, in their original order. Predicate -> exclusive scan -> scatter.
 *
 * Workgroup devices scatter each kept element to its scanned position. Gather
 * devices invert the map instead: output j takes the element i whose inclusive
 * count first exceeds j, found by binary search (O(log n) reads per output, and
 * every kernel writes only its own element).
 */
import { type Buffer, type BufferDType, buffer, type Device, defineKernel, InvalidArgumentError, select, uniform } from '@trident/core';
import { cachedKernel, checkBuffer, familyOf, gatherSize } from './common.ts';
import { recordScan } from './scan.ts';
import { recordGatherBlockScan } from './scan-gather.ts';

const DTYPES: readonly BufferDType[] = ['u32', 'i32', 'f32'];

/** pred[i] = flags[i] != 0 ? 1 : 0. */
function predicateKernel(wg: number) {
  return cachedKernel(`compact-pred:${wg}`, () =>
    defineKernel({
      name: 'compact_predicate',
      workgroupSize: wg,
      params: { flags: buffer('u32', 'read'), pred: buffer('u32', 'write'), n: uniform('u32') },
      body: ({ flags, pred, n }, k) => {
        const i = k.let(k.globalIndex, 'i');
        k.if(i.lt(n), () => pred.store(i, select(flags.load(i).ne(0), k.var('u32', 1), k.var('u32', 0))));
      },
    }),
  );
}

/** out[pos[i]] = input[i] where flags[i] != 0. */
function scatterKernel(dtype: BufferDType, wg: number) {
  return cachedKernel(`compact-scatter:${dtype}:${wg}`, () =>
    defineKernel({
      name: `compact_scatter_${dtype}`,
      workgroupSize: wg,
      params: {
        input: buffer(dtype, 'read'),
        flags: buffer('u32', 'read'),
        pos: buffer('u32', 'read'),
        out: buffer(dtype, 'write'),
        n: uniform('u32'),
      },
      body: ({ input, flags, pos, out, n }, k) => {
        const i = k.let(k.globalIndex, 'i');
        k.if(i.lt(n).and(flags.load(i).ne(0)), () => out.store(pos.load(i), input.load(i)));
      },
    }),
  );
}

/** out[j] = input[first i with incl[i] > j], for j < count (gather). */
function gatherKernel(dtype: BufferDType, wg: number) {
  return cachedKernel(`compact-gather:${dtype}:${wg}`, () =>
    defineKernel({
      name: `compact_gather_${dtype}`,
      workgroupSize: wg,
      params: {
        input: buffer(dtype, 'read'),
        incl: buffer('u32', 'read'),
        out: buffer(dtype, 'write'),
        n: uniform('u32'),
        count: uniform('u32'),
      },
      body: ({ input, incl, out, n, count }, k) => {
        const j = k.let(k.globalIndex, 'j');
        k.if(j.lt(count), () => {
          // Lower bound over [lo, hi): the first i with incl[i] >= j + 1.
          const lo = k.var('u32', 0, 'lo');
          const hi = k.let(n, 'hi');
          k.while(
            () => lo.lt(hi),
            () => {
              const mid = k.let(lo.add(hi.sub(lo).shr(1)), 'mid');
              k.if(
                incl.load(mid).gt(j),
                () => hi.set(mid),
                () => lo.set(mid.add(1)),
              );
            },
          );
          out.store(j, input.load(lo));
        });
      },
    }),
  );
}

export interface CompactResult<D extends BufferDType> {
  /** Number of kept elements. */
  readonly count: number;
  /** A new buffer of exactly `count` elements, the kept elements in input order. */
  readonly output: Buffer<D>;
}

/**
 * Keeps the elements of `input` whose entry in `flags` (u32, same length) is
 * non-zero, preserving their order, and resolves to the count and a new buffer of
 * exactly that length (empty when nothing is kept or the input is empty). Values
 * are moved as they are (f32 -0 and NaNs included; a signalling NaN may come back
 * quieted, as with zcopy).
 *
 * Complexity: O(n) work on workgroup devices (predicate, scan, scatter: about 5
 * element moves each); on gather devices O(n) for the blocked scan of the flags
 * plus O(count log n) for the searches. One small
 * readback for the count. Throws InvalidArgumentError for bad buffers, a flags
 * dtype other than u32, or a length mismatch; the inputs are never modified.
 */
export async function compact<D extends BufferDType>(device: Device, input: Buffer<D>, flags: Buffer<'u32'>): Promise<CompactResult<D>> {
  checkBuffer(device, input, 'input', DTYPES);
  checkBuffer(device, flags, 'flags', ['u32']);
  if (flags.length !== input.length)
    throw new InvalidArgumentError('flags', `length ${flags.length} differs from the input length ${input.length}`);
  const family = familyOf(device, 'compact');
  const n = input.length;
  if (n === 0) return { count: 0, output: device.createBuffer(input.dtype, 0) };
  const wg = gatherSize(device.caps);
  // Fresh temporaries: they are used after an await, when pooled ones could have
  // been taken by another call meanwhile.
  const pred = family === 'workgroup' ? device.createBuffer('u32', n) : undefined;
  const pos = device.createBuffer('u32', n);
  const release = () => {
    void device
      .flush()
      .catch(() => undefined)
      .finally(() => {
        pred?.destroy();
        pos.destroy();
      });
  };
  if (pred) {
    device.dispatch(predicateKernel(wg), { invocations: n }, { flags, pred, n });
    recordScan(device, pred, pos, n, true);
  } else {
    // Gather devices scan the flags as 0/1 directly (no predicate pass), inclusive.
    recordGatherBlockScan(device, flags, pos, n, false, 'flags', 'compact.scan');
  }
  const [last, lastFlag] = await Promise.all([pos.read({ offset: n - 1, length: 1 }), flags.read({ offset: n - 1, length: 1 })]);
  const count = family === 'workgroup' ? (last[0] as number) + (lastFlag[0] !== 0 ? 1 : 0) : (last[0] as number);
  const output = device.createBuffer(input.dtype, count);
  if (count === 0) {
    release();
    return { count, output };
  }
  if (family === 'workgroup') {
    device.dispatch(scatterKernel(input.dtype, wg), { invocations: n }, { input, flags, pos, out: output, n });
  } else {
    device.dispatch(gatherKernel(input.dtype, wg), { invocations: count }, { input, incl: pos, out: output, n, count });
  }
  release();
  return { count, output };
}
