/**
 * Bitonic sort (Dulle 2016, PRAM algorithms on GPGPUs) as gather passes: runs on every device, where every
 * kernel writes only its own elements, four to a texel (vec4 outputs).
 *
 * Keys become u32 order keys, padded to a power of two N (at least 16) with
 * 0xFFFFFFFF; with values they are paired with their original index and compare
 * as (key, index), so the sort is stable and padding sorts after every real key;
 * keys alone move without indices. A first pass sorts every block of 16 in
 * registers (sort-blocks.ts). Then each merge level kk = 32 … N keeps every run
 * ascending: a flip step pairs element i with i ^ (kk - 1) (texel t with
 * t ^ ((kk - 1) / 4), components reversed), the steps of distance kk / 4 … 16 pair
 * texel t with t ^ (j / 4), and one pass does the last four steps (distances 8 … 1)
 * on the 16 elements of four texels in registers. Passes: 1 + Σ over levels of
 * (log2 kk - 3), each reading two texels per output texel (four in the last).
 * A final gather maps keys back and fetches values by index.
 *
 * Four elements a fragment beat one scalar compare-exchange pass per step, and merge
 * path (sort()'s choice) beats both, since a pass costs per fragment and bitonic runs
 * many more fragments: LEDGER.md sort.bitonic.
 */
import { type Buffer, type BufferDType, buffer, type Device, defineKernel, max, min, select, uniform, type Val, vec } from '@trident/core';
import { cachedKernel, ceilPow2, gatherSize, i32ToKey, keyToI32, scratch } from '../../common.ts';
import { capableFamily } from '../../plan.ts';
import { prepareSort, type SortKeyType, type SortOptions, type SortResult, validateSort } from '../sort-args.ts';
import { BLOCK, bitonicTailKernel, blockSortKernel } from '../sort-blocks.ts';
import { f32ToSortKey, sortKeyToF32 } from '../sort-keys.ts';

/** keys[i] = key(input[i]) for i < n, else 0xFFFFFFFF; idx[i] = i (i < N). */
export function initKernel(dtype: SortKeyType, wg: number) {
  return cachedKernel(`bitonic-init:${dtype}:${wg}`, () =>
    defineKernel({
      name: `bitonic_init_${dtype}`,
      workgroupSize: wg,
      params: {
        input: buffer(dtype, 'read'),
        keys: buffer('u32', 'write'),
        idx: buffer('u32', 'write'),
        n: uniform('u32'),
        size: uniform('u32'),
      },
      body: ({ input, keys, idx, n, size }, k) => {
        const i = k.let(k.globalIndex, 'i');
        k.if(i.lt(size), () => {
          const x = input.load(i);
          let key: Val<'u32'>;
          if (dtype === 'f32') key = f32ToSortKey(x as Val<'f32'>);
          else if (dtype === 'i32') key = i32ToKey(x as Val<'i32'>);
          else key = x as Val<'u32'>;
          keys.store(i, select(i.lt(n), key, 0xffffffff));
          idx.store(i, i);
        });
      },
    }),
  );
}

/** Components of a texel value. */
function parts(v: Val<'vec4<u32>'>): Array<Val<'u32'>> {
  return [v.x, v.y, v.z, v.w];
}

/**
 * One compare-exchange step between texels (element distance of at least 16, all
 * blocks ascending) as a gather over texels: texel t pairs with texel t ^ jt, element
 * by element, or, in the first step of a level (`flip`: element i with i ^ (kk - 1)),
 * with the partner's components reversed. The lower texel keeps the smaller of each
 * pair ((key, index) pairs with values).
 */
