/**
 * Quicksort (after KIT's GPU algorithm-engineering exercise, 2010): a host-driven sort built on a two-phase parallel
 * partition. The host keeps a list of ranges still to sort; for each large range
 * it picks a pivot (median of three keys read back), then
 *   phase 1: flags per element (< pivot, = pivot) and their inclusive scans give
 *            every element its offset inside the L / E / G parts (the interblock
 *            offsets of the seed, computed by `scan`),
 *   phase 2: a scatter moves each element to its part, keeping input order within
 *            each part (so the sort is stable), and the range is copied back.
 * The E part (keys equal to the pivot) is final; L and G go back on the list.
 * Ranges of at most LOCAL elements are handed to a local sort: one workgroup per
 * range sorts it in workgroup memory with a bitonic network over (key, index).
 *
 * Keys become u32 order keys paired with their original index, as in the other
 * comparison sorts; values are fetched by index at the end.
 *
 * Gather-only devices (WebGL2) run the formulation of quicksort-gather.ts: every
 * range of a level partitioned in the same passes, each output element finding its
 * source by a binary search over the scanned flags, and a rank-counting local sort.
 */
import { type Buffer, type BufferDType, buffer, type Device, defineKernel, select, uniform, type Val } from '@trident/core';
import { blockSize, cachedKernel, dispatchGroups, gatherSize } from '../../common.ts';
import { chooseFamily } from '../../plan.ts';
import { recordScan } from '../../scan/scan.ts';
import { finishSort, initKernel } from '../bitonic/bitonic-sort.ts';
import { prepareSort, type SortKeyType, type SortOptions, type SortResult, validateSort } from '../sort-args.ts';
import { gatherQuickSortPairs } from './quicksort-gather.ts';

/** lt[i - lo] = key < pivot, eq[i - lo] = key == pivot, for i in [lo, hi). */
function flagsKernel(wg: number) {
  return cachedKernel(`quick-flags:${wg}`, () =>
    defineKernel({
      name: 'quicksort_flags',
      workgroupSize: wg,
      params: {
        keys: buffer('u32', 'read'),
        lt: buffer('u32', 'write'),
        eq: buffer('u32', 'write'),
        lo: uniform('u32'),
        m: uniform('u32'),
        pivot: uniform('u32'),
      },
      body: ({ keys, lt, eq, lo, m, pivot }, k) => {
        const r = k.let(k.globalIndex, 'r');
        k.if(r.lt(m), () => {
          const key = k.let(keys.load(lo.add(r)), 'key');
          lt.store(r, select(key.lt(pivot), k.var('u32', 1), k.var('u32', 0)));
          eq.store(r, select(key.eq(pivot), k.var('u32', 1), k.var('u32', 0)));
        });
      },
    }),
  );
}

/** Phase 2: element lo + r goes to lo + its offset in L, E or G (order kept). */
function partitionKernel(wg: number) {
  return cachedKernel(`quick-part:${wg}`, () =>
    defineKernel({
      name: 'quicksort_partition',
      workgroupSize: wg,
      params: {
        keys: buffer('u32', 'read'),
        idx: buffer('u32', 'read'),
        ltScan: buffer('u32', 'read'),
        eqScan: buffer('u32', 'read'),
        keysOut: buffer('u32', 'write'),
        idxOut: buffer('u32', 'write'),
        lo: uniform('u32'),
        m: uniform('u32'),
        pivot: uniform('u32'),
      },
      body: ({ keys, idx, ltScan, eqScan, keysOut, idxOut, lo, m, pivot }, k) => {
        const r = k.let(k.globalIndex, 'r');
        k.if(r.lt(m), () => {
          const key = k.let(keys.load(lo.add(r)), 'key');
          const totL = k.let(ltScan.load(m.sub(1)), 'totL');
          const totE = k.let(eqScan.load(m.sub(1)), 'totE');
          const isL = key.lt(pivot);
          const isE = key.eq(pivot);
          // Inclusive scans: the element's own flag is counted, so subtract it back out.
          const beforeL = k.let(ltScan.load(r).sub(select(isL, k.var('u32', 1), k.var('u32', 0))), 'beforeL');
          const beforeE = k.let(eqScan.load(r).sub(select(isE, k.var('u32', 1), k.var('u32', 0))), 'beforeE');
          const beforeG = r.sub(beforeL).sub(beforeE);
          const offset = select(isL, beforeL, select(isE, totL.add(beforeE), totL.add(totE).add(beforeG)));
          const target = k.let(lo.add(offset), 'target');
          keysOut.store(target, key);
          idxOut.store(target, idx.load(lo.add(r)));
        });
      },
    }),
  );
}

