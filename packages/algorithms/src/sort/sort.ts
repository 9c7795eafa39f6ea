/**
 * `sort`: the best sort the device's caps allow (sortMethod) — radix sort where
 * 'workgroup' and 'scatter' exist on hardware GPUs and the CPU backend, merge sort
 * by merge path on software GPUs and gather-only devices (measured
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
import type { Buffer, BufferDType, Device, DeviceCaps } from '@trident/core';
import { familyOf, fewInvocations } from '../common.ts';
import { mergeSort } from './merge/merge-sort.ts';
import { radixSort } from './radix/radix-sort.ts';
import type { SortKeyType, SortOptions, SortResult } from './sort-args.ts';

export type { SortKeyType, SortOptions, SortResult } from './sort-args.ts';

/** What `sort` runs. */
export type SortMethod = 'radix' | 'merge';

/*
 * Software GPUs (fewInvocations) sort faster by merge path, as gather-only devices
 * do: SwiftShader WebGPU in Node, 2 shared vCPUs, u32 keys, GPU timer, one run of
 * `trident bench --backends webgpu --algorithms sort:radix,sort:bitonic` (radix
 * 134 / 1618 / 6427 ms at 2^14 / 2^18 / 2^20, bitonic 11.2 / 294 / 1327), then
 * merge path against bitonic, medians of 5: 6.1 / 30.0 / 143 ms against 14.0 / 66.3 /
 * 280 at 2^14 / 2^16 / 2^18 (radix's 16-row multisplit with its barriers and subgroup
 * operations is emulated per lane; merge path's passes are plain gathers).
 * Hardware GPUs keep radix sort: on the H100 it sorts 2^28 keys in 12 ms.
 */

/**
 * The formulation `sort` uses on a device with `caps`: radix sort where
 * 'workgroup' and 'scatter' exist, except on software GPUs (fewInvocations: few
 * invocations at once and no serial workgroups); merge sort by merge path there and
 * on gather-only devices.
 */
export function sortMethod(caps: DeviceCaps): SortMethod {
  const { features } = caps;
  const workgroups = features.has('workgroup') && features.has('scatter') && features.has('gather');
  return workgroups && !fewInvocations(caps) ? 'radix' : 'merge';
}

/**
 * Sorts `keys` (and `values`) with the best formulation the device's caps allow
 * (sortMethod). Same order, stability and errors as `radixSort`.
 */
export function sort<K extends SortKeyType, V extends BufferDType = BufferDType>(
  device: Device,
  keys: Buffer<K>,
  options?: SortOptions<V, K>,
): SortResult<K, V> {
  familyOf(device, 'sort');
  if (sortMethod(device.caps) === 'radix') return radixSort(device, keys, options);
  return mergeSort(device, keys, options);
}
