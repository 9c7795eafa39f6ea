/**
 * Quicksort on gather-only devices (WebGL2 fragment passes): the two-phase
 * partition (after KIT's GPU algorithm-engineering exercise, 2010) with every kernel writing only its own element, and all the ranges of
 * one level partitioned together so that the passes and host round trips grow
 * with the number of levels, not of ranges.
 *
 * Per level the host uploads `seg` (per element: the index of its active range, or
 * NONE) and the range table (lo, hi per range), then
 *   pivots:    one invocation per range, median of three keys;
 *   flags:     lt[i] = key < pivot, eq[i] = key == pivot (0 outside active ranges);
 *   scans:     inclusive scans of lt and eq over the whole array (scan-gather.ts);
 *              a range's counts are differences of the scans at its ends;
 *   partition: output t of a range of m elements takes the element of part L, E or
 *              G whose rank in that part is t's rank, found by a binary search over
 *              the part's inclusive count (O(log m) reads; order kept, so stable);
 *   totals:    |L| and |E| per range, read back: the E part is final, L and G go
 *              on to the next level, or to the local sort once at most LOCAL long.
 * Local sort: every element of a short range counts the elements of its range that
 * precede it in (key, position) order (positions follow the original order, the
 * partitions being stable), and output t then looks for the element of rank t.
 */
import { type Buffer, buffer, type Device, defineKernel, type KernelBuilder, select, uniform, type Val } from '@trident/core';
import { cachedKernel, gatherSize } from '../../common.ts';
import { recordGatherBlockScan } from '../../scan/scan-gather.ts';

/** `seg` entry of elements in no active range. */
const NONE = 0xffffffff;
/** Ranges of at most this many elements go to the local sort (its reads per element grow with it). */
export const GATHER_QUICK_LOCAL = 64;

/** pivots[s] = median of the keys at lo, lo + m/2 and hi - 1 of range s. */
function pivotKernel(wg: number) {
  return cachedKernel(`quick-g-pivot:${wg}`, () =>
    defineKernel({
      name: 'quicksort_pivots',
      workgroupSize: wg,
      params: { keys: buffer('u32', 'read'), table: buffer('u32', 'read'), pivots: buffer('u32', 'write'), ranges: uniform('u32') },
      body: ({ keys, table, pivots, ranges }, k) => {
        const s = k.let(k.globalIndex, 's');
        k.if(s.lt(ranges), () => {
          const lo = k.let(table.load(s.mul(2)), 'lo');
          const hi = k.let(table.load(s.mul(2).add(1)), 'hi');
          const a = k.let(keys.load(lo), 'a');
          const b = k.let(keys.load(lo.add(hi.sub(lo).shr(1))), 'b');
          const c = k.let(keys.load(hi.sub(1)), 'c');
          const lower = k.let(select(a.lt(b), a, b), 'lower');
          const upper = k.let(select(a.lt(b), b, a), 'upper');
          pivots.store(s, select(c.lt(lower), lower, select(c.gt(upper), upper, c)));
        });
      },
    }),
  );
}

/** lt[i] = key < pivot, eq[i] = key == pivot, for elements of active ranges; 0 elsewhere. */
function flagsKernel(wg: number) {
  return cachedKernel(`quick-g-flags:${wg}`, () =>
    defineKernel({
      name: 'quicksort_level_flags',
      workgroupSize: wg,
      params: {
        keys: buffer('u32', 'read'),
        seg: buffer('u32', 'read'),
        pivots: buffer('u32', 'read'),
        lt: buffer('u32', 'write'),
        eq: buffer('u32', 'write'),
        n: uniform('u32'),
      },
      body: ({ keys, seg, pivots, lt, eq, n }, k) => {
        const i = k.let(k.globalIndex, 'i');
        k.if(i.lt(n), () => {
          const s = k.let(seg.load(i), 's');
          const active = k.let(s.ne(NONE), 'active');
          const key = k.let(keys.load(i), 'key');
          const pivot = k.let(pivots.load(s), 'pivot');
          lt.store(i, select(active.and(key.lt(pivot)), 1, 0, 'u32'));
          eq.store(i, select(active.and(key.eq(pivot)), 1, 0, 'u32'));
        });
      },
    }),
  );
}