/**
 * Local sort: workgroup g sorts keys/idx in [ranges[2g], ranges[2g+1]) (at most
 * 2 · wg elements) with a bitonic network over (key, index) in workgroup memory.
 */
function localSortKernel(wg: number) {
  const local = 2 * wg;
  return cachedKernel(`quick-local:${wg}`, () =>
    defineKernel({
      name: 'quicksort_local',
      workgroupSize: wg,
      params: { keys: buffer('u32', 'read_write'), idx: buffer('u32', 'read_write'), ranges: buffer('u32', 'read') },
      body: ({ keys, idx, ranges }, k) => {
        const sk = k.workgroupArray('u32', local);
        const si = k.workgroupArray('u32', local);
        const g = k.let(k.workgroupIndex, 'g');
        const lo = k.let(ranges.load(g.mul(2)), 'lo');
        const m = k.let(ranges.load(g.mul(2).add(1)).sub(lo), 'm');
        const lid = k.localIndex;
        for (let h = 0; h < 2; h++) {
          const s = k.let(lid.add(h * wg), `s${h}`);
          // Padding (past the range) sorts last: the largest key and index.
          sk.store(s, select(s.lt(m), keys.load(lo.add(s)), k.var('u32', 0xffffffff)));
          si.store(s, select(s.lt(m), idx.load(lo.add(s)), k.var('u32', 0xffffffff)));
        }
        k.barrier();
        for (let kk = 2; kk <= local; kk *= 2) {
          for (let j = kk / 2; j >= 1; j /= 2) {
            // Pair q = lid: i has a zero at bit log2(j); its partner is i | j.
            const i = k.let(
              lid
                .and(~(j - 1) >>> 0)
                .shl(1)
                .or(lid.and(j - 1)),
              'i',
            );
            const p = k.let(i.or(j), 'p');
            const ki = k.let(sk.load(i), 'ki');
            const kp = k.let(sk.load(p), 'kp');
            const ii = k.let(si.load(i), 'ii');
            const ip = k.let(si.load(p), 'ip');
            const greater = ki.gt(kp).or(ki.eq(kp).and(ii.gt(ip)));
            const ascending = i.and(kk).eq(0);
            const swap = k.let(select(ascending, greater, greater.not()) as Val<'bool'>, 'swap');
            k.if(swap, () => {
              sk.store(i, kp);
              sk.store(p, ki);
              si.store(i, ip);
              si.store(p, ii);
            });
            k.barrier();
          }
        }
        for (let h = 0; h < 2; h++) {
          const s = k.let(lid.add(h * wg), `t${h}`);
          k.if(s.lt(m), () => {
            keys.store(lo.add(s), sk.load(s));
            idx.store(lo.add(s), si.load(s));
          });
        }
      },
    }),
  );
}

/**
 * Stable quicksort of `keys` (u32 / i32 / f32) with optional `values`, resolving
 * to new buffers; same order and results as `radixSort`. Runs on every device
 * with 'gather' (workgroup devices partition one range at a time with scatters and
 * sort short ranges in workgroup memory; gather-only devices see quicksort-gather.ts).
 *
 * Complexity: expected O(n log n) work over O(log n) partition levels; each
 * partition of a range of m elements costs two scans of m flags, one scatter, one
 * copy and two small readbacks (pivot candidates, part sizes), so the host round
 * trips grow with n / LOCAL. Small ranges are sorted together in one dispatch.
 * Edge cases: n = 0 returns empty buffers; all-equal keys finish after one partition.
 */
