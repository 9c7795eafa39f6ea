/**
 * Merge sort by merge path in a striped layout, for gather-only devices: every
 * invocation writes a group of sixteen keys (or eight key-index pairs), one texel of
 * each of four output buffers, where merge-path.ts writes four keys.
 *
 * Layout: the order keys live in four buffers (stripes) of vec4s; keys alone, key j is
 * component j & 3 of texel j >> 4 of stripe (j >> 2) & 3, so keys 16u … 16u + 15 (a
 * *group*) are texel u of the four stripes. With values, texels hold (key, index,
 * key, index): element j is half j & 1 of texel j >> 3 of stripe (j >> 1) & 3, and a
 * group is eight elements. A kernel that stores texel `globalIndex` of four vec4 outputs
 * writes a whole group, and one load of each stripe at the same index reads one; no
 * element's stripe is ever chosen at run time.
 *
 * - Block pass: invocation u reads group u's elements, sorts them in registers (a
 *   bitonic network; pairs by key, then index) and writes group u: every key is loaded
 *   once, where each of merge-path.ts's four fragments per block sorts the whole block.
 * - Merge passes (runs of one group, two, …): invocation u writes output group u of its
 *   pair of runs A, B (g elements a group). A binary search over groups finds t, the
 *   first group of A whose first key goes after the B key opposite it on the diagonal
 *   (A[gt] > B[g(r - t) - 1], r the rank of group u in the pair; A wins ties, which keeps
 *   the sort stable): the count of outputs from A before output gu lies in
 *   (g(t - 1), gt]. Groups t - 1 and t of A and the two groups of B that follow those
 *   outputs hold every element the g outputs can take, and one comparison a pair on that
 *   diagonal tells which elements of A's group t - 1 precede the outputs. The g
 *   candidates of A and of B are then rotations of sorted runs by the same count, so g
 *   minima pair them as a half-cleaner would (rotated), and one bitonic merge sorts the
 *   result: for keys alone 16 comparisons, 32 minima, 16 selects and 32 compare-exchanges
 *   per sixteen outputs. Groups outside a run read as 0xFFFFFFFF (A's group t - 1 as 0),
 *   in keys and indices, so they sort after every element (no index is 0xFFFFFFFF); such
 *   a key can only stand in for keys of the same bits. Runs of at least the tuned sample
 *   threshold search between diagonal samples (one per `stride` outputs) instead of the
 *   whole run.
 * - Finish: output texel T is texel T >> 2 of stripe T & 3 (pairs: texels T >> 1 of
 *   stripes 2(T & 1) and 2(T & 1) + 1), turned back into the keys' type; values are
 *   fetched by index.
 *
 * Per group and merge pass: 16 texel loads and two scalar loads a search step, against
 * merge-path.ts's four (keys) or two (pairs) fragments of a search and five loads each
 * (and four of indices). Passes: 1 + ceil(log2(n / g)) merges (+ a sample pass each from
 * the threshold) + the finish.
 */
import {
  type Buffer,
  type BufferDType,
  buffer,
  type Device,
  defineKernel,
  type KernelBuilder,
  max,
  min,
  select,
  uniform,
  type Val,
  type Var,
  vec,
} from '@trident/core';
import { cachedKernel, gatherSize, i32ToKey, keyToI32, scratch } from '../../common.ts';
import { prepareSort, type SortKeyType, type SortOptions, type SortResult, validateSort } from '../sort-args.ts';
import { mergeNetwork, type Slot, sortNetwork } from '../sort-blocks.ts';
import { f32ToSortKey, sortKeyToF32 } from '../sort-keys.ts';

/** Keys an invocation writes (keys alone): one texel of each of four stripes. */
export const GROUP = 16;
const MAX_KEY = 0xffffffff;

type TexelLoader = { load(i: Val<'u32'>): Val<'vec4<u32>'> };
type TexelStorer = { store(i: Val<'u32'>, v: Val<'vec4<u32>'>): void };
type Stripes = [Buffer<'u32'>, Buffer<'u32'>, Buffer<'u32'>, Buffer<'u32'>];
type Storer = { store(i: Val<'u32'>, v: unknown): void };