/** The range's counts before it in the inclusive scans (0 at lo = 0). */
function baseOf(k: KernelBuilder, scanned: { load(i: Val<'u32'>): Val<'u32'> }, lo: Val<'u32'>) {
  const base = k.var('u32', 0, 'base');
  k.if(lo.gt(0), () => base.set(scanned.load(lo.sub(1))));
  return base;
}

/** Output t of an active range takes the element of rank t - lo in order L, E, G; others stay. */
function partitionKernel(wg: number) {
  return cachedKernel(`quick-g-part:${wg}`, () =>
    defineKernel({
      name: 'quicksort_level_partition',
      workgroupSize: wg,
      params: {
        keys: buffer('u32', 'read'),
        idx: buffer('u32', 'read'),
        seg: buffer('u32', 'read'),
        table: buffer('u32', 'read'),
        ltScan: buffer('u32', 'read'),
        eqScan: buffer('u32', 'read'),
        keysOut: buffer('u32', 'write'),
        idxOut: buffer('u32', 'write'),
        n: uniform('u32'),
      },
      body: ({ keys, idx, seg, table, ltScan, eqScan, keysOut, idxOut, n }, k) => {
        const t = k.let(k.globalIndex, 't');
        k.if(t.lt(n), () => {
          const s = k.let(seg.load(t), 's');
          const from = k.var('u32', t, 'from');
          k.if(s.ne(NONE), () => {
            const lo = k.let(table.load(s.mul(2)), 'lo');
            const hi = k.let(table.load(s.mul(2).add(1)), 'hi');
            const baseL = baseOf(k, ltScan, lo);
            const baseE = baseOf(k, eqScan, lo);
            const totL = k.let(ltScan.load(hi.sub(1)).sub(baseL), 'totL');
            const totE = k.let(eqScan.load(hi.sub(1)).sub(baseE), 'totE');
            const r = k.let(t.sub(lo), 'r');
            // part 0 = L, 1 = E, 2 = G; want = the rank inside the part, plus one.
            const part = k.let(select(r.lt(totL), 0, select(r.lt(totL.add(totE)), 1, 2, 'u32')), 'part');
            const want = k.let(r.add(1).sub(select(part.eq(0), 0, select(part.eq(1), totL, totL.add(totE)))), 'want');
            // Lower bound over [lo, hi): the first i whose count in the part reaches want.
            const a = k.var('u32', lo, 'a');
            const b = k.let(hi, 'b');
            k.while(
              () => a.lt(b),
              () => {
                const mid = k.let(a.add(b.sub(a).shr(1)), 'mid');
                const inL = k.let(ltScan.load(mid).sub(baseL), 'inL');
                const inE = k.let(eqScan.load(mid).sub(baseE), 'inE');
                const count = select(part.eq(0), inL, select(part.eq(1), inE, mid.sub(lo).add(1).sub(inL).sub(inE)));
                k.if(
                  count.ge(want),
                  () => b.set(mid),
                  () => a.set(mid.add(1)),
                );
              },
            );
            from.set(a);
          });
          keysOut.store(t, keys.load(from));
          idxOut.store(t, idx.load(from));
        });
      },
    }),
  );
}

