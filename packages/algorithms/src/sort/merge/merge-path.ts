/**
 * Merge sort by merge path for gather-only devices (WebGL2 fragment passes), where
 * every kernel writes only its own elements and a fragment writes one texel (four
 * elements) of each output.
 *
 * - First pass: every run of BLOCK = 16 keys is sorted in registers by a bitonic
 *   network (order keys; with values, (key, index) pairs compared as pairs, so the
 *   sort stays stable), padded with 0xFFFFFFFF keys (indices >= n), which sort
 *   last. Each of a block's four fragments sorts the block and keeps its texel: four
 *   merge passes fewer, for a few hundred register operations per fragment. The
 *   temporaries hold n rounded up to a texel (gatherMergeLength).
 * - Merge passes (runs of 16, 32, …): one invocation per output texel (vec4
 *   outputs) finds how many of its first output's predecessors come from run A by
 *   one binary search on the diagonal, then merges its four outputs sequentially
 *   (one load a step) — one search per four outputs instead of one per output. For
 *   runs of at least SAMPLED_FROM, a pass first samples the diagonal every STRIDE
 *   outputs, and the search runs between samples (log2 STRIDE steps).
 * - Without values the sort moves keys alone (no index buffers).
 *
 * Passes: 1 + ceil(log2(n / 16)) merges (+ one sample pass each from runs of 256)
 * + the final conversion.
 */
import {
  type Buffer,
  buffer,
  type Device,
  defineKernel,
  type KernelBuilder,
  select,
  uniform,
  type Val,
  type Var,
  vec,
} from '@trident/core';
import { cachedKernel, gatherSize, scratch } from '../../common.ts';
import { finishSort } from '../bitonic/bitonic-sort.ts';
import type { SortKeyType } from '../sort-args.ts';
import { BLOCK, blockSortKernel } from '../sort-blocks.ts';

/** Outputs per diagonal sample. */
export const DIAGONAL_STRIDE = 32;
/** Runs at least this long search between diagonal samples (shorter runs search the whole diagonal: log2(run) <= 8 steps). */
const SAMPLED_FROM = 256;

