/**
 * `sort`: the best sort the device's caps allow (sortFormulation) — radix sort on
 * hardware GPUs and the CPU backend, merge sort by merge path on software GPUs and
 * gather-only devices, where log2(n / 16) merge passes with a search per texel beat
 * both bitonic sort's log2² n / 2 passes and the gather radix sort's eight passes in
 * which every output texel finds its keys (every fragment of a pass has a cost of its
 * own). The merges run in the striped layout (merge-striped.ts: sixteen keys or eight
 * pairs an invocation, one load per four keys) or by merge path (merge-path.ts: four
 * an invocation), as the device class's tuning table says (merge/tuning.ts).
 * Measurements: bench/results/tuning/LEDGER.md, rows "sort.method" and "sort.gather".
 */
import type { Buffer, BufferDType, Device, DeviceCaps } from '@trident/core';
import { deviceClass, tuned } from '../device-class.ts';
import { chooseFamily, type Formulation } from '../plan.ts';
import { mergeSort } from './merge/merge-sort.ts';
import { type StripedShape, stripedMergeSort } from './merge/merge-striped.ts';
import { GATHER_SORT, STRIPED_SHAPE } from './merge/tuning.ts';
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

export type SortFormulationName = RadixFormulationName | 'merge-path' | 'merge-striped';

/** What `sortFormulation` returns: a radix sort's formulation, or a gather merge sort's. */
export type SortFormulation =
  | Formulation<RadixFormulationName, MultisplitShape | undefined>
  | Formulation<'merge-path', undefined>
  | Formulation<'merge-striped', StripedShape>;

/**
 * The formulation `sort` runs on `device` (with values when `pairs`): radix sort's
 * where the device prefers serial or workgroup kernels, merge sort (gather passes)
 * elsewhere, in the striped layout or by merge path as the device class's table says
 * for keys alone and for pairs. Throws UnsupportedFeatureError where none fits.
 */
export function sortFormulation(device: Device, options: { readonly pairs?: boolean } = {}): SortFormulation {
  const family = chooseFamily(device, 'sort', { families: ['serial', 'workgroup', 'gather'] });
  if (family !== 'gather') return radixFormulation(device, options);
  const choice = tuned(GATHER_SORT, device.caps);
  if ((options.pairs ? choice.pairs : choice.keys) === 'merge-striped') {
    const shape = tuned(STRIPED_SHAPE, device.caps);
    return {
      family,
      name: 'merge-striped',
      shape,
      summary: `merge sort by merge path, ${options.pairs ? 'eight pairs' : '16 keys'} an invocation in four stripes (gather passes; a diagonal sample every ${shape.stride} outputs from runs of ${shape.sampledFrom})`,
    };
  }
  return { family, name: 'merge-path', shape: undefined, summary: 'merge sort by merge path (gather passes)' };
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
  const f = sortFormulation(device, { pairs: options?.values !== undefined });
  if (f.name === 'merge-striped') return stripedMergeSort(device, keys, options, f.shape);
  if (f.family === 'gather') return mergeSort(device, keys, options);
  return radixSort(device, keys, options);
}