/** The shape of a striped sort: when merge passes search between diagonal samples. */
export interface StripedShape {
  /** Outputs per diagonal sample (a power of two, at least 16). */
  readonly stride: number;
  /** Runs at least this long (elements) search between samples; shorter runs search the whole diagonal. */
  readonly sampledFrom: number;
}

/** Elements a group holds: sixteen keys, or eight (key, index) pairs. */
export function groupSize(pairs: boolean): number {
  return pairs ? GROUP / 2 : GROUP;
}

/** Elements of each stripe: n rounded up to whole groups, one texel per group. */
export function stripeLength(n: number, pairs: boolean): number {
  return Math.ceil(n / groupSize(pairs)) * 4;
}

function parts(v: Val<'vec4<u32>'>): Array<Val<'u32'>> {
  return [v.x, v.y, v.z, v.w];
}

/** The slots of a group from its four texels: keys, or (key, index) pairs as (k, i, k, i) texels. */
function slotsOf(texels: ReadonlyArray<Val<'vec4<u32>'>>, pairs: boolean): Slot[] {
  return texels.flatMap((v) =>
    pairs
      ? [
          { key: v.x, idx: v.y },
          { key: v.z, idx: v.w },
        ]
      : parts(v).map((key) => ({ key })),
  );
}

/** Texel q of a group's slots. */
function texelOf(slots: readonly Slot[], q: number, pairs: boolean): Val<'vec4<u32>'> {
  const s = (j: number) => slots[j] as Slot;
  if (pairs) return vec('u32', s(2 * q).key, s(2 * q).idx as Val<'u32'>, s(2 * q + 1).key, s(2 * q + 1).idx as Val<'u32'>);
  return vec('u32', s(4 * q).key, s(4 * q + 1).key, s(4 * q + 2).key, s(4 * q + 3).key);
}

function storeGroup(outs: readonly TexelStorer[], u: Val<'u32'>, slots: readonly Slot[], pairs: boolean): void {
  outs.forEach((o, q) => {
    o.store(u, texelOf(slots, q, pairs));
  });
}

/**
 * Group u of the input, sorted: elements g·u … g·u + g - 1 (g = groupSize) as order keys
 * (past n: 0xFFFFFFFF), with their indices where `pairs`. With `texels` the input is
 * read as vec4s (n divides by 4).
 */
export function stripedBlockKernel(dtype: SortKeyType, pairs: boolean, texels: boolean, wg: number) {
  const g = groupSize(pairs);
  return cachedKernel(`sort-striped-block:${dtype}:${pairs}:${texels}:${wg}`, () =>
    defineKernel({
      name: `sort_striped_block_${dtype}${pairs ? '_pairs' : ''}${texels ? '_vec4' : ''}`,
      workgroupSize: wg,
      params: {
        input: texels ? buffer(dtype, 'read', { vector: 4 }) : buffer(dtype, 'read'),
        s0: buffer('u32', 'write', { vector: 4 }),
        s1: buffer('u32', 'write', { vector: 4 }),
        s2: buffer('u32', 'write', { vector: 4 }),
        s3: buffer('u32', 'write', { vector: 4 }),
        n: uniform('u32'),
        groups: uniform('u32'),
      },
      body: (p, k) => {
        const u = k.let(k.globalIndex, 'u');
        k.if(u.lt(p.groups), () => {
          const base = k.let(u.mul(g), 'base');
          const toKey = (x: Val<'u32'> | Val<'i32'> | Val<'f32'>): Val<'u32'> =>
            dtype === 'f32' ? f32ToSortKey(x as Val<'f32'>) : dtype === 'i32' ? i32ToKey(x as Val<'i32'>) : (x as Val<'u32'>);
          const raw: Array<Val<'u32'> | Val<'i32'> | Val<'f32'>> = [];
          if (texels) {
            const input = p.input as unknown as { load(i: Val<'u32'>): Val<'vec4<u32>'> | Val<'vec4<i32>'> | Val<'vec4<f32>'> };
            for (let q = 0; q < g / 4; q++) {
              const v = k.let(input.load(u.mul(g / 4).add(q)) as Val<'vec4<u32>'>, `q${q}`);
              raw.push(v.x, v.y, v.z, v.w);
            }
          } else {
            const input = p.input as unknown as { load(i: Val<'u32'>): Val<'u32'> };
            for (let j = 0; j < g; j++) raw.push(input.load(base.add(j)));
          }
          const slots: Slot[] = raw.map((x, j) => {
            const i = k.let(base.add(j), `i${j}`);
            const key = k.let(select(i.lt(p.n), toKey(x), MAX_KEY), `k${j}`);
            return pairs ? { key, idx: i } : { key };
          });
          network(k, slots, pairs, true);
          storeGroup([p.s0, p.s1, p.s2, p.s3], u, slots, pairs);
        });
      },
    }),
  );
}

