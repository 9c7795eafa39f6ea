/**
 * Deterministic pseudo-random u32s (xorshift32): the test data of the conformance
 * suite, the benchmarks and the GPU checks, so that failures and figures reproduce.
 */
export function randomU32(n: number, seed = 0x9e3779b9): Uint32Array {
  const out = new Uint32Array(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = x;
  }
  return out;
}