export async function quickSort<K extends SortKeyType, V extends BufferDType = BufferDType>(
  device: Device,
  keys: Buffer<K>,
  options?: SortOptions<V>,
): Promise<SortResult<K, V>> {
  validateSort(device, keys, options);
  // Software GPUs take the gather form too (plan.ts).
  const family = chooseFamily(device, 'quickSort');
  const { keysOut, valuesOut, values } = prepareSort(device, keys, options, keys.length);
  const n = keys.length;
  const result = valuesOut ? { keys: keysOut, values: valuesOut } : { keys: keysOut };
  if (n === 0) return result;
  const gw = gatherSize(device.caps);
  if (family === 'gather') {
    const pairs = { keys: device.createBuffer('u32', n), idx: device.createBuffer('u32', n) };
    const spare = { keys: device.createBuffer('u32', n), idx: device.createBuffer('u32', n) };
    try {
      device.dispatch(initKernel(keys.dtype as SortKeyType, gw), { invocations: n }, { input: keys, ...pairs, n, size: n });
      const sorted = await gatherQuickSortPairs(device, pairs, spare, n);
      finishSort(device, sorted, { keys, values }, { keys: keysOut, values: valuesOut }, n, gw);
      await device.flush();
    } finally {
      for (const b of [pairs.keys, pairs.idx, spare.keys, spare.idx]) b.destroy();
    }
    return result;
  }
  const wg = blockSize(device.caps, 16);
  const local = 2 * wg;
  // Fresh temporaries: this function awaits, so pooled ones could be taken meanwhile.
  const own: Buffer[] = [];
  const fresh = (length: number): Buffer<'u32'> => {
    const b = device.createBuffer('u32', length);
    own.push(b);
    return b;
  };
  const k0 = fresh(n);
  const i0 = fresh(n);
  const k1 = fresh(n);
  const i1 = fresh(n);
  const lt = fresh(n);
  const eq = fresh(n);
  const ltScan = fresh(n);
  const eqScan = fresh(n);
  try {
    device.dispatch(initKernel(keys.dtype as SortKeyType, gw), { invocations: n }, { input: keys, keys: k0, idx: i0, n, size: n });
    const pending: Array<[number, number]> = [[0, n]];
    const small: number[] = [];
    while (pending.length > 0) {
      const [lo, hi] = pending.pop() as [number, number];
      const m = hi - lo;
      if (m <= 1) continue;
      if (m <= local) {
        small.push(lo, hi);
        continue;
      }
      const mid = lo + (m >>> 1);
      const [a, b, c] = await Promise.all([lo, mid, hi - 1].map(async (i) => (await k0.read({ offset: i, length: 1 }))[0] as number));
      const pivot = Math.max(Math.min(a as number, b as number), Math.min(Math.max(a as number, b as number), c as number));
      device.dispatch(flagsKernel(gw), { invocations: m }, { keys: k0, lt, eq, lo, m, pivot });
      recordScan(device, lt, ltScan, m, false);
      recordScan(device, eq, eqScan, m, false);
      device.dispatch(
        partitionKernel(gw),
        { invocations: m },
        { keys: k0, idx: i0, ltScan, eqScan, keysOut: k1, idxOut: i1, lo, m, pivot },
      );
      device.copyBuffer(k1, k0, { srcOffset: lo, dstOffset: lo, length: m });
      device.copyBuffer(i1, i0, { srcOffset: lo, dstOffset: lo, length: m });
      const [totL, totE] = await Promise.all([ltScan.read({ offset: m - 1, length: 1 }), eqScan.read({ offset: m - 1, length: 1 })]);
      const l = totL[0] as number;
      const e = totE[0] as number;
      pending.push([lo, lo + l], [lo + l + e, hi]);
    }
    if (small.length > 0) {
      const ranges = fresh(small.length);
      ranges.write(Uint32Array.from(small));
      dispatchGroups(device, localSortKernel(wg), small.length / 2, { keys: k0, idx: i0, ranges });
    }
    finishSort(device, { keys: k0, idx: i0 }, { keys, values }, { keys: keysOut, values: valuesOut }, n, gw);
    await device.flush();
  } finally {
    for (const b of own) b.destroy();
  }
  return result;
}