type Loader<T extends 'u32' | 'vec4<u32>'> = { load(i: Val<'u32'>): Val<T> };
type Storer = { store(i: Val<'u32'>, v: Val<'vec4<u32>'>): void };

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
  keys: Loader<'u32'>,
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
export function diagonalKernel(wg: number) {
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
 * One merge step of runs of length `run` (a multiple of 16, n a multiple of 4, so
 * that a texel never straddles two pairs of runs): invocation f writes
 * outputs 4f … 4f + 3 of its pair of runs A, B. A search on the diagonal (from the
 * sample of its stride when `sampled`: the count from A grows by at most one per
 * output, so it lies within [diag, diag + t mod stride]) gives i, the count from
 * A before output 4f; then four steps each take the smaller of A[a] and B[b]
 * (A on ties: stable) and load the next key of that run.
 */
function mergeKernel(pairs: boolean, wg: number) {
  return cachedKernel(`merge-path-step:${pairs}:${wg}`, () =>
    defineKernel({
      name: `merge_path_step${pairs ? '_pairs' : ''}`,
      workgroupSize: wg,
      params: {
        keys: buffer('u32', 'read'),
        ...(pairs ? { idx: buffer('u32', 'read') } : {}),
        diag: buffer('u32', 'read'),
        keysOut: buffer('u32', 'write', { vector: 4 }),
        ...(pairs ? { idxOut: buffer('u32', 'write', { vector: 4 }) } : {}),
        n: uniform('u32'),
        run: uniform('u32'),
        sampled: uniform('u32'),
        work: uniform('u32'),
      },
      body: (p, k) => {
        const { keys, diag, keysOut, n, run, sampled, work } = p as unknown as {
          keys: Loader<'u32'>;
          diag: Loader<'u32'>;
          keysOut: Storer;
          n: Val<'u32'>;
          run: Val<'u32'>;
          sampled: Val<'u32'>;
          work: Val<'u32'>;
        };
        const f = k.let(k.globalIndex, 'f');
        k.if(f.lt(work), () => {
          const t = k.let(f.mul(4), 't');
          const pr = pairOf(k, t, n, run);
          k.if(sampled.ne(0), () => {
            const d0 = k.let(diag.load(t.div(DIAGONAL_STRIDE)), 'd0');
            const d1 = k.let(d0.add(t.and(DIAGONAL_STRIDE - 1)).add(1), 'd1');
            pr.lo.set(select(d0.gt(pr.lo), d0, pr.lo));
            pr.hi.set(select(d1.lt(pr.hi), d1, pr.hi));
          });
          diagonalSearch(k, keys, pr);
          const a = k.let(pr.y0.add(pr.lo), 'a');
          const b = k.let(pr.y1.add(pr.r).sub(pr.lo), 'b');
          const ka = k.let(keys.load(a), 'ka');
          const kb = k.let(keys.load(b), 'kb');
          const outKeys: Array<Val<'u32'>> = [];
          const outIdx: Array<Val<'u32'>> = [];
          for (let s = 0; s < 4; s++) {
            const fromA = k.let(a.lt(pr.y1).and(b.ge(pr.y2).or(ka.le(kb))), 'fromA');
            outKeys.push(k.let(select(fromA, ka, kb), `o${s}`));
            if (pairs) outIdx.push(k.let((p as unknown as { idx: Loader<'u32'> }).idx.load(select(fromA, a, b)), `x${s}`));
            if (s === 3) break;
            a.set(select(fromA, a.add(1), a));
            b.set(select(fromA, b, b.add(1)));
            const next = k.let(keys.load(select(fromA, a, b)), 'next');
            ka.set(select(fromA, next, ka));
            kb.set(select(fromA, kb, next));
          }
          keysOut.store(
            f,
            vec('u32', outKeys[0] as Val<'u32'>, outKeys[1] as Val<'u32'>, outKeys[2] as Val<'u32'>, outKeys[3] as Val<'u32'>),
          );
          if (pairs) {
            (p as unknown as { idxOut: Storer }).idxOut.store(
              f,
              vec('u32', outIdx[0] as Val<'u32'>, outIdx[1] as Val<'u32'>, outIdx[2] as Val<'u32'>, outIdx[3] as Val<'u32'>),
            );
          }
        });
      },
    }),
  );
}

/**
 * Elements of the merge-path sort's temporaries: n rounded up to whole texels (vec4
 * outputs). The padding keys sort last; a partial last block sorts its padding past
 * the end, where nothing stores it.
 */
export function gatherMergeLength(n: number): number {
  return Math.ceil(n / 4) * 4;
}

/**
 * Records the merge-path sort of `keys` (n > 0) into `output` (keys' dtype) and,
 * with `values`, the values in key order into `valuesOutput`.
 */
export function recordMergePathSort(
  device: Device,
  keys: Buffer,
  values: Buffer | undefined,
  output: { keys: Buffer; values: Buffer | undefined },
): void {
  const n = keys.length;
  const size = gatherMergeLength(n);
  const pairs = values !== undefined;
  const wg = gatherSize(device.caps);
  const work = size / 4;
  let k0 = scratch(device, 'mergepath.k0', 'u32', size);
  let k1 = scratch(device, 'mergepath.k1', 'u32', size);
  let i0 = pairs ? scratch(device, 'mergepath.i0', 'u32', size) : undefined;
  let i1 = pairs ? scratch(device, 'mergepath.i1', 'u32', size) : undefined;
  const texels = n % 4 === 0;
  device.dispatch(blockSortKernel(keys.dtype as SortKeyType, pairs, texels, wg), { invocations: work }, {
    input: keys,
    keys: k0,
    ...(pairs ? { idx: i0 } : {}),
    n,
    work,
  } as never);
  const slots = Math.ceil(size / DIAGONAL_STRIDE);
  const diag = scratch(device, 'mergepath.diag', 'u32', slots);
  for (let run = BLOCK; run < size; run *= 2) {
    const sampled = run >= SAMPLED_FROM ? 1 : 0;
    if (sampled) device.dispatch(diagonalKernel(wg), { invocations: slots }, { keys: k0, diag, n: size, run, slots });
    device.dispatch(mergeKernel(pairs, wg), { invocations: work }, {
      keys: k0,
      ...(pairs ? { idx: i0, idxOut: i1 } : {}),
      diag,
      keysOut: k1,
      n: size,
      run,
      sampled,
      work,
    } as never);
    [k0, k1] = [k1, k0];
    [i0, i1] = [i1, i0];
  }
  // Without values the indices are never read: a one-element stand-in fills the slot.
  const idx = i0 ?? scratch(device, 'mergepath.noIdx', 'u32', 1);
  finishSort(device, { keys: k0, idx }, { keys, values }, output, n, wg);
}
