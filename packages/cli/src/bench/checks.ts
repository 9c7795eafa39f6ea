/**
 * Result checks that stay affordable at the GPU machine's sizes (2^28 keys, 2^18 bodies),
 * where the full sequential reference would take minutes on the host: a sort checked for
 * order, multiset and (pairs) a stable permutation; N-body checked on a sample of bodies
 * against the reference formula. Browser-safe.
 */

/**
 * True when `keys` is `data` sorted ascending (ordered, the same multiset by wrapped sum
 * and xor), and for pairs, where the values were the input indices, `values` is a stable
 * permutation that carries each key's index.
 */
export function isSortedPermutation(data: Uint32Array, keys: Uint32Array, values?: Uint32Array): boolean {
  if (keys.length !== data.length || (values && values.length !== data.length)) return false;
  let sum = 0;
  let xor = 0;
  let sumIn = 0;
  let xorIn = 0;
  for (let i = 0; i < data.length; i++) {
    const k = keys[i] as number;
    if (i > 0 && (keys[i - 1] as number) > k) return false;
    sum = (sum + k) >>> 0;
    xor ^= k;
    sumIn = (sumIn + (data[i] as number)) >>> 0;
    xorIn ^= data[i] as number;
  }
  if (sum !== sumIn || xor !== xorIn) return false;
  if (!values) return true;
  const seen = new Uint8Array(data.length);
  for (let i = 0; i < data.length; i++) {
    const v = values[i] as number;
    if (v >= data.length || seen[v] || data[v] !== keys[i]) return false;
    seen[v] = 1;
    if (i > 0 && keys[i - 1] === keys[i] && (values[i - 1] as number) > v) return false;
  }
  return true;
}

/**
 * True when `got` holds exactly the elements of `input` whose flag is non-zero, in order
 * (bit patterns compared). One pass and no index list: compactReference's list of kept
 * indices is a JavaScript array, which the V8 heap cannot hold at 2^30 elements.
 */
export function isCompaction(input: Uint32Array, flags: Uint32Array, got: Uint32Array): boolean {
  let k = 0;
  for (let i = 0; i < input.length; i++) {
    if (flags[i] === 0) continue;
    if (k >= got.length || got[k] !== input[i]) return false;
    k++;
  }
  return k === got.length;
}

/**
 * Accelerations `got` (xyz + padding per body) against the all-pairs reference formula,
 * in float64, for `sample` bodies spread over the array (all of them when there are no
 * more): each component within `relative` of Σ_j m_j / (r_ij² + ε²) (the magnitude before
 * cancellation, as nbodyForceScale bounds the conformance specs) plus 1e-6.
 */
export function nbodySampleMatches(bodies: Float32Array, got: Float32Array, softening2: number, sample: number, relative = 1e-4): boolean {
  const n = bodies.length / 4;
  if (got.length !== bodies.length) return false;
  const step = Math.max(1, Math.floor(n / sample));
  for (let i = 0; i < n; i += step) {
    const xi = bodies[4 * i] as number;
    const yi = bodies[4 * i + 1] as number;
    const zi = bodies[4 * i + 2] as number;
    let ax = 0;
    let ay = 0;
    let az = 0;
    let scale = 0;
    for (let j = 0; j < n; j++) {
      const dx = (bodies[4 * j] as number) - xi;
      const dy = (bodies[4 * j + 1] as number) - yi;
      const dz = (bodies[4 * j + 2] as number) - zi;
      const r2 = dx * dx + dy * dy + dz * dz + softening2;
      if (r2 === 0) continue;
      const m = bodies[4 * j + 3] as number;
      const s = m / (r2 * Math.sqrt(r2));
      ax += dx * s;
      ay += dy * s;
      az += dz * s;
      scale += Math.abs(m) / r2;
    }
    const bound = relative * scale + 1e-6;
    const want = [ax, ay, az];
    for (let c = 0; c < 3; c++) if (!(Math.abs((got[4 * i + c] as number) - (want[c] as number)) <= bound)) return false;
  }
  return true;
}
