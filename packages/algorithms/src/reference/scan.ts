/**
 * Sequential reference of `scan`: u32 / i32 wrap modulo 2^32; f32 prefix sums are
 * accumulated in float64 (the value the f32 error bound is measured against).
 */
export function scanReference<T extends Uint32Array | Int32Array | Float32Array>(data: T, exclusive: boolean): Float64Array | T {
  const n = data.length;
  if (data instanceof Float32Array) {
    const out = new Float64Array(n);
    let s = 0;
    for (let i = 0; i < n; i++) {
      if (exclusive) out[i] = s;
      s += data[i] as number;
      if (!exclusive) out[i] = s;
    }
    return out;
  }
  const out = new (data.constructor as new (n: number) => T)(n);
  let s = 0;
  for (let i = 0; i < n; i++) {
    if (exclusive) out[i] = s;
    s = (s + (data[i] as number)) | 0;
    if (!exclusive) out[i] = s;
  }
  return out;
}
