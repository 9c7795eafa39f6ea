/**
 * `sort`: the best sort the device's caps allow — radix sort where 'workgroup'
 * and 'scatter' exist, merge sort by merge path on gather-only devices (measured
 * on SwiftShader WebGL2, GPU timer, medians in one page, both with 16-key blocks
 * sorted in registers and four outputs a fragment: 2^16 keys 71-91 ms against
 * bitonic's 121-194, 2^20 1.4-3.5 s against 3.7-5.5 s: log2(n / 16) merge passes
 * with a search per texel beat about log2² n / 2 bitonic passes, since every
 * fragment of a pass has a cost of its own).
 *
 * Gather-only devices keep merge path over the gather radix sort (radix-gather.ts;
 * `radixSort` runs it there): SwiftShader WebGL2, 2 shared vCPUs, u32 keys, GPU
 * timer, medians of one page each (`trident bench --algorithms
 * sort:auto,sort:radix,sort:merge`, load 3-4.5): radix 23.6 / 276 / 4370 ms against
 * merge 19.5 / 51.9 / 850 at 2^12 / 2^16 / 2^20; in a quieter page (load about 1,
 * radix then merge at each size) 151 against 47 at 2^16 and 2204 against 826 at
 * 2^20. Its 8 passes cost about 270 ms each at 2^20, two thirds of it in the pass
 * where every output texel finds its four keys (about 700 ns a fragment, against
 * 30-60 ns for a one-fetch copy); merge path's 17 passes cost about 50 ms each.
 * No size where it wins was found, so no threshold; devices with cheap passes
 * (hardware WebGL2) were not measured.
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
