/**
 * `sort`: the best sort the device's caps allow — radix sort where 'workgroup'
 * and 'scatter' exist, merge sort by merge path on gather-only devices (measured
 * on SwiftShader WebGL2, wall clock, best of 3 in one page: 2^12 keys 26 ms
 * against bitonic's 46, 2^16 keys 215 ms against 482: log2 n passes of about
 * 2 log2(run) reads per element beat log2 n (log2 n + 1) / 2 passes of 4).
 */
import type { Buffer, BufferDType, Device } from '@trident/core';
import { familyOf } from './common.ts';
import { mergeSort } from './merge-sort.ts';
import { radixSort } from './radix-sort.ts';
import type { SortKeyType, SortOptions, SortResult } from './sort-args.ts';

export type { SortKeyType, SortOptions, SortResult } from './sort-args.ts';

/**
 * Sorts `keys` (and `values`) with the best formulation the device's caps allow:
 * radix sort where 'workgroup' and 'scatter' exist, merge sort (merge path) on
 * gather-only devices. Same order, stability and errors as `radixSort`.
 */
export function sort<K extends SortKeyType, V extends BufferDType = BufferDType>(
  device: Device,
  keys: Buffer<K>,
  options?: SortOptions<V, K>,
): SortResult<K, V> {
  if (familyOf(device, 'sort') === 'workgroup') return radixSort(device, keys, options);
  return mergeSort(device, keys, options);
}
