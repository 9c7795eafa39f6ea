/**
 * Merge sort (Dulle 2016, PRAM algorithms on GPGPUs; [Mei15 2.5]): log2(n) merge steps over runs of length k
 * (1, 2, 4, …). In each step every element computes its own target index:
 * its position in its run plus its RANK in the partner run, found by binary
 * search. The tie-break flag avoids collisions between equal keys: an element of
 * the left run counts partner elements strictly smaller (b = 0), an element of the
 * right run those smaller or equal (b = 1) — which also makes the sort stable.
 *
 * Keys become u32 order keys paired with their original index (values are fetched
 * by index at the end), exactly as in bitonic-sort.ts.
 */
import { type Buffer, type BufferDType, buffer, type Device, defineKernel, select, uniform, type Val } from '@trident/core';
import { cachedKernel, gatherSize, scratch } from '../../common.ts';
import { chooseFamily } from '../../plan.ts';
import { finishSort, initKernel } from '../bitonic/bitonic-sort.ts';
import { prepareSort, type SortKeyType, type SortOptions, type SortResult, validateSort } from '../sort-args.ts';
import { gatherMergeLength, recordMergePathSort } from './merge-path.ts';

/** One merge step of runs of length `run`: scatter to own offset + rank in the partner run. */
function mergeStepKernel(wg: number) {
  return cachedKernel(`merge-step:${wg}`, () =>
    defineKernel({
      name: 'merge_step',
      workgroupSize: wg,
      params: {
        keys: buffer('u32', 'read'),
        idx: buffer('u32', 'read'),
        keysOut: buffer('u32', 'write'),
        idxOut: buffer('u32', 'write'),
        n: uniform('u32'),
        run: uniform('u32'),
      },
      body: ({ keys, idx, keysOut, idxOut, n, run }, k) => {
        const p = k.let(k.globalIndex, 'p');
        k.if(p.lt(n), () => {
          const y0 = k.let(p.div(run.mul(2)).mul(run.mul(2)), 'y0');
          const y1 = k.let(select(y0.add(run).lt(n), y0.add(run), n), 'y1');
          const y2 = k.let(select(y1.add(run).lt(n), y1.add(run), n), 'y2');
          const key = k.let(keys.load(p), 'key');
          const left = k.let(p.lt(y1), 'left');
          // Search the partner run: [y1, y2) for left elements, [y0, y1) for right ones.
          const lo = k.let(select(left, y1, y0), 'lo');
          const hi = k.let(select(left, y2, y1), 'hi');
          const start = k.let(lo, 'start');
          k.while(
            () => lo.lt(hi),
            () => {
              const mid = k.let(lo.add(hi.sub(lo).shr(1)), 'mid');
              const m = keys.load(mid);
              // RANK with the tie-break flag: b = 0 (strictly smaller) left, b = 1 (<=) right.
              const before = select(left, m.lt(key), m.le(key)) as Val<'bool'>;
              k.if(
                before,
                () => lo.set(mid.add(1)),
                () => hi.set(mid),
              );
            },
          );
          const rank = lo.sub(start);
          const target = k.let(select(left, p.add(rank), p.sub(run).add(rank)), 'target');
          keysOut.store(target, key);
          idxOut.store(target, idx.load(p));
        });
      },
    }),
  );
}

/**
 * Stable merge sort of `keys` (u32 / i32 / f32) with optional `values`; same
 * order and results as `radixSort`. Runs on every device with 'gather':
 * workgroup devices scatter each element to its rank in the partner run, gather
 * devices merge by merge path, four outputs a fragment (merge-path.ts).
 *
 * Complexity: ceil(log2 n) merge steps of n binary searches each: O(n log² n)
 * work, O(log² n) span. Edge cases: n = 0 returns empty buffers. Throws like
 * `radixSort`.
 */
export function mergeSort<K extends SortKeyType, V extends BufferDType = BufferDType>(
  device: Device,
  keys: Buffer<K>,
  options?: SortOptions<V>,
): SortResult<K, V> {
  validateSort(device, keys, options);
  // Workgroup devices scatter each element to its rank; gather devices (where a
  // scatter is a point per element) and software GPUs merge by merge path, which
  // needs no scatter.
  const gatherMerge = chooseFamily(device, 'mergeSort') === 'gather';
  const { keysOut, valuesOut, values } = prepareSort(device, keys, options, gatherMerge ? gatherMergeLength(keys.length) : keys.length);
  const n = keys.length;
  const result = valuesOut ? { keys: keysOut, values: valuesOut } : { keys: keysOut };
  if (n === 0) return result;
  if (gatherMerge) {
    recordMergePathSort(device, keys, values, { keys: keysOut, values: valuesOut });
    return result;
  }
  const wg = gatherSize(device.caps);
  let k0 = scratch(device, 'merge.k0', 'u32', n);
  let i0 = scratch(device, 'merge.i0', 'u32', n);
  let k1 = scratch(device, 'merge.k1', 'u32', n);
  let i1 = scratch(device, 'merge.i1', 'u32', n);
  device.dispatch(initKernel(keys.dtype as SortKeyType, wg), { invocations: n }, { input: keys, keys: k0, idx: i0, n, size: n });
  for (let run = 1; run < n; run *= 2) {
    device.dispatch(mergeStepKernel(wg), { invocations: n }, { keys: k0, idx: i0, keysOut: k1, idxOut: i1, n, run });
    [k0, k1] = [k1, k0];
    [i0, i1] = [i1, i0];
  }
  finishSort(device, { keys: k0, idx: i0 }, { keys, values }, { keys: keysOut, values: valuesOut }, n, wg);
  return result;
}