/** The pair of runs around group u, in groups: A = [ya, ya + la), B = [ya + la, ya + la + lb), and u's rank r in the pair. */
function pairOfGroup(k: KernelBuilder, u: Val<'u32'>, groups: Val<'u32'>, runGroups: Val<'u32'>) {
  const ya = k.let(u.div(runGroups.mul(2)).mul(runGroups.mul(2)), 'ya');
  const la = k.let(min(runGroups, groups.sub(ya)), 'la');
  const lb = k.let(min(runGroups, groups.sub(ya).sub(la)), 'lb');
  const r = k.let(u.sub(ya), 'r');
  // The first group t of A whose first key goes after B's key opposite it lies in [lo, hi]:
  // t < r - lb puts that key past B's end, t = min(r, la) is always such a group.
  const lo = k.let(select(r.gt(lb), r.sub(lb), 0), 'lo');
  const hi = k.let(min(r, la), 'hi');
  return { ya, la, lb, r, lo, hi };
}

/**
 * Binary search over groups: lo becomes the first t in [lo, hi] whose first key goes after the
 * last key of B's group r - t - 1 (A[gt] > B[g(r - t) - 1], g = groupSize; A wins ties: its
 * indices are the smaller), hi when none before it. Every probe lies inside A and B
 * (lo >= r - lb, hi <= min(r, la)).
 */
function groupSearch(
  k: KernelBuilder,
  first: TexelLoader,
  last: TexelLoader,
  pairs: boolean,
  p: { ya: Val<'u32'>; la: Val<'u32'>; r: Val<'u32'>; lo: Var<'u32'>; hi: Var<'u32'> },
): void {
  k.while(
    () => p.lo.lt(p.hi),
    () => {
      const mid = k.let(p.lo.add(p.hi.sub(p.lo).shr(1)), 'mid');
      const a = first.load(p.ya.add(mid)).x;
      const lastTexel = last.load(p.ya.add(p.la).add(p.r).sub(mid).sub(1));
      // A group's last key: component 3 of its last texel, 2 where texels hold pairs.
      const b = pairs ? lastTexel.z : lastTexel.w;
      k.if(
        a.gt(b),
        () => p.hi.set(mid),
        () => p.lo.set(mid.add(1)),
      );
    },
  );
}

/** diag[s] = the group search's answer for output group s · stride / g (stride: outputs per sample). */
export function stripedSampleKernel(pairs: boolean, stride: number, wg: number) {
  const per = stride / groupSize(pairs);
  return cachedKernel(`sort-striped-samples:${pairs}:${stride}:${wg}`, () =>
    defineKernel({
      name: 'sort_striped_samples',
      workgroupSize: wg,
      params: {
        s0: buffer('u32', 'read', { vector: 4 }),
        s3: buffer('u32', 'read', { vector: 4 }),
        diag: buffer('u32', 'write'),
        groups: uniform('u32'),
        runGroups: uniform('u32'),
        slots: uniform('u32'),
      },
      body: ({ s0, s3, diag, groups, runGroups, slots }, k) => {
        const s = k.let(k.globalIndex, 's');
        k.if(s.lt(slots), () => {
          const pr = pairOfGroup(k, s.mul(per), groups, runGroups);
          groupSearch(k, s0, s3, pairs, pr);
          diag.store(s, pr.lo);
        });
      },
    }),
  );
}

