/** Sequential reference of `compact`: the elements whose flag is non-zero, in order. */
export function compactReference<T extends Uint32Array | Int32Array | Float32Array>(input: T, flags: Uint32Array): T {
  // Counted first, so the result is one typed array at any length (a JS array of the kept
  // indices would pass V8's array limit past about 2^27 elements).
  let count = 0;
  for (let i = 0; i < input.length; i++) if (flags[i] !== 0) count++;
  const out = new (input.constructor as new (n: number) => T)(count);
  // Copy bit patterns (through a u32 view) so NaN payloads survive.
  const src = new Uint32Array(input.buffer, input.byteOffset, input.length);
  const dst = new Uint32Array(out.buffer);
  for (let i = 0, j = 0; i < input.length; i++) if (flags[i] !== 0) dst[j++] = src[i] as number;
  return out;
}
