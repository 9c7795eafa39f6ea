/**
 * JS twins of the order-preserving key transforms in ../common.ts (f32ToKey,
 * i32ToKey): the total order -Inf < … < -0 < +0 < … < +Inf < NaN for f32, and of
 * the sorts' f32 key (../sort/sort-keys.ts), which keeps every NaN's bits.
 */
const f = new Float32Array(1);
const u = new Uint32Array(f.buffer);

/** Bits of an f32 value. */
export function f32Bits(x: number): number {
  f[0] = x;
  return u[0] as number;
}

/** The f32 of some bits. */
export function bitsF32(b: number): number {
  u[0] = b >>> 0;
  return f[0] as number;
}

/** Key of the f32 with bits `b` (every NaN becomes the canonical 0x7fc00000 first). */
export function f32BitsToKey(b: number): number {
  let c = b >>> 0;
  if ((c & 0x7fffffff) >>> 0 > 0x7f800000) c = 0x7fc00000;
  return (c & 0x80000000 ? ~c : c | 0x80000000) >>> 0;
}

/** Bits of the f32 whose key is `k`. */
export function keyToF32Bits(k: number): number {
  return (k & 0x80000000 ? k ^ 0x80000000 : ~k) >>> 0;
}

/**
 * Sort key of the f32 with bits `b`: the sorts' bijection (sort/sort-keys.ts): -Inf < … <
 * -0 < +0 < … < +Inf < positive NaNs by payload < negative NaNs by payload.
 */
export function f32BitsToSortKey(b: number): number {
  const c = b >>> 0;
  if ((c & 0x7fffffff) >>> 0 > 0x7f800000) return c < 0x80000000 ? (c + 0x7f800001) >>> 0 : c;
  return ((c & 0x80000000 ? ~c : c | 0x80000000) - 0x007fffff) >>> 0;
}

/** Bits of the f32 whose sort key is `k`. */
export function sortKeyToF32Bits(k: number): number {
  const key = k >>> 0;
  if (key > 0xff800000) return key;
  if (key > 0xff000001) return (key - 0x7f800001) >>> 0;
  return keyToF32Bits((key + 0x007fffff) >>> 0);
}

export function i32ToKey(x: number): number {
  return ((x | 0) ^ 0x80000000) >>> 0;
}

export function keyToI32(k: number): number {
  return (k ^ 0x80000000) | 0;
}