/**
 * True where slot a goes before slot b: by key, then by index. The comparisons are named
 * values combined by a select: with the comparisons inline SwiftShader compiled the merge
 * kernel past Chromium's GPU watchdog, and || with && ran slower (LEDGER.md sort.gather).
 */
function before(k: KernelBuilder, a: Slot, b: Slot, name: string): Val<'bool'> {
  const tie = k.let(a.key.eq(b.key), `${name}e`);
  const byIndex = k.let((a.idx as Val<'u32'>).lt(b.idx as Val<'u32'>), `${name}j`);
  const byKey = k.let(a.key.lt(b.key), `${name}q`);
  return k.let(select(tie, byIndex, byKey), `${name}f`);
}

/** The slot of `first` where `aFirst`, else of `second`. */
function choose(k: KernelBuilder, aFirst: Val<'bool'>, first: Slot, second: Slot, name: string): Slot {
  return {
    key: k.let(select(aFirst, first.key, second.key), `${name}k`),
    idx: k.let(select(aFirst, first.idx as Val<'u32'>, second.idx as Val<'u32'>), `${name}i`),
  };
}

/** The smaller of two slots: by key, then (pairs) by index. */
function smaller(k: KernelBuilder, a: Slot, b: Slot, pairs: boolean, name: string): Slot {
  if (!pairs) return { key: k.let(min(a.key, b.key), name) };
  return choose(k, before(k, a, b, name), a, b, name);
}

/** Orders slots lo < hi of (key, index) slots ascending. */
function exchange(k: KernelBuilder, slots: Slot[], lo: number, hi: number): void {
  const a = slots[lo] as Slot;
  const b = slots[hi] as Slot;
  const aFirst = before(k, a, b, `c${lo}_${hi}`);
  slots[lo] = choose(k, aFirst, a, b, `c${lo}_${hi}l`);
  slots[hi] = choose(k, aFirst, b, a, `c${lo}_${hi}h`);
}

/**
 * Bitonic networks for the slots of a group: keys by sort-blocks.ts's, (key, index) pairs
 * by compare-exchanges that compare through `before`. `full`: a whole sort; otherwise the
 * merge of a bitonic run.
 */
function network(k: KernelBuilder, slots: Slot[], pairs: boolean, full: boolean): void {
  if (!pairs) {
    if (full) sortNetwork(k, slots, false);
    else mergeNetwork(k, slots, false);
    return;
  }
  const size = slots.length;
  const merge = (kk: number, ascending: (i: number) => boolean) => {
    for (let j = kk / 2; j >= 1; j /= 2) {
      for (let i = 0; i < size; i++) {
        const l = i ^ j;
        if (l <= i) continue;
        if (ascending(i)) exchange(k, slots, i, l);
        else exchange(k, slots, l, i);
      }
    }
  };
  if (!full) merge(size, () => true);
  else for (let kk = 2; kk <= size; kk *= 2) merge(kk, (i) => (i & kk) === 0);
}

/**
 * One merge pass over runs of `runGroups` groups: invocation u writes group u of the
 * output stripes (see the file comment). With `sampled`, the search starts from the
 * sample of u's stride: the answer grows by at most one group per output group.
 */
