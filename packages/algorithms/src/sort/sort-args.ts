/**
 * Argument validation and result types shared by every sort.
 *
 * Order (all sorts): ascending; u32 and i32 numerically; f32 in the total order
 * -Inf < … < -0 < +0 < … < +Inf < NaN. The sorted keys are a permutation of the
 * input's bits (as np.sort's): negative, signalling and payload NaNs come back as they
 * went in, after +Inf, ordered among themselves by their bits (positive NaNs by payload,
 * then negative ones; sort-keys.ts). Sorts are stable: equal keys keep their input order,
 * and so do the values of key-value sorts.
 */
import { type Buffer, type BufferDType, type Device, InvalidArgumentError } from '@trident/core';
import { checkBuffer, checkFits } from '../common.ts';

export const KEY_TYPES = ['u32', 'i32', 'f32'] as const;
const VALUE_TYPES: readonly BufferDType[] = ['u32', 'i32', 'f32'];

export type SortKeyType = (typeof KEY_TYPES)[number];

export interface SortOptions<V extends BufferDType = BufferDType, K extends BufferDType = BufferDType> {
  /** Values to reorder with the keys (same length, any dtype). */
  readonly values?: Buffer<V>;
  /**
   * Where to write the sorted keys (the keys' dtype and length; neither the keys nor
   * the values buffer). Sorting again into the same buffer allocates nothing: the
   * sort's temporaries are already kept per device between calls, so with `output`
   * (and `valuesOutput`) a repeated sort reuses all of its memory, as CUB's
   * temporary storage does. A new buffer otherwise.
   */
  readonly output?: Buffer<K>;
  /** Where to write the reordered values (only with `values`; their dtype and length; distinct from every other buffer). */
  readonly valuesOutput?: Buffer<V>;
}

export interface SortResult<K extends BufferDType, V extends BufferDType = BufferDType> {
  /** The keys in ascending order (`options.output`, or a new buffer). */
  readonly keys: Buffer<K>;
  /** The values in the order of their keys, present when values were given (`options.valuesOutput`, or a new buffer). */
  readonly values?: Buffer<V>;
}

/** Validates sort arguments; throws before anything is created or recorded. */
export function validateSort<K extends BufferDType, V extends BufferDType>(
  device: Device,
  keys: Buffer<K>,
  options: SortOptions<V, BufferDType> | undefined,
): Buffer<V> | undefined {
  checkBuffer(device, keys, 'keys', KEY_TYPES as unknown as readonly K[]);
  if (options !== undefined && (options === null || typeof options !== 'object'))
    throw new InvalidArgumentError('options', 'must be an object');
  const values = options?.values;
  if (values !== undefined) {
    checkBuffer(device, values, 'options.values', VALUE_TYPES as readonly V[]);
    if (values.length !== keys.length)
      throw new InvalidArgumentError('options.values', `length ${values.length} differs from the keys length ${keys.length}`);
    if ((values as Buffer) === keys) throw new InvalidArgumentError('options.values', 'must not be the keys buffer');
  }
  const output = options?.output;
  if (output !== undefined) {
    checkBuffer(device, output, 'options.output', [keys.dtype]);
    if (output.length !== keys.length)
      throw new InvalidArgumentError('options.output', `length ${output.length} differs from the keys length ${keys.length}`);
    if ((output as Buffer) === keys || (output as Buffer) === values)
      throw new InvalidArgumentError('options.output', 'must not be the keys or the values buffer');
  }
  const valuesOutput = options?.valuesOutput;
  if (valuesOutput !== undefined) {
    if (values === undefined) throw new InvalidArgumentError('options.valuesOutput', 'needs options.values');
    checkBuffer(device, valuesOutput, 'options.valuesOutput', [values.dtype]);
    if (valuesOutput.length !== values.length)
      throw new InvalidArgumentError(
        'options.valuesOutput',
        `length ${valuesOutput.length} differs from the values length ${values.length}`,
      );
    const others: unknown[] = [keys, values, output];
    if (others.includes(valuesOutput))
      throw new InvalidArgumentError('options.valuesOutput', 'must not be the keys, values or output buffer');
  }
  return values;
}

/**
 * Validates sort arguments (before anything is recorded), checks that the largest
 * temporary buffer the sort will use (`largestTemporary` elements) is within the
 * device's per-buffer limits, and allocates the outputs that were not given.
 */
export function prepareSort<K extends BufferDType, V extends BufferDType>(
  device: Device,
  keys: Buffer<K>,
  options: SortOptions<V, BufferDType> | undefined,
  largestTemporary: number,
): { keysOut: Buffer<K>; valuesOut: Buffer<V> | undefined; values: Buffer<V> | undefined } {
  const values = validateSort(device, keys, options);
  checkFits(device, largestTemporary, 'sort temporaries');
  const keysOut = (options?.output as Buffer<K> | undefined) ?? device.createBuffer(keys.dtype, keys.length);
  const valuesOut = values ? (options?.valuesOutput ?? device.createBuffer(values.dtype, values.length)) : undefined;
  return { keysOut, valuesOut, values };
}
