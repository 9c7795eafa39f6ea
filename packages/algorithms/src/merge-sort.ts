/**
 * Merge sort (seed 000, [Mei15 2.5]): log2(n) merge steps over runs of length k
 * (1, 2, 4, …). In each step every element computes its own target index:
 * its position in its run plus its RANK in the partner run, found by binary
 * search. The tie-break flag avoids collisions between equal keys: an element of
 * the left run counts partner elements strictly smaller (b = 0), an element of the
 * right run those smaller or equal (b = 1) — which also makes the sort stable.
 *
 * Keys become u32 order keys paired with their original index (values are fetched
 * by index at the end), exactly as in bitonic-sort.ts.
 */
import {
  type Buffer,
  type BufferDType,
  buffer,
  type Device,
  defineKernel,
  type KernelBuilder,
  select,
  uniform,
  type Val,
  type Var,
} from '@trident/core';
import { finishSort, initKernel } from './bitonic-sort.ts';
import { cachedKernel, familyOf, gatherSize, scratch } from './common.ts';
import { prepareSort, type SortKeyType, type SortOptions, type SortResult, validateSort } from './sort-args.ts';

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

/** Outputs per diagonal sample in merge-path steps whose runs are at least this long. */
const DIAGONAL_STRIDE = 32;

/** The runs around output t: A = [y0, y1), B = [y1, y2), and t's rank r in the pair. */
function pairOf(k: KernelBuilder, t: Val<'u32'>, n: Val<'u32'>, run: Val<'u32'>) {
  const y0 = k.let(t.div(run.mul(2)).mul(run.mul(2)), 'y0');
  const y1 = k.let(select(y0.add(run).lt(n), y0.add(run), n), 'y1');
  const y2 = k.let(select(y1.add(run).lt(n), y1.add(run), n), 'y2');
  const r = k.let(t.sub(y0), 'r');
  const la = k.let(y1.sub(y0), 'la');
  const lb = k.let(y2.sub(y1), 'lb');
  // How many of the r outputs before t come from A: within [r - lb, r] and [0, la].
  const lo = k.let(select(r.gt(lb), r.sub(lb), 0), 'lo');
  const hi = k.let(select(r.lt(la), r, la), 'hi');
  return { y0, y1, y2, r, lo, hi };
}

/**
 * Binary search on the diagonal: lo becomes the first i in [lo, hi) with
 * A[i] > B[r - i - 1] (A wins ties, which keeps the merge stable), hi if none.
 */
function diagonalSearch(
  k: KernelBuilder,
  keys: { load(i: Val<'u32'>): Val<'u32'> },
  p: { y0: Val<'u32'>; y1: Val<'u32'>; r: Val<'u32'>; lo: Var<'u32'>; hi: Var<'u32'> },
): void {
  k.while(
    () => p.lo.lt(p.hi),
    () => {
      const mid = k.let(p.lo.add(p.hi.sub(p.lo).shr(1)), 'mid');
      k.if(
        keys.load(p.y0.add(mid)).le(keys.load(p.y1.add(p.r).sub(mid).sub(1))),
        () => p.lo.set(mid.add(1)),
        () => p.hi.set(mid),
      );
    },
  );
}

/** diag[s] = how many of the first r outputs of output s · DIAGONAL_STRIDE's pair come from A. */
function diagonalKernel(wg: number) {
  return cachedKernel(`merge-diag:${wg}`, () =>
    defineKernel({
      name: 'merge_path_samples',
      workgroupSize: wg,
      params: { keys: buffer('u32', 'read'), diag: buffer('u32', 'write'), n: uniform('u32'), run: uniform('u32'), slots: uniform('u32') },
      body: ({ keys, diag, n, run, slots }, k) => {
        const s = k.let(k.globalIndex, 's');
        k.if(s.lt(slots), () => {
          const p = pairOf(k, s.mul(DIAGONAL_STRIDE), n, run);
          diagonalSearch(k, keys, p);
          diag.store(s, p.lo);
        });
      },
    }),
  );
}

