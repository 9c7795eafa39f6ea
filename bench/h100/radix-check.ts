/**
 * Radix sort on a real GPU: the multisplit formulation's shapes (workgroup size ×
 * keys per invocation) and the packed-count fallback, keys and pairs, at 2^24 and
 * 2^28 u32 keys; GPU-timestamp medians and a full correctness check of every
 * variant (sorted, same multiset; pairs: a stable permutation). Bundle:
 *   esbuild --bundle … --alias:trident=./bench/h100/trident-webgpu-only.mjs bench/h100/radix-check.ts
 * and run beside the CUB anchor:  node .gpu/radix-check.mjs [log2 sizes…]
 */
import { createDevice, type Device } from 'trident';
import { dispatchGroups } from '../../packages/algorithms/src/common.ts';
import { countKernel, type MultisplitShape, multisplitShape, scatterKernel } from '../../packages/algorithms/src/radix-multisplit.ts';
import { recordRadixSort } from '../../packages/algorithms/src/radix-sort.ts';
import { randomU32 } from '../../packages/algorithms/src/reference/random.ts';
import { recordScan } from '../../packages/algorithms/src/scan.ts';

async function median(device: Device, label: string, body: () => void, reps: number): Promise<number> {
  await device.time(label, body); // warm-up: compiles, allocates temporaries
  const ms: number[] = [];
  for (let r = 0; r < reps; r++) ms.push((await device.time(label, body)).ms);
  ms.sort((a, b) => a - b);
  return ms[Math.floor(reps / 2)] as number;
}

/** Sorted, the same multiset as `data` (sum and xor), and for pairs a stable permutation (values are indices). */
function verify(data: Uint32Array, keys: Uint32Array, values?: Uint32Array): boolean {
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

const device = await createDevice({ backend: 'webgpu' });
const { limits } = device.caps;
console.log(
  `device ${device.info.adapter}; timer ${device.caps.timerSource}; subgroups ${limits.minSubgroupSize}..${limits.maxSubgroupSize}; ` +
    `workgroup storage ${limits.maxComputeWorkgroupStorageSize}; default shape ${JSON.stringify(multisplitShape(device.caps))}`,
);
const logs = process.argv.slice(2).map(Number);
const sizes = logs.length > 0 ? logs : [24, 28];
const variants: Array<[string, MultisplitShape | null, boolean]> = [];
// [keys per invocation, workgroup size, pairs at 2^28 too]
for (const [items, wg, pairs] of [
  [12, 256, true],
  [8, 256, false],
  [16, 256, true],
  [24, 256, false],
  [16, 128, false],
] as const) {
  const shape = multisplitShape(device.caps, items, wg);
  if (shape) variants.push([`multisplit wg=${shape.wg} items=${shape.items}`, shape, pairs]);
}
variants.push(['packed 4-bit (fallback)', null, false]);

const rows: Record<string, unknown>[] = [];
const began = performance.now();
/** Stops the sweep (not the run) past this many seconds, so the anchor in the same call still runs. */
const BUDGET_S = Number(process.env.RADIX_BUDGET_S ?? 150);
const overBudget = () => (performance.now() - began) / 1000 > BUDGET_S;
for (const log of sizes) {
  const n = 2 ** log;
  const data = randomU32(n, 11 + log);
  const keys = device.createBuffer('u32', data);
  const keysOut = device.createBuffer('u32', n);
  const index = new Uint32Array(n);
  for (let i = 0; i < n; i++) index[i] = i;
  const values = device.createBuffer('u32', index);
  const valuesOut = device.createBuffer('u32', n);
  for (const [name, shape, pairsToo] of variants) {
    if (shape === null && log > 26) continue; // ~1.6 Gkeys/s: too slow to sweep at 2^28
    // Pairs for every shape at small n; at large n for the marked shapes only (host checks cost seconds).
    for (const pairs of shape !== null && (log < 26 || pairsToo) ? [false, true] : [false]) {
      if (overBudget()) break;
      console.log(`… 2^${log} ${name}${pairs ? ' pairs' : ''} (${((performance.now() - began) / 1000).toFixed(1)} s)`);
      const ms = await median(
        device,
        name,
        () => recordRadixSort(device, keys, pairs ? values : undefined, keysOut, pairs ? valuesOut : undefined, shape),
        pairs || log < 26 ? 5 : 7,
      );
      const ok = verify(data, await keysOut.read(), pairs ? await valuesOut.read() : undefined);
      const row = { n: `2^${log}`, variant: name, pairs, ms: +ms.toFixed(3), Gkeys: +(n / ms / 1e6).toFixed(2), ok };
      rows.push(row);
      console.log(JSON.stringify(row));
    }
  }
  // Skewed keys (below 2^12: the top two digits are all 0): equal digits everywhere.
  const skewed = data.map((x) => x >>> 20);
  keys.write(skewed);
  if (!overBudget()) {
    const ms = await median(device, 'skewed', () => recordRadixSort(device, keys, undefined, keysOut, undefined), 5);
    const ok = verify(skewed, await keysOut.read());
    const row = {
      n: `2^${log}`,
      variant: 'default shape, keys < 2^12',
      pairs: false,
      ms: +ms.toFixed(3),
      Gkeys: +(n / ms / 1e6).toFixed(2),
      ok,
    };
    rows.push(row);
    console.log(JSON.stringify(row));
  }
  // One pass's three steps alone, for the default shape: where the time goes.
  const shape = multisplitShape(device.caps);
  if (shape) {
    keys.write(data);
    const tiles = Math.ceil(n / (shape.wg * shape.items));
    const m = 256 * tiles;
    const counts = device.createBuffer('u32', m);
    const offsets = device.createBuffer('u32', m);
    const args = { n, shift: 0, tiles };
    const steps: Array<[string, () => void]> = [
      ['count', () => dispatchGroups(device, countKernel(shape), tiles, { keys, counts, ...args })],
      ['scan', () => recordScan(device, counts, offsets, m, true)],
      [
        'rank+scatter',
        () =>
          dispatchGroups(device, scatterKernel(shape, undefined), tiles, {
            keys,
            keysOut,
            vals: values,
            valsOut: valuesOut,
            offsets,
            ...args,
          }),
      ],
    ];
    for (const [step, body] of steps) {
      const ms = await median(device, step, body, 7);
      console.log(JSON.stringify({ n: `2^${log}`, variant: `one pass, ${step} (${JSON.stringify(shape)})`, ms: +ms.toFixed(3) }));
    }
    counts.destroy();
    offsets.destroy();
  }
  for (const b of [keys, keysOut, values, valuesOut]) b.destroy();
}
console.log(`RESULTS ${JSON.stringify(rows)}`);
await device.destroy();
process.exit(0);
