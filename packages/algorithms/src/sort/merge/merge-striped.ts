/**
 * Merge sort by merge path in a striped layout, for gather-only devices: every
 * invocation writes sixteen keys, one texel of each of four output buffers, where
 * merge-path.ts writes four.
 *
 * Layout: the order keys live in four buffers (stripes) of vec4s; key j is component
 * j & 3 of texel j >> 4 of stripe (j >> 2) & 3, so keys 16u … 16u + 15 (a *group*) are
 * texel u of the four stripes. A kernel that stores texel `globalIndex` of four vec4
 * outputs writes a whole group, and one load of each stripe at the same index reads one;
 * no key's stripe is ever chosen at run time.
 *
 * - Block pass: invocation u reads keys 16u … 16u + 15, sorts them in registers (a
 *   bitonic network) and writes group u: every key is loaded once, where each of
 *   merge-path.ts's four fragments per block sorts the whole block.
 * - Merge passes (runs of 16, 32, …): invocation u writes outputs 16u … 16u + 15 of its
 *   pair of runs A, B. A binary search over groups finds t, the first group of A whose
 *   first key goes after the B key opposite it on the diagonal (A[16t] > B[r - 1 - 16t],
 *   r the rank of output 16u in the pair): the count of outputs from A before output
 *   16u lies in (16(t - 1), 16t]. Groups t - 1 and t of A and the two groups of B that
 *   follow those outputs hold every key the sixteen outputs can take, and one comparison
 *   a key pair on that diagonal tells which keys of A's group t - 1 precede the outputs.
 *   The sixteen candidates of A and of B are then rotations of sorted runs by the same
 *   count, so sixteen minima pair them as a half-cleaner would (rotated), and one bitonic
 *   merge sorts the result: 16 comparisons, 32 minima, 16 selects and 32 compare-exchanges
 *   per sixteen outputs. Groups outside a run read as 0xFFFFFFFF (A's group t - 1 as 0);
 *   such a key can only stand for keys of the same bits, so keys alone need no
 *   tie-break. Runs of at least the tuned sample threshold search between diagonal
 *   samples (one per `stride` outputs) instead of the whole run.
 * - Finish: output texel T is texel T >> 2 of stripe T & 3, turned back into the keys'
 *   type.
 *
 * Per sixteen keys and merge pass: 16 texel loads and two scalar loads a search step,
 * against merge-path.ts's four fragments of a search and five loads each.
 * Keys alone (the pairs keep merge-path.ts). Passes: 1 + ceil(log2(n / 16)) merges
 * (+ a sample pass each from the threshold) + the finish.
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
import { prepareSort, type SortKeyType, type SortResult, validateSort } from '../sort-args.ts';
import { mergeNetwork, type Slot, sortNetwork } from '../sort-blocks.ts';
import { f32ToSortKey, sortKeyToF32 } from '../sort-keys.ts';

/** Keys an invocation writes: one texel of each of four stripes. */
export const GROUP = 16;
const MAX_KEY = 0xffffffff;

type TexelLoader = { load(i: Val<'u32'>): Val<'vec4<u32>'> };
type TexelStorer = { store(i: Val<'u32'>, v: Val<'vec4<u32>'>): void };
type Stripes = [Buffer<'u32'>, Buffer<'u32'>, Buffer<'u32'>, Buffer<'u32'>];

/** The shape of a striped sort: when merge passes search between diagonal samples. */
export interface StripedShape {
  /** Outputs per diagonal sample (a multiple of 16). */
  readonly stride: number;
  /** Runs at least this long (keys) search between samples; shorter runs search the whole diagonal. */
  readonly sampledFrom: number;
}

/** Elements of each stripe: n rounded up to whole groups, a quarter each. */
export function stripeLength(n: number): number {
  return Math.ceil(n / GROUP) * (GROUP / 4);
}

function parts(v: Val<'vec4<u32>'>): Array<Val<'u32'>> {
  return [v.x, v.y, v.z, v.w];
}