export function stripedMergeKernel(pairs: boolean, stride: number, wg: number) {
  const g = groupSize(pairs);
  const per = stride / g;
  return cachedKernel(`sort-striped-merge:${pairs}:${stride}:${wg}`, () =>
    defineKernel({
      name: `sort_striped_merge${pairs ? '_pairs' : ''}`,
      workgroupSize: wg,
      params: {
        s0: buffer('u32', 'read', { vector: 4 }),
        s1: buffer('u32', 'read', { vector: 4 }),
        s2: buffer('u32', 'read', { vector: 4 }),
        s3: buffer('u32', 'read', { vector: 4 }),
        diag: buffer('u32', 'read'),
        o0: buffer('u32', 'write', { vector: 4 }),
        o1: buffer('u32', 'write', { vector: 4 }),
        o2: buffer('u32', 'write', { vector: 4 }),
        o3: buffer('u32', 'write', { vector: 4 }),
        groups: uniform('u32'),
        runGroups: uniform('u32'),
        sampled: uniform('u32'),
      },
      body: (p, k) => {
        const u = k.let(k.globalIndex, 'u');
        k.if(u.lt(p.groups), () => {
          const pr = pairOfGroup(k, u, p.groups, p.runGroups);
          k.if(p.sampled.ne(0), () => {
            const t0 = k.let(p.diag.load(u.div(per)), 't0');
            pr.lo.set(max(pr.lo, t0));
            pr.hi.set(min(pr.hi, t0.add(u.rem(per))));
          });
          groupSearch(k, p.s0, p.s3, pairs, pr);
          const t = pr.lo;
          const stripes: TexelLoader[] = [p.s0, p.s1, p.s2, p.s3];
          // A group outside its run reads as `fill` (keys and indices): A's group t - 1 as 0
          // (every element of it then precedes the outputs), the other groups as 0xFFFFFFFF
          // (after every element, pairs included: no index is 0xFFFFFFFF).
          const group = (at: Val<'u32'>, inside: Val<'bool'>, fill: number, name: string): Slot[] =>
            slotsOf(
              stripes.map((s, q) => k.let(select(inside, s.load(at), vec('u32', fill, fill, fill, fill)), `${name}${q}`)),
              pairs,
            );
          // A's groups t - 1 and t, B's groups r - t and r - t + 1 (B starts at group ya + la).
          const bFirst = k.let(pr.ya.add(pr.la).add(pr.r).sub(t), 'bf');
          const aLo = group(pr.ya.add(t).sub(1), t.gt(0), 0, 'al');
          const aHi = group(pr.ya.add(t), t.lt(pr.la), MAX_KEY, 'ah');
          const bLo = group(bFirst, pr.r.sub(t).lt(pr.lb), MAX_KEY, 'bl');
          const bHi = group(bFirst.add(1), pr.r.sub(t).add(1).lt(pr.lb), MAX_KEY, 'bh');
          // Element c of A's group t - 1 precedes the outputs unless it goes after B's element
          // opposite it (element g - 1 - c of B's group r - t); exactly then that B element is one
          // of the outputs. Where the first m elements of A's group t - 1 precede them, the g
          // candidates of A are that group's elements m … g - 1, then group t's 0 … m - 1; those of
          // B are B's group r - t's elements g - m … g - 1, then group r - t + 1's 0 … g - 1 - m.
          // Element c pairs with element g - 1 - c as in the half-cleaner of A's candidates against
          // B's reversed, rotated by m: a bitonic sequence of the g smallest, which a bitonic merge
          // sorts. The select's operands are named values: with the minima inline, SwiftShader's
          // shader compiler ran past Chromium's GPU watchdog (the context was lost).
          const out: Slot[] = [];
          for (let c = 0; c < g; c++) {
            const a = aLo[c] as Slot;
            const b = bLo[g - 1 - c] as Slot;
            // A wins ties (its indices are the smaller), so keys decide.
            const after = k.let(a.key.gt(b.key), `p${c}`);
            const fromLow = smaller(k, a, bHi[g - 1 - c] as Slot, pairs, `l${c}`);
            const fromHigh = smaller(k, aHi[c] as Slot, b, pairs, `r${c}`);
            const key = k.let(select(after, fromLow.key, fromHigh.key), `h${c}`);
            out.push(pairs ? { key, idx: k.let(select(after, fromLow.idx as Val<'u32'>, fromHigh.idx as Val<'u32'>), `x${c}`) } : { key });
          }
          network(k, out, pairs, false);
          storeGroup([p.o0, p.o1, p.o2, p.o3], u, out, pairs);
        });
      },
    }),
  );
}

