/**
 * `sort`: the best sort the device's caps allow (sortFormulation) — radix sort on
 * hardware GPUs and the CPU backend, merge sort by merge path on software GPUs and
 * gather-only devices, where log2(n / 16) merge passes with a search per texel beat
 * both bitonic sort's log2² n / 2 passes and the gather radix sort's eight passes in
 * which every output texel finds its keys (every fragment of a pass has a cost of its
 * own). Measurements: bench/results/tuning/LEDGER.md, row "sort.method".
 */
import type { Buffer, BufferDType, Device, DeviceCaps } from '@trident/core';
import { deviceClass } from '../device-class.ts';
import { chooseFamily, type Formulation } from '../plan.ts';
import { mergeSort } from './merge/merge-sort.ts';
import type { MultisplitShape } from './radix/radix-multisplit.ts';
import { type RadixFormulationName, radixFormulation, radixSort } from './radix/radix-sort.ts';
import type { SortKeyType, SortOptions, SortResult } from './sort-args.ts';

export type { SortKeyType, SortOptions, SortResult } from './sort-args.ts';

/** What `sort` runs. */
export type SortMethod = 'radix' | 'merge';

/** What `sort` runs on a device with `caps`: radix sort on CPUs and hardware GPUs, merge sort by merge path elsewhere. */
export function sortMethod(caps: DeviceCaps): SortMethod {
  const kind = deviceClass(caps);
  return kind === 'serial-workgroups' || kind === 'gpu' ? 'radix' : 'merge';
}

export type SortFormulationName = RadixFormulationName | 'merge-path';

/**
 * The formulation `sort` runs on `device` (with values when `pairs`): radix sort's
 * where the device prefers serial or workgroup kernels, merge sort by merge path
 * (gather passes) elsewhere. Throws UnsupportedFeatureError where none fits.
 */
export function sortFormulation(
  device: Device,
  options: { readonly pairs?: boolean } = {},
): Formulation<SortFormulationName, MultisplitShape | undefined> {
  const family = chooseFamily(device, 'sort', { families: ['serial', 'workgroup', 'gather'] });
  if (family === 'gather') return { family, name: 'merge-path', shape: undefined, summary: 'merge sort by merge path (gather passes)' };
  return radixFormulation(device, options);
}

/**
 * Sorts `keys` (and `values`) with the best formulation the device's caps allow
 * (sortFormulation). Same order, stability and errors as `radixSort`.
 */
export function sort<K extends SortKeyType, V extends BufferDType = BufferDType>(
  device: Device,
  keys: Buffer<K>,
  options?: SortOptions<V, K>,
): SortResult<K, V> {
  const { family } = sortFormulation(device, { pairs: options?.values !== undefined });
  if (family === 'gather') return mergeSort(device, keys, options);
  return radixSort(device, keys, options);
}
