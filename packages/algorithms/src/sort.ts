/**
 * `sort`: the best sort the device's caps allow — radix sort where 'workgroup'
 * and 'scatter' exist, merge sort by merge path on gather-only devices (measured
 * on SwiftShader WebGL2, GPU timer, medians in one page, both with 16-key blocks
 * sorted in registers and four outputs a fragment: 2^16 keys 71-91 ms against
 * bitonic's 121-194, 2^20 1.4-3.5 s against 3.7-5.5 s: log2(n / 16) merge passes
 * with a search per texel beat about log2² n / 2 bitonic passes, since every
 * fragment of a pass has a cost of its own).
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