/**
 * The sorted order keys turned back into `dtype` and, with `valueType`, the values
 * fetched by index: output texel T (elements 4T … 4T + 3, n divisible by 4) or element
 * i. Keys alone: texel T is texel T >> 2 of stripe T & 3; pairs: texels T >> 1 of
 * stripes 2(T & 1) and 2(T & 1) + 1.
 */
export function stripedFinishKernel(dtype: SortKeyType, valueType: BufferDType | undefined, texels: boolean, wg: number) {
  const pairs = valueType !== undefined;
  return cachedKernel(`sort-striped-finish:${dtype}:${valueType ?? 'none'}:${texels}:${wg}`, () =>
    defineKernel({
      name: `sort_striped_finish_${dtype}${valueType ? `_${valueType}` : ''}${texels ? '_vec4' : ''}`,
      workgroupSize: wg,
      params: {
        s0: buffer('u32', 'read', { vector: 4 }),
        s1: buffer('u32', 'read', { vector: 4 }),
        s2: buffer('u32', 'read', { vector: 4 }),
        s3: buffer('u32', 'read', { vector: 4 }),
        values: buffer(valueType ?? 'u32', 'read'),
        out: texels ? buffer(dtype, 'write', { vector: 4 }) : buffer(dtype, 'write'),
        valuesOut: texels ? buffer(valueType ?? 'u32', 'write', { vector: 4 }) : buffer(valueType ?? 'u32', 'write'),
        count: uniform('u32'),
      },
      body: (p, k) => {
        const i = k.let(k.globalIndex, 'i');
        k.if(i.lt(p.count), () => {
          const unkey = (x: Val<'u32'>): Val<'u32'> | Val<'i32'> | Val<'f32'> =>
            dtype === 'f32' ? sortKeyToF32(x) : dtype === 'i32' ? keyToI32(x) : x;
          const of4 = (q: Val<'u32'>, at: Val<'u32'>) =>
            select(q.lt(2), select(q.eq(0), p.s0.load(at), p.s1.load(at)), select(q.eq(2), p.s2.load(at), p.s3.load(at)));
          const pick = (c: Val<'u32'>, v: Val<'vec4<u32>'>) => select(c.lt(2), select(c.eq(0), v.x, v.y), select(c.eq(2), v.z, v.w));
          const out = p.out as unknown as Storer;
          const valuesOut = p.valuesOut as unknown as Storer;
          const values = p.values as unknown as { load(i: Val<'u32'>): Val<'u32'> };
          let keys: Array<Val<'u32'>>;
          let idx: Array<Val<'u32'>> = [];
          if (!pairs) {
            const texel = texels ? i : i.shr(2);
            const v = k.let(of4(texel.and(3), texel.shr(2)), 'v');
            keys = texels ? parts(v) : [pick(i.and(3), v)];
          } else if (texels) {
            const at = k.let(i.shr(1), 'at');
            const second = k.let(i.and(1).eq(1), 'second');
            const lo = k.let(select(second, p.s2.load(at), p.s0.load(at)), 'lo');
            const hi = k.let(select(second, p.s3.load(at), p.s1.load(at)), 'hi');
            keys = [lo.x, lo.z, hi.x, hi.z];
            idx = [lo.y, lo.w, hi.y, hi.w];
          } else {
            const e = k.let(i.and(7), 'e');
            const v = k.let(of4(e.shr(1), i.shr(3)), 'v');
            const second = k.let(e.and(1).eq(1), 'second');
            keys = [select(second, v.z, v.x)];
            idx = [select(second, v.w, v.y)];
          }
          const ks = keys.map(unkey);
          out.store(i, texels ? vec(dtype, ...(ks as [never, never, never, never])) : ks[0]);
          if (pairs) {
            const vs = idx.map((x) => values.load(x));
            valuesOut.store(i, texels ? vec(valueType, ...(vs as [never, never, never, never])) : vs[0]);
          }
        });
      },
    }),
  );
}