function texelOf(keys: ReadonlyArray<Val<'u32'>>, q: number): Val<'vec4<u32>'> {
  return vec('u32', keys[4 * q] as Val<'u32'>, keys[4 * q + 1] as Val<'u32'>, keys[4 * q + 2] as Val<'u32'>, keys[4 * q + 3] as Val<'u32'>);
}

/**
 * Group u = keys 16u … 16u + 15 of the input as order keys, sorted (past n:
 * 0xFFFFFFFF). With `texels` the input is read as vec4s (n divides by 4).
 */
export function stripedBlockKernel(dtype: SortKeyType, texels: boolean, wg: number) {
  return cachedKernel(`sort-striped-block:${dtype}:${texels}:${wg}`, () =>
    defineKernel({
      name: `sort_striped_block_${dtype}${texels ? '_vec4' : ''}`,
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
          const base = k.let(u.mul(GROUP), 'base');
          const toKey = (x: Val<'u32'> | Val<'i32'> | Val<'f32'>): Val<'u32'> =>
            dtype === 'f32' ? f32ToSortKey(x as Val<'f32'>) : dtype === 'i32' ? i32ToKey(x as Val<'i32'>) : (x as Val<'u32'>);
          const raw: Array<Val<'u32'> | Val<'i32'> | Val<'f32'>> = [];
          if (texels) {
            const input = p.input as unknown as { load(i: Val<'u32'>): Val<'vec4<u32>'> | Val<'vec4<i32>'> | Val<'vec4<f32>'> };
            for (let q = 0; q < 4; q++) {
              const v = k.let(input.load(u.mul(4).add(q)) as Val<'vec4<u32>'>, `q${q}`);
              raw.push(v.x, v.y, v.z, v.w);
            }
          } else {
            const input = p.input as unknown as { load(i: Val<'u32'>): Val<'u32'> };
            for (let j = 0; j < GROUP; j++) raw.push(input.load(base.add(j)));
          }
          const slots: Slot[] = raw.map((x, j) => ({ key: k.let(select(base.add(j).lt(p.n), toKey(x), MAX_KEY), `k${j}`) }));
          sortNetwork(k, slots, false);
          const keys = slots.map((s) => s.key);
          const outs: TexelStorer[] = [p.s0, p.s1, p.s2, p.s3];
          outs.forEach((o, q) => {
            o.store(u, texelOf(keys, q));
          });
        });
      },
    }),
  );
}

/** The pair of runs around group u (keys 16u …), in groups: A = [ya, ya + la), B = [ya + la, ya + la + lb), and u's rank r in the pair. */
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
 * Binary search over groups: lo becomes the first t in [lo, hi] with A[16t] > B[16(r - t) - 1]
 * (hi when none before it). Every probe lies inside A and B (lo >= r - lb, hi <= min(r, la)).
 */
function groupSearch(
  k: KernelBuilder,
  first: TexelLoader,
  last: TexelLoader,
  p: { ya: Val<'u32'>; la: Val<'u32'>; r: Val<'u32'>; lo: Var<'u32'>; hi: Var<'u32'> },
): void {
  k.while(
    () => p.lo.lt(p.hi),
    () => {
      const mid = k.let(p.lo.add(p.hi.sub(p.lo).shr(1)), 'mid');
      const a = first.load(p.ya.add(mid)).x;
      const b = last.load(p.ya.add(p.la).add(p.r).sub(mid).sub(1)).w;
      k.if(
        a.gt(b),
        () => p.hi.set(mid),
        () => p.lo.set(mid.add(1)),
      );
    },
  );
}

/** diag[s] = the group search's answer for output group s · stride / 16 (stride: outputs per sample). */
export function stripedSampleKernel(stride: number, wg: number) {
  return cachedKernel(`sort-striped-samples:${stride}:${wg}`, () =>
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
          const pr = pairOfGroup(k, s.mul(stride / GROUP), groups, runGroups);
          groupSearch(k, s0, s3, pr);
          diag.store(s, pr.lo);
        });
      },
    }),
  );
}

/**
 * One merge pass over runs of `runGroups` groups: invocation u writes group u of the
 * output stripes (see the file comment). With `sampled`, the search starts from the
 * sample of u's stride: the answer grows by at most one group per output group.
 */
