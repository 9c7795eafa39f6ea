/**
 * The u32 sort key of an f32, shared by every sort (radix, merge, bitonic, quick): a
 * bijection on the 2^32 bit patterns, so the sorted keys turn back into exactly the
 * input's bits (a sort returns a permutation of its input, as np.sort does: negative,
 * signalling and payload NaNs keep their bits), in the order
 *
 *   -Inf < … < -0 < +0 < … < +Inf < NaNs,
 *
 * the NaNs last, ordered among themselves by their bits: positive NaNs by payload
 * (0x7f800001 … 0x7fffffff), then negative ones by payload (0xff800001 … 0xffffffff);
 * equal bits keep their input order (the sorts are stable).
 *
 * Layout: the usual order key of a non-NaN value (sign bit set for positives, every bit
 * inverted for negatives) lies in [0x007fffff, 0xff800000]; it moves down by 2^23 - 1 to
 * [0, 0xff000001], which frees the 2^24 - 2 keys above +Inf's for the NaNs: positive NaNs
 * take (0xff000001, 0xff800000], negative NaNs (0xff800000, 0xffffffff] with their own bits.
 * Every NaN stays a NaN on the way through: the transforms work on bits, not on values.
 */
import { select, type Val } from '@trident/core';

/** How far non-NaN keys move down: the room of the negative NaNs below -Inf's usual key. */
const NAN_ROOM = 0x007fffff;
/** Added to a positive NaN's bits to give its key (0x7f800001 -> 0xff000002). */
const POSITIVE_NAN_SHIFT = 0x7f800001;
/** +Inf's key; keys above it are NaNs. */
const INF_KEY = 0xff000001;
/** The largest positive NaN's key; keys above it are negative NaNs, their own bits. */
const LAST_POSITIVE_NAN_KEY = 0xff800000;

/** The sort key of `x` (see the file comment). */
export function f32ToSortKey(x: Val<'f32'>): Val<'u32'> {
  const b = x.bitcast('u32');
  const ordered = b.xor(b.bitcast('i32').shr(31).bitcast('u32').or(0x80000000));
  const nan = b.and(0x7fffffff).gt(0x7f800000);
  return select(nan, select(b.lt(0x80000000), b.add(POSITIVE_NAN_SHIFT), b), ordered.sub(NAN_ROOM));
}

/** The f32 whose sort key is `key`: the inverse of `f32ToSortKey`, bit for bit. */
export function sortKeyToF32(key: Val<'u32'>): Val<'f32'> {
  const ordered = key.add(NAN_ROOM);
  const value = ordered.xor(ordered.shr(31).sub(1).or(0x80000000));
  const bits = select(key.gt(LAST_POSITIVE_NAN_KEY), key, select(key.gt(INF_KEY), key.sub(POSITIVE_NAN_SHIFT), value));
  return bits.bitcast('f32');
}
