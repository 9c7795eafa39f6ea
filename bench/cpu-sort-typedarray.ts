/**
 * Issue 10's sort target at sizes where `trident bench`'s Node sort peers are impractical
 * (TF.js top-k with k = n takes about a minute a call at 2^24): Trident's `sort` on the CPU
 * backend against `Uint32Array.prototype.sort` in the same process, interleaved call by call
 * (six rounds; medians of the five after the first), the result checked against the typed-array
 * sort. Wall clock from the call until the device has flushed.
 *
 *   npx tsx --conditions=trident-source bench/cpu-sort-typedarray.ts [log2n=24]
 */
import { randomU32, sort } from '@trident/algorithms';
import { createDevice } from 'trident';

const n = 2 ** Number(process.argv[2] ?? 24);
const device = await createDevice({ backend: 'cpu' });
const data = randomU32(n, 5);
const keys = device.createBuffer('u32', data);
const output = device.createBuffer('u32', n);
const trident: number[] = [];
const typedArray: number[] = [];
for (let round = 0; round < 6; round++) {
  let t0 = performance.now();
  sort(device, keys, { output });
  await device.flush();
  trident.push(performance.now() - t0);
  const copy = data.slice();
  t0 = performance.now();
  copy.sort();
  typedArray.push(performance.now() - t0);
}
const got = await output.read();
const want = data.slice().sort();
let verified = got.length === want.length;
for (let i = 0; i < n && verified; i++) verified = got[i] === want[i];
const medianAfterFirst = (xs: number[]) => [...xs.slice(1)].sort((a, b) => a - b)[2] as number;
const round1 = (xs: number[]) => xs.map((x) => +x.toFixed(1));
console.log(
  JSON.stringify({
    n,
    trident_ms: round1(trident),
    typedarray_sort_ms: round1(typedArray),
    trident_median_ms: +medianAfterFirst(trident).toFixed(1),
    typedarray_median_ms: +medianAfterFirst(typedArray).toFixed(1),
    verified,
  }),
);
await device.destroy();
