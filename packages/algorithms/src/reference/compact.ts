/** Sequential reference of `compact`: the elements whose flag is non-zero, in order. */
export function compactReference<T extends Uint32Array | Int32Array | Float32Array>(input: T, flags: Uint32Array): T {
  const kept: number[] = [];
  for (let i = 0; i < input.length; i++) if (flags[i] !== 0) kept.push(i);
  const out = new (input.constructor as new (n: number) => T)(kept.length);
  // Copy bit patterns (through a u32 view) so NaN payloads survive.
  const src = new Uint32Array(input.buffer, input.byteOffset, input.length);
  const dst = new Uint32Array(out.buffer);
  kept.forEach((i, j) => {
    dst[j] = src[i] as number;
  });
  return out;
}