/**
 * Sorts `keys` (u32 / i32 / f32) and, with values, the values in key order (stable),
 * by the striped merge sort with `shape`; the same order and results as `radixSort`.
 * Options as in SortOptions. Edge cases: n = 0 returns empty buffers. Throws like
 * `radixSort`.
 */
export function stripedMergeSort<K extends SortKeyType, V extends BufferDType = BufferDType>(
  device: Device,
  keys: Buffer<K>,
  options: SortOptions<V, K> | undefined,
  shape: StripedShape,
): SortResult<K, V> {
  validateSort(device, keys, options);
  const pairs = options?.values !== undefined;
  const { keysOut, valuesOut, values } = prepareSort(device, keys, options, stripeLength(keys.length, pairs));
  if (keys.length > 0) recordStripedSort(device, keys, values, { keys: keysOut, values: valuesOut }, shape);
  return valuesOut ? { keys: keysOut, values: valuesOut } : { keys: keysOut };
}

/**
 * Records the striped merge sort of `keys` (n > 0) into `output.keys` (keys' dtype and
 * length) and, with `values`, the values in key order into `output.values`.
 */
export function recordStripedSort(
  device: Device,
  keys: Buffer,
  values: Buffer | undefined,
  output: { keys: Buffer; values: Buffer | undefined },
  shape: StripedShape,
): void {
  const n = keys.length;
  const dtype = keys.dtype as SortKeyType;
  const pairs = values !== undefined;
  const g = groupSize(pairs);
  const wg = gatherSize(device.caps);
  const length = stripeLength(n, pairs);
  const groups = length / 4;
  const size = groups * g;
  const stripes = (set: string): Stripes => [0, 1, 2, 3].map((q) => scratch(device, `mergestriped.${set}${q}`, 'u32', length)) as Stripes;
  let [s0, s1, s2, s3] = stripes('a');
  let [o0, o1, o2, o3] = stripes('b');
  const texels = n % 4 === 0;
  // The input's dtype and vector width vary with the kernel built for them.
  const input = keys as never;
  device.dispatch(stripedBlockKernel(dtype, pairs, texels, wg), { invocations: groups }, { input, s0, s1, s2, s3, n, groups });
  const slots = Math.ceil(size / shape.stride);
  const diag = scratch(device, 'mergestriped.diag', 'u32', Math.max(1, slots));
  for (let run = g; run < size; run *= 2) {
    const runGroups = run / g;
    // Samples need whole strides in a pair of runs (stride and runs are powers of two).
    const sampled = run >= Math.max(shape.sampledFrom, shape.stride / 2) ? 1 : 0;
    if (sampled)
      device.dispatch(stripedSampleKernel(pairs, shape.stride, wg), { invocations: slots }, { s0, s3, diag, groups, runGroups, slots });
    device.dispatch(
      stripedMergeKernel(pairs, shape.stride, wg),
      { invocations: groups },
      {
        s0,
        s1,
        s2,
        s3,
        diag,
        o0,
        o1,
        o2,
        o3,
        groups,
        runGroups,
        sampled,
      },
    );
    [s0, s1, s2, s3, o0, o1, o2, o3] = [o0, o1, o2, o3, s0, s1, s2, s3];
  }
  const count = texels ? n / 4 : n;
  // Without values, one-element stand-ins fill the value slots (a kernel's parameters are fixed).
  const finishValues = values ?? scratch(device, 'sort.noValues', 'u32', 1);
  const finishValuesOut = output.values ?? scratch(device, 'sort.noValuesOut', 'u32', 1);
  device.dispatch(
    stripedFinishKernel(dtype, values?.dtype, texels, wg),
    { invocations: count },
    {
      s0,
      s1,
      s2,
      s3,
      values: finishValues as never,
      out: output.keys as never,
      valuesOut: finishValuesOut as never,
      count,
    },
  );
}
