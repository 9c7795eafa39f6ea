/**
 * `sort`: the best sort the device's caps allow — radix sort where 'workgroup'
 * and 'scatter' exist, bitonic sort on gather-only devices.
 */
import type { Buffer, BufferDType, Device } from '@trident/core';
import { bitonicSort } from './bitonic-sort.ts';
import { familyOf } from './common.ts';
import { radixSort } from './radix-sort.ts';
import type { SortKeyType, SortOptions, SortResult } from './sort-args.ts';

export type { SortKeyType, SortOptions, SortResult } from './sort-args.ts';

/**
 * Sorts `keys` (and `values`) with the best formulation the device's caps allow:
 * radix sort where 'workgroup' and 'scatter' exist, bitonic sort on gather-only
 * devices. Same order, stability and errors as `radixSort`.
 */
export function sort<K extends SortKeyType, V extends BufferDType = BufferDType>(
  device: Device,
  keys: Buffer<K>,
  options?: SortOptions<V, K>,
): SortResult<K, V> {
  if (familyOf(device, 'sort') === 'workgroup') return radixSort(device, keys, options);
  return bitonicSort(device, keys, options);
}