export function stripedMergeKernel(stride: number, wg: number) {
  return cachedKernel(`sort-striped-merge:${stride}:${wg}`, () =>
    defineKernel({
      name: 'sort_striped_merge',
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
            const per = stride / GROUP;
            const t0 = k.let(p.diag.load(u.div(per)), 't0');
            pr.lo.set(max(pr.lo, t0));
            pr.hi.set(min(pr.hi, t0.add(u.rem(per))));
          });
          groupSearch(k, p.s0, p.s3, pr);
          const t = pr.lo;
          const stripes: TexelLoader[] = [p.s0, p.s1, p.s2, p.s3];
          // A group outside its run reads as `fill`: A's group t - 1 as 0 (every key of it then
          // precedes the outputs), the other groups as 0xFFFFFFFF (sorted past the outputs).
          const group = (at: Val<'u32'>, inside: Val<'bool'>, fill: number, name: string): Array<Val<'u32'>> =>
            stripes.flatMap((s, q) => parts(k.let(select(inside, s.load(at), vec('u32', fill, fill, fill, fill)), `${name}${q}`)));
          // A's groups t - 1 and t, B's groups r - t and r - t + 1 (B starts at group ya + la).
          const bFirst = k.let(pr.ya.add(pr.la).add(pr.r).sub(t), 'bf');
          const aLo = group(pr.ya.add(t).sub(1), t.gt(0), 0, 'al');
          const aHi = group(pr.ya.add(t), t.lt(pr.la), MAX_KEY, 'ah');
          const bLo = group(bFirst, pr.r.sub(t).lt(pr.lb), MAX_KEY, 'bl');
          const bHi = group(bFirst.add(1), pr.r.sub(t).add(1).lt(pr.lb), MAX_KEY, 'bh');
          // Key c of A's group t - 1 precedes the outputs unless it goes after B's key opposite it
          // (key 15 - c of B's group r - t); exactly then that B key is one of the outputs. Where
          // the first m keys of A's group t - 1 precede them, the sixteen candidates of A are that
          // group's keys m … 15, then group t's keys 0 … m - 1; those of B are B's group r - t's keys
          // 16 - m … 15, then group r - t + 1's keys 0 … 15 - m. Key c pairs with key 15 - c as in
          // the half-cleaner of A's candidates against B's reversed, rotated by m: a bitonic
          // sequence of the sixteen smallest, which a bitonic merge sorts.
          // The select's operands are named values: with the minima inline, SwiftShader's shader
          // compiler ran past Chromium's GPU watchdog (the context was lost).
          const out: Slot[] = [];
          for (let c = 0; c < GROUP; c++) {
            const ka = aLo[c] as Val<'u32'>;
            const kb = bLo[GROUP - 1 - c] as Val<'u32'>;
            const after = k.let(ka.gt(kb), `p${c}`);
            const fromLow = k.let(min(ka, bHi[GROUP - 1 - c] as Val<'u32'>), `l${c}`);
            const fromHigh = k.let(min(aHi[c] as Val<'u32'>, kb), `r${c}`);
            out.push({ key: k.let(select(after, fromLow, fromHigh), `h${c}`) });
          }
          mergeNetwork(k, out, false);
          const keys = out.map((s) => s.key);
          const outs: TexelStorer[] = [p.o0, p.o1, p.o2, p.o3];
          outs.forEach((o, q) => {
            o.store(u, texelOf(keys, q));
          });
        });
      },
    }),
  );
}

