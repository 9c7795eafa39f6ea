import type { ReduceOp } from '../common.ts';
import { bitsF32, f32Bits, f32BitsToKey, keyToF32Bits } from './keys.ts';

/**
 * Sequential reference of `reduce`: u32 / i32 sums wrap modulo 2^32; f32 sums are
 * accumulated in float64 (the exact-ish value the bound is measured against; a NaN or
 * +Inf + -Inf gives NaN). f32 min / max are IEEE 754-2019 minimum / maximum, as NumPy's
 * `np.min` / `np.max`: any NaN in the input gives NaN (the canonical quiet NaN
 * 0x7fc00000), and -0 < +0. An empty input gives the op's identity: sum 0, min the
 * type's largest value (f32 +Inf), max its smallest (f32 -Inf).
 */
export function reduceReference(data: Uint32Array | Int32Array | Float32Array, op: ReduceOp): number {
  if (data instanceof Float32Array) {
    if (op === 'sum') {
      let s = 0;
      for (const x of data) s += x;
      return s;
    }
    if (data.some(Number.isNaN)) return bitsF32(0x7fc00000);
    // Order keys: -Inf < … < -0 < +0 < … < +Inf, which Math.min / Math.max do not keep for zeros.
    let key = f32BitsToKey(f32Bits(op === 'min' ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY));
    const raw = new Uint32Array(data.buffer, data.byteOffset, data.length);
    for (const b of raw) {
      const k = f32BitsToKey(b);
      key = op === 'min' ? Math.min(key, k) : Math.max(key, k);
    }
    return bitsF32(keyToF32Bits(key));
  }
  const signed = data instanceof Int32Array;
  let acc = op === 'sum' ? 0 : op === 'min' ? (signed ? 0x7fffffff : 0xffffffff) : signed ? -0x80000000 : 0;
  for (const x of data) {
    if (op === 'sum') acc = signed ? (acc + x) | 0 : (acc + x) >>> 0;
    else acc = op === 'min' ? Math.min(acc, x) : Math.max(acc, x);
  }
  return acc;
}

/** Σ|x_i| in float64, for the f32 error bound. */
export function sumAbs(data: Float32Array): number {
  let s = 0;
  for (const x of data) s += Math.abs(x);
  return s;
}

/** γ(d) = d·u / (1 - d·u) with u = 2^-24: the relative bound of d chained f32 additions. */
export function gammaF32(d: number): number {
  const u = 2 ** -24;
  return (d * u) / (1 - d * u);
}
