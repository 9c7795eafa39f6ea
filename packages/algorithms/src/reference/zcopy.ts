import type { HostArray } from '@trident/core';

/** Sequential reference of zcopy: a copy of `input`. */
export function zcopyReference<T extends HostArray>(input: T): T {
  return input.slice() as T;
}

/** Sequential reference of zfill: `length` elements equal to `value` (rounded through the array's type). */
export function zfillReference<T extends HostArray>(like: T, length: number, value: number): T {
  const out = new (like.constructor as new (n: number) => T)(length);
  out.fill(value);
  return out;
}