function crossKernel(pairs: boolean, flip: boolean, wg: number) {
  return cachedKernel(`bitonic-cross:${pairs}:${flip}:${wg}`, () =>
    defineKernel({
      name: `bitonic_cross${flip ? '_flip' : ''}${pairs ? '_pairs' : ''}`,
      workgroupSize: wg,
      params: {
        keys: buffer('u32', 'read', { vector: 4 }),
        ...(pairs ? { idx: buffer('u32', 'read', { vector: 4 }) } : {}),
        keysOut: buffer('u32', 'write', { vector: 4 }),
        ...(pairs ? { idxOut: buffer('u32', 'write', { vector: 4 }) } : {}),
        jt: uniform('u32'),
        work: uniform('u32'),
      },
      body: (p, k) => {
        type Texels = { load(i: Val<'u32'>): Val<'vec4<u32>'> };
        type Out = { store(i: Val<'u32'>, v: Val<'vec4<u32>'>): void };
        const { keys, keysOut, jt, work } = p as unknown as { keys: Texels; keysOut: Out; jt: Val<'u32'>; work: Val<'u32'> };
        const t = k.let(k.globalIndex, 't');
        k.if(t.lt(work), () => {
          const q = k.let(t.xor(jt), 'q');
          const lower = k.let(t.lt(q), 'lower');
          const order = (v: Val<'vec4<u32>'>) => (flip ? parts(v).reverse() : parts(v));
          const ownK = parts(k.let(keys.load(t), 'ownK'));
          const partK = order(k.let(keys.load(q), 'partK'));
          if (!pairs) {
            const out = ownK.map((a, c) => select(lower, min(a, partK[c] as Val<'u32'>), max(a, partK[c] as Val<'u32'>)));
            keysOut.store(t, vec('u32', out[0] as Val<'u32'>, out[1] as Val<'u32'>, out[2] as Val<'u32'>, out[3] as Val<'u32'>));
            return;
          }
          const idx = (p as unknown as { idx: Texels }).idx;
          const ownI = parts(k.let(idx.load(t), 'ownI'));
          const partI = order(k.let(idx.load(q), 'partI'));
          const outK: Array<Val<'u32'>> = [];
          const outI: Array<Val<'u32'>> = [];
          for (let c = 0; c < 4; c++) {
            const ak = ownK[c] as Val<'u32'>;
            const ai = ownI[c] as Val<'u32'>;
            const bk = partK[c] as Val<'u32'>;
            const bi = partI[c] as Val<'u32'>;
            const partnerFirst = k.let(bk.lt(ak).or(bk.eq(ak).and(bi.lt(ai))), 'pf');
            // The lower texel takes the smaller pair, the upper the larger.
            const take = k.let(partnerFirst.eq(lower), 'take');
            outK.push(select(take, bk, ak));
            outI.push(select(take, bi, ai));
          }
          keysOut.store(t, vec('u32', outK[0] as Val<'u32'>, outK[1] as Val<'u32'>, outK[2] as Val<'u32'>, outK[3] as Val<'u32'>));
          (p as unknown as { idxOut: Out }).idxOut.store(
            t,
            vec('u32', outI[0] as Val<'u32'>, outI[1] as Val<'u32'>, outI[2] as Val<'u32'>, outI[3] as Val<'u32'>),
          );
        });
      },
    }),
  );
}

/** keysOut[i] = unkey(keys[i]); valuesOut[i] = values[idx[i]] (i < n). */
export function finishKernel(dtype: SortKeyType, valueType: BufferDType | undefined, wg: number) {
  return cachedKernel(`bitonic-finish:${dtype}:${valueType ?? 'none'}:${wg}`, () =>
    defineKernel({
      name: `bitonic_finish_${dtype}${valueType ? `_${valueType}` : ''}`,
      workgroupSize: wg,
      params: {
        keys: buffer('u32', 'read'),
        idx: buffer('u32', 'read'),
        values: buffer(valueType ?? 'u32', 'read'),
        keysOut: buffer(dtype, 'write'),
        valuesOut: buffer(valueType ?? 'u32', 'write'),
        n: uniform('u32'),
      },
      body: ({ keys, idx, values, keysOut, valuesOut, n }, k) => {
        const i = k.let(k.globalIndex, 'i');
        k.if(i.lt(n), () => {
          const key = keys.load(i);
          let x: Val<'u32'> | Val<'i32'> | Val<'f32'> = key;
          if (dtype === 'f32') x = sortKeyToF32(key);
          if (dtype === 'i32') x = keyToI32(key);
          keysOut.store(i, x as never);
          if (valueType) valuesOut.store(i, values.load(idx.load(i)) as never);
        });
      },
    }),
  );
}

/**
 * Writes the sorted keys (order keys turned back into `keys`' dtype) and, when
 * values were given, the values permuted by the sorted indices. Shared by the
 * bitonic, merge and quick sorts, which all end with (order key, index) pairs.
 */