/** totals[2s] = |L|, totals[2s + 1] = |E| of range s. */
function totalsKernel(wg: number) {
  return cachedKernel(`quick-g-totals:${wg}`, () =>
    defineKernel({
      name: 'quicksort_level_totals',
      workgroupSize: wg,
      params: {
        table: buffer('u32', 'read'),
        ltScan: buffer('u32', 'read'),
        eqScan: buffer('u32', 'read'),
        totals: buffer('u32', 'write'),
        ranges: uniform('u32'),
      },
      body: ({ table, ltScan, eqScan, totals, ranges }, k) => {
        const g = k.let(k.globalIndex, 'g');
        k.if(g.lt(ranges.mul(2)), () => {
          const s = k.let(g.shr(1), 's');
          const lo = k.let(table.load(s.mul(2)), 'lo');
          const hi = k.let(table.load(s.mul(2).add(1)), 'hi');
          const useE = g.and(1).eq(1);
          const before = k.var('u32', 0, 'before');
          k.if(lo.gt(0), () => before.set(select(useE, eqScan.load(lo.sub(1)), ltScan.load(lo.sub(1)))));
          totals.store(g, select(useE, eqScan.load(hi.sub(1)), ltScan.load(hi.sub(1))).sub(before));
        });
      },
    }),
  );
}

/**
 * rank[i] = position of element i once its short range is sorted: lo plus the
 * elements of the range before it in (key, position) order; i itself elsewhere.
 */
function rankKernel(wg: number) {
  return cachedKernel(`quick-g-rank:${wg}`, () =>
    defineKernel({
      name: 'quicksort_local_rank',
      workgroupSize: wg,
      params: {
        keys: buffer('u32', 'read'),
        seg: buffer('u32', 'read'),
        table: buffer('u32', 'read'),
        rank: buffer('u32', 'write'),
        n: uniform('u32'),
      },
      body: ({ keys, seg, table, rank, n }, k) => {
        const i = k.let(k.globalIndex, 'i');
        k.if(i.lt(n), () => {
          const s = k.let(seg.load(i), 's');
          const r = k.var('u32', i, 'r');
          k.if(s.ne(NONE), () => {
            const lo = k.let(table.load(s.mul(2)), 'lo');
            const hi = k.let(table.load(s.mul(2).add(1)), 'hi');
            const key = k.let(keys.load(i), 'key');
            r.set(lo);
            k.for({ from: lo, to: hi }, (j) => {
              const kj = k.let(keys.load(j), 'kj');
              r.set(r.add(select(kj.lt(key).or(kj.eq(key).and(j.lt(i))), 1, 0, 'u32')));
            });
          });
          rank.store(i, r);
        });
      },
    }),
  );
}

/** Output t of a short range takes the element of the range whose rank is t; others stay. */
function placeKernel(wg: number) {
  return cachedKernel(`quick-g-place:${wg}`, () =>
    defineKernel({
      name: 'quicksort_local_place',
      workgroupSize: wg,
      params: {
        keys: buffer('u32', 'read'),
        idx: buffer('u32', 'read'),
        seg: buffer('u32', 'read'),
        table: buffer('u32', 'read'),
        rank: buffer('u32', 'read'),
        keysOut: buffer('u32', 'write'),
        idxOut: buffer('u32', 'write'),
        n: uniform('u32'),
      },
      body: ({ keys, idx, seg, table, rank, keysOut, idxOut, n }, k) => {
        const t = k.let(k.globalIndex, 't');
        k.if(t.lt(n), () => {
          const s = k.let(seg.load(t), 's');
          const from = k.var('u32', t, 'from');
          k.if(s.ne(NONE), () => {
            const lo = k.let(table.load(s.mul(2)), 'lo');
            const hi = k.let(table.load(s.mul(2).add(1)), 'hi');
            k.for({ from: lo, to: hi }, (j) => k.if(rank.load(j).eq(t), () => from.set(j)));
          });
          keysOut.store(t, keys.load(from));
          idxOut.store(t, idx.load(from));
        });
      },
    }),
  );
}

/** Per-element range indices and the (lo, hi) table for `ranges`. */
function describeRanges(n: number, ranges: ReadonlyArray<readonly [number, number]>): { seg: Uint32Array; table: Uint32Array } {
  const seg = new Uint32Array(n).fill(NONE);
  const table = new Uint32Array(Math.max(2, 2 * ranges.length));
  ranges.forEach(([lo, hi], s) => {
    seg.fill(s, lo, hi);
    table[2 * s] = lo;
    table[2 * s + 1] = hi;
  });
  return { seg, table };
}