/**
 * One merge step of runs of length `run` as a gather (merge path): output t of a
 * pair of runs A, B finds how many of its r predecessors come from A by a binary
 * search on the diagonal, then takes the smaller of A[i] and B[r - i]. Two reads
 * per search step, no scatter. With `sampled`, the search starts from the sample
 * of t's stride (runs of at least DIAGONAL_STRIDE, so strides never straddle a
 * pair): the count from A grows by at most one per output, so it lies within
 * [diag, diag + t mod stride], about log2(stride) steps instead of log2(run).
 */
function mergePathKernel(wg: number) {
  return cachedKernel(`merge-path:${wg}`, () =>
    defineKernel({
      name: 'merge_path_step',
      workgroupSize: wg,
      params: {
        keys: buffer('u32', 'read'),
        idx: buffer('u32', 'read'),
        diag: buffer('u32', 'read'),
        keysOut: buffer('u32', 'write'),
        idxOut: buffer('u32', 'write'),
        n: uniform('u32'),
        run: uniform('u32'),
        sampled: uniform('u32'),
      },
      body: ({ keys, idx, diag, keysOut, idxOut, n, run, sampled }, k) => {
        const t = k.let(k.globalIndex, 't');
        k.if(t.lt(n), () => {
          const p = pairOf(k, t, n, run);
          k.if(sampled.ne(0), () => {
            const d0 = k.let(diag.load(t.div(DIAGONAL_STRIDE)), 'd0');
            const d1 = k.let(d0.add(t.and(DIAGONAL_STRIDE - 1)).add(1), 'd1');
            p.lo.set(select(d0.gt(p.lo), d0, p.lo));
            p.hi.set(select(d1.lt(p.hi), d1, p.hi));
          });
          diagonalSearch(k, keys, p);
          const a = k.let(p.y0.add(p.lo), 'a');
          const b = k.let(p.y1.add(p.r).sub(p.lo), 'b');
          const ka = k.let(keys.load(a), 'ka');
          const kb = k.let(keys.load(b), 'kb');
          const fromA = k.let(a.lt(p.y1).and(b.ge(p.y2).or(ka.le(kb))), 'fromA');
          keysOut.store(t, select(fromA, ka, kb));
          idxOut.store(t, idx.load(select(fromA, a, b)));
        });
      },
    }),
  );
}

/**
 * Stable merge sort of `keys` (u32 / i32 / f32) with optional `values`; same
 * order and results as `radixSort`. Runs on every device with 'gather':
 * workgroup devices scatter each element to its rank in the partner run, gather
 * devices compute each output by merge path (mergePathKernel).
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
  // scatter is a point per element) merge by merge path, which needs no scatter.
  const gatherMerge = familyOf(device, 'mergeSort') === 'gather';
  const { keysOut, valuesOut, values } = prepareSort(device, keys, options, keys.length);
  const n = keys.length;
  const result = valuesOut ? { keys: keysOut, values: valuesOut } : { keys: keysOut };
  if (n === 0) return result;
  const wg = gatherSize(device.caps);
  let k0 = scratch(device, 'merge.k0', 'u32', n);
  let i0 = scratch(device, 'merge.i0', 'u32', n);
  let k1 = scratch(device, 'merge.k1', 'u32', n);
  let i1 = scratch(device, 'merge.i1', 'u32', n);
  device.dispatch(initKernel(keys.dtype as SortKeyType, wg), { invocations: n }, { input: keys, keys: k0, idx: i0, n, size: n });
  const slots = Math.ceil(n / DIAGONAL_STRIDE);
  const diag = scratch(device, 'merge.diag', 'u32', gatherMerge ? slots : 1);
  for (let run = 1; run < n; run *= 2) {
    if (!gatherMerge) {
      device.dispatch(mergeStepKernel(wg), { invocations: n }, { keys: k0, idx: i0, keysOut: k1, idxOut: i1, n, run });
    } else {
      const sampled = run >= DIAGONAL_STRIDE ? 1 : 0;
      if (sampled) device.dispatch(diagonalKernel(wg), { invocations: slots }, { keys: k0, diag, n, run, slots });
      device.dispatch(mergePathKernel(wg), { invocations: n }, { keys: k0, idx: i0, diag, keysOut: k1, idxOut: i1, n, run, sampled });
    }
    [k0, k1] = [k1, k0];
    [i0, i1] = [i1, i0];
  }
  finishSort(device, { keys: k0, idx: i0 }, { keys, values }, { keys: keysOut, values: valuesOut }, n, wg);
  return result;
}
