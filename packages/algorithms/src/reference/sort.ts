import { f32BitsToSortKey, i32ToKey, sortKeyToF32Bits } from './keys.ts';

type Keys = Uint32Array | Int32Array | Float32Array;
type Values = Uint32Array | Int32Array | Float32Array;

/**
 * Sequential reference of the sorts: a stable sort by the u32 order key (f32:
 * -Inf < … < -0 < +0 < … < +Inf < NaN, the NaNs by their bits, positive before negative;
 * i32: numeric), keys returned bit for bit (a permutation of the input's bits), values
 * moved with their keys.
 */
export function sortReference<K extends Keys, V extends Values>(keys: K, values?: V): { keys: K; values?: V } {
  const n = keys.length;
  const order = new Uint32Array(n);
  const k = new Uint32Array(n);
  // Bits through a u32 view: reading an f32 into a JS number may quiet a signalling NaN.
  const raw = new Uint32Array(keys.buffer, keys.byteOffset, n);
  for (let i = 0; i < n; i++) {
    order[i] = i;
    const x = keys[i] as number;
    k[i] = keys instanceof Float32Array ? f32BitsToSortKey(raw[i] as number) : keys instanceof Int32Array ? i32ToKey(x) : x;
  }
  // Array.prototype.sort is stable; compare keys, then indices (already in order).
  const sorted = Array.from(order).sort((a, b) => (k[a] as number) - (k[b] as number) || a - b);
  const outKeys = new (keys.constructor as new (n: number) => K)(n);
  const outBits = new Uint32Array(outKeys.buffer);
  sorted.forEach((src, i) => {
    const key = k[src] as number;
    if (keys instanceof Float32Array) outBits[i] = sortKeyToF32Bits(key);
    else outBits[i] = keys instanceof Int32Array ? (key ^ 0x80000000) >>> 0 : key;
  });
  if (!values) return { keys: outKeys };
  const outValues = new (values.constructor as new (n: number) => V)(n);
  const vBits = new Uint32Array(values.buffer, values.byteOffset, n);
  const oBits = new Uint32Array(outValues.buffer);
  sorted.forEach((src, i) => {
    oBits[i] = vBits[src] as number;
  });
  return { keys: outKeys, values: outValues };
}