/** Output texel T (keys 4T … 4T + 3, n divisible by 4) or element i: the sorted order keys, turned back into `dtype`. */
export function stripedFinishKernel(dtype: SortKeyType, texels: boolean, wg: number) {
  return cachedKernel(`sort-striped-finish:${dtype}:${texels}:${wg}`, () =>
    defineKernel({
      name: `sort_striped_finish_${dtype}${texels ? '_vec4' : ''}`,
      workgroupSize: wg,
      params: {
        s0: buffer('u32', 'read', { vector: 4 }),
        s1: buffer('u32', 'read', { vector: 4 }),
        s2: buffer('u32', 'read', { vector: 4 }),
        s3: buffer('u32', 'read', { vector: 4 }),
        out: texels ? buffer(dtype, 'write', { vector: 4 }) : buffer(dtype, 'write'),
        count: uniform('u32'),
      },
      body: (p, k) => {
        const i = k.let(k.globalIndex, 'i');
        k.if(i.lt(p.count), () => {
          const texel = texels ? i : i.shr(2);
          const at = k.let(texel.shr(2), 'at');
          const q = k.let(texel.and(3), 'q');
          const v = k.let(
            select(q.lt(2), select(q.eq(0), p.s0.load(at), p.s1.load(at)), select(q.eq(2), p.s2.load(at), p.s3.load(at))),
            'v',
          );
          const unkey = (x: Val<'u32'>): Val<'u32'> | Val<'i32'> | Val<'f32'> =>
            dtype === 'f32' ? sortKeyToF32(x) : dtype === 'i32' ? keyToI32(x) : x;
          if (texels) {
            const out = p.out as unknown as { store(i: Val<'u32'>, v: unknown): void };
            const c = parts(v).map(unkey);
            out.store(i, vec(dtype, c[0] as never, c[1] as never, c[2] as never, c[3] as never));
          } else {
            const c = i.and(3);
            const x = select(c.lt(2), select(c.eq(0), v.x, v.y), select(c.eq(2), v.z, v.w));
            (p.out as unknown as { store(i: Val<'u32'>, v: unknown): void }).store(i, unkey(x));
          }
        });
      },
    }),
  );
}

/**
 * Sorts `keys` (u32 / i32 / f32, no values) by the striped merge sort with `shape`;
 * the same order and results as `radixSort`. `output` as in SortOptions. Edge cases:
 * n = 0 returns an empty buffer. Throws like `radixSort` (LimitExceededError when a
 * stripe does not fit the device).
 */
export function stripedMergeSort<K extends SortKeyType, V extends BufferDType = BufferDType>(
  device: Device,
  keys: Buffer<K>,
  options: { readonly output?: Buffer<K> } | undefined,
  shape: StripedShape,
): SortResult<K, V> {
  validateSort(device, keys, options);
  const { keysOut } = prepareSort(device, keys, options, stripeLength(keys.length));
  if (keys.length > 0) recordStripedSort(device, keys, keysOut, shape);
  return { keys: keysOut };
}

/**
 * Records the striped merge sort of `keys` (n > 0, keys alone) into `output` (keys'
 * dtype and length).
 */
export function recordStripedSort(device: Device, keys: Buffer, output: Buffer, shape: StripedShape): void {
  const n = keys.length;
  const dtype = keys.dtype as SortKeyType;
  const wg = gatherSize(device.caps);
  const length = stripeLength(n);
  const groups = length / 4;
  const size = groups * GROUP;
  const stripes = (set: string): Stripes => [0, 1, 2, 3].map((q) => scratch(device, `mergestriped.${set}${q}`, 'u32', length)) as Stripes;
  let [s0, s1, s2, s3] = stripes('a');
  let [o0, o1, o2, o3] = stripes('b');
  const texels = n % 4 === 0;
  // The input's dtype and vector width vary with the kernel built for them.
  const input = keys as never;
  device.dispatch(stripedBlockKernel(dtype, texels, wg), { invocations: groups }, { input, s0, s1, s2, s3, n, groups });
  const slots = Math.ceil(size / shape.stride);
  const diag = scratch(device, 'mergestriped.diag', 'u32', Math.max(1, slots));
  for (let run = GROUP; run < size; run *= 2) {
    const runGroups = run / GROUP;
    // Samples need whole strides in a pair of runs (stride and runs are powers of two).
    const sampled = run >= Math.max(shape.sampledFrom, shape.stride / 2) ? 1 : 0;
    if (sampled) device.dispatch(stripedSampleKernel(shape.stride, wg), { invocations: slots }, { s0, s3, diag, groups, runGroups, slots });
    device.dispatch(
      stripedMergeKernel(shape.stride, wg),
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
  device.dispatch(stripedFinishKernel(dtype, texels, wg), { invocations: count }, { s0, s1, s2, s3, out: output as never, count });
}