/**
 * Sorts the (order key, index) pairs in `pairs` (n of each, indices ascending on
 * entry) by (key, index); returns the buffers holding the result (`pairs` or
 * `spare`, which swap roles at every pass). Temporaries are created and destroyed
 * here: the function awaits, so pooled ones could be taken meanwhile.
 */
export async function gatherQuickSortPairs(
  device: Device,
  pairs: { keys: Buffer<'u32'>; idx: Buffer<'u32'> },
  spare: { keys: Buffer<'u32'>; idx: Buffer<'u32'> },
  n: number,
): Promise<{ keys: Buffer<'u32'>; idx: Buffer<'u32'> }> {
  const wg = gatherSize(device.caps);
  let cur = pairs;
  let other = spare;
  const own: Buffer[] = [];
  const fresh = (length: number): Buffer<'u32'> => {
    const b = device.createBuffer('u32', Math.max(1, length));
    own.push(b);
    return b;
  };
  const seg = fresh(n);
  const lt = fresh(n);
  const eq = fresh(n);
  const ltScan = fresh(n);
  const eqScan = fresh(n);
  try {
    let active: Array<readonly [number, number]> = n > GATHER_QUICK_LOCAL ? [[0, n]] : [];
    const short: Array<readonly [number, number]> = n > 1 && n <= GATHER_QUICK_LOCAL ? [[0, n]] : [];
    while (active.length > 0) {
      const S = active.length;
      const d = describeRanges(n, active);
      seg.write(d.seg);
      const table = fresh(d.table.length);
      table.write(d.table);
      const pivots = fresh(S);
      const totals = fresh(2 * S);
      device.dispatch(pivotKernel(wg), { invocations: S }, { keys: cur.keys, table, pivots, ranges: S });
      device.dispatch(flagsKernel(wg), { invocations: n }, { keys: cur.keys, seg, pivots, lt, eq, n });
      recordGatherBlockScan(device, lt, ltScan, n, false, 'values', 'quick.lt');
      recordGatherBlockScan(device, eq, eqScan, n, false, 'values', 'quick.eq');
      device.dispatch(
        partitionKernel(wg),
        { invocations: n },
        { keys: cur.keys, idx: cur.idx, seg, table, ltScan, eqScan, keysOut: other.keys, idxOut: other.idx, n },
      );
      device.dispatch(totalsKernel(wg), { invocations: 2 * S }, { table, ltScan, eqScan, totals, ranges: S });
      [cur, other] = [other, cur];
      const counts = await totals.read({ length: 2 * S });
      const next: Array<readonly [number, number]> = [];
      active.forEach(([lo, hi], s) => {
        const l = counts[2 * s] as number;
        const e = counts[2 * s + 1] as number;
        for (const r of [
          [lo, lo + l],
          [lo + l + e, hi],
        ] as const) {
          const m = r[1] - r[0];
          if (m > GATHER_QUICK_LOCAL) next.push(r);
          else if (m > 1) short.push(r);
        }
      });
      active = next;
    }
    if (short.length > 0) {
      const d = describeRanges(n, short);
      seg.write(d.seg);
      const table = fresh(d.table.length);
      table.write(d.table);
      const rank = lt;
      device.dispatch(rankKernel(wg), { invocations: n }, { keys: cur.keys, seg, table, rank, n });
      device.dispatch(
        placeKernel(wg),
        { invocations: n },
        { keys: cur.keys, idx: cur.idx, seg, table, rank, keysOut: other.keys, idxOut: other.idx, n },
      );
      [cur, other] = [other, cur];
    }
    await device.flush();
  } finally {
    for (const b of own) b.destroy();
  }
  return cur;
}