export function finishSort(
  device: Device,
  sorted: { keys: Buffer<'u32'>; idx: Buffer<'u32'> },
  input: { keys: Buffer; values: Buffer | undefined },
  output: { keys: Buffer; values: Buffer | undefined },
  n: number,
  wg: number,
): void {
  // A kernel's parameters are fixed: without values, 1-element stand-ins fill the slots.
  const noValues = scratch(device, 'sort.noValues', 'u32', 1);
  const noValuesOut = scratch(device, 'sort.noValuesOut', 'u32', 1);
  device.dispatch(
    finishKernel(input.keys.dtype as SortKeyType, input.values?.dtype, wg),
    { invocations: n },
    {
      keys: sorted.keys,
      idx: sorted.idx,
      values: input.values ?? noValues,
      keysOut: output.keys,
      valuesOut: output.values ?? noValuesOut,
      n,
    },
  );
}

/**
 * Stable bitonic sort of `keys` (u32 / i32 / f32) with optional `values`, built
 * from gather passes only: runs on every device with 'gather'. Same order and
 * result as `radixSort`.
 *
 * Complexity: N = next power of two >= n (at least 16); O(N log² N) work in
 * 1 + Σ_{L=5}^{log2 N} (L - 3) passes, each reading two or four texels per output texel.
 * Edge cases: n = 0 returns empty buffers. Throws InvalidArgumentError like
 * `radixSort`; LimitExceededError when the padded temporaries do not fit.
 */
export function bitonicSort<K extends SortKeyType, V extends BufferDType = BufferDType>(
  device: Device,
  keys: Buffer<K>,
  options?: SortOptions<V>,
): SortResult<K, V> {
  validateSort(device, keys, options);
  const size = Math.max(BLOCK, ceilPow2(keys.length));
  const { keysOut, valuesOut, values } = prepareSort(device, keys, options, size);
  capableFamily(device, 'bitonicSort');
  const n = keys.length;
  const result = valuesOut ? { keys: keysOut, values: valuesOut } : { keys: keysOut };
  if (n === 0) return result;
  const wg = gatherSize(device.caps);
  const pairs = values !== undefined;
  const work = size / 4;
  let k0 = scratch(device, 'bitonic.k0', 'u32', size);
  let k1 = scratch(device, 'bitonic.k1', 'u32', size);
  // Without values the indices are never read: one-element stand-ins fill finishSort's slot.
  let i0 = pairs ? scratch(device, 'bitonic.i0', 'u32', size) : scratch(device, 'bitonic.noIdx', 'u32', 1);
  let i1 = pairs ? scratch(device, 'bitonic.i1', 'u32', size) : i0;
  const pairBuffers = (from: Buffer<'u32'>, to: Buffer<'u32'>) => (pairs ? { idx: from, idxOut: to } : {});
  // Blocks of 16 sorted ascending in registers (loads past n give the padding key).
  device.dispatch(blockSortKernel(keys.dtype as SortKeyType, pairs, n % 4 === 0, wg), { invocations: work }, {
    input: keys,
    keys: k0,
    ...(pairs ? { idx: i0 } : {}),
    n,
    work,
  } as never);
  const swap = () => {
    [k0, k1] = [k1, k0];
    [i0, i1] = [i1, i0];
  };
  // Merge levels with every run ascending: a flip step (i with i ^ (kk - 1)), the steps of
  // distance kk / 4 … 16 between texels, then the last four steps in registers.
  for (let kk = 2 * BLOCK; kk <= size; kk *= 2) {
    device.dispatch(crossKernel(pairs, true, wg), { invocations: work }, {
      keys: k0,
      keysOut: k1,
      ...pairBuffers(i0, i1),
      jt: (kk - 1) >> 2,
      work,
    } as never);
    swap();
    for (let j = kk / 4; j >= BLOCK; j /= 2) {
      device.dispatch(crossKernel(pairs, false, wg), { invocations: work }, {
        keys: k0,
        keysOut: k1,
        ...pairBuffers(i0, i1),
        jt: j / 4,
        work,
      } as never);
      swap();
    }
    device.dispatch(bitonicTailKernel(pairs, wg), { invocations: work }, { keys: k0, keysOut: k1, ...pairBuffers(i0, i1), work } as never);
    swap();
  }
  finishSort(device, { keys: k0, idx: i0 }, { keys, values }, { keys: keysOut, values: valuesOut }, n, wg);
  return result;
}
