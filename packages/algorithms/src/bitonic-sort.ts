/**
 * Bitonic sort (seed 000) as gather passes: the formulation for gather-only
 * devices (WebGL2), where every kernel writes only its own element.
 *
 * Keys become u32 order keys, padded to a power of two N with 0xFFFFFFFF, and are
 * paired with their original index; pairs compare by (key, index), so the sort is
 * stable and padding sorts after every real key. Each of the log2(N)·(log2(N)+1)/2
 * compare-exchange steps is one gather pass: element i reads its partner i ^ j and
 * keeps the smaller or larger pair by the direction of its bitonic block.
 * A final gather maps keys back and fetches values by index.
 */
import { type Buffer, type BufferDType, buffer, type Device, defineKernel, select, uniform, type Val } from '@trident/core';
import { cachedKernel, ceilPow2, f32ToKey, familyOf, gatherSize, i32ToKey, keyToF32, keyToI32, scratch } from './common.ts';
import { prepareSort, type SortKeyType, type SortOptions, type SortResult, validateSort } from './sort-args.ts';

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
          if (dtype === 'f32') key = f32ToKey(x as Val<'f32'>);
          else if (dtype === 'i32') key = i32ToKey(x as Val<'i32'>);
          else key = x as Val<'u32'>;
          keys.store(i, select(i.lt(n), key, 0xffffffff));
          idx.store(i, i);
        });
      },
    }),
  );
}

/** One compare-exchange step (block size kk, distance j) as a gather. */
function stepKernel(wg: number) {
  return cachedKernel(`bitonic-step:${wg}`, () =>
    defineKernel({
      name: 'bitonic_step',
      workgroupSize: wg,
      params: {
        keys: buffer('u32', 'read'),
        idx: buffer('u32', 'read'),
        keysOut: buffer('u32', 'write'),
        idxOut: buffer('u32', 'write'),
        j: uniform('u32'),
        kk: uniform('u32'),
        size: uniform('u32'),
      },
      body: ({ keys, idx, keysOut, idxOut, j, kk, size }, k) => {
        const i = k.let(k.globalIndex, 'i');
        k.if(i.lt(size), () => {
          const p = k.let(i.xor(j), 'p');
          const ki = k.let(keys.load(i), 'ki');
          const ii = k.let(idx.load(i), 'ii');
          const kp = k.let(keys.load(p), 'kp');
          const ip = k.let(idx.load(p), 'ip');
          const partnerLess = kp.lt(ki).or(kp.eq(ki).and(ip.lt(ii)));
          const ascending = i.and(kk).eq(0);
          const lower = i.lt(p);
          // The lower element of an ascending block keeps the smaller pair, and so on.
          const wantMin = lower.eq(ascending);
          const take = k.let(select(wantMin, partnerLess, partnerLess.not()), 'take');
          keysOut.store(i, select(take, kp, ki));
          idxOut.store(i, select(take, ip, ii));
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
          if (dtype === 'f32') x = keyToF32(key);
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
 * Complexity: N = next power of two >= n; O(N log² N) work in
 * log2(N)·(log2(N)+1)/2 passes, each reading 4 and writing 2 words per element.
 * Edge cases: n = 0 returns empty buffers. Throws InvalidArgumentError like
 * `radixSort`; LimitExceededError when the padded temporaries do not fit.
 */
export function bitonicSort<K extends SortKeyType, V extends BufferDType = BufferDType>(
  device: Device,
  keys: Buffer<K>,
  options?: SortOptions<V>,
): SortResult<K, V> {
  validateSort(device, keys, options);
  const size = ceilPow2(keys.length);
  const { keysOut, valuesOut, values } = prepareSort(device, keys, options, size);
  familyOf(device, 'bitonicSort');
  const n = keys.length;
  const result = valuesOut ? { keys: keysOut, values: valuesOut } : { keys: keysOut };
  if (n === 0) return result;
  const wg = gatherSize(device.caps);
  let k0 = scratch(device, 'bitonic.k0', 'u32', size);
  let i0 = scratch(device, 'bitonic.i0', 'u32', size);
  let k1 = scratch(device, 'bitonic.k1', 'u32', size);
  let i1 = scratch(device, 'bitonic.i1', 'u32', size);
  // Loads past n read 0 (IR semantics) and are replaced by the padding key.
  device.dispatch(initKernel(keys.dtype as SortKeyType, wg), { invocations: size }, { input: keys, keys: k0, idx: i0, n, size });
  for (let kk = 2; kk <= size; kk *= 2) {
    for (let j = kk / 2; j >= 1; j /= 2) {
      device.dispatch(stepKernel(wg), { invocations: size }, { keys: k0, idx: i0, keysOut: k1, idxOut: i1, j, kk, size });
      [k0, k1] = [k1, k0];
      [i0, i1] = [i1, i0];
    }
  }
  finishSort(device, { keys: k0, idx: i0 }, { keys, values }, { keys: keysOut, values: valuesOut }, n, wg);
  return result;
}
