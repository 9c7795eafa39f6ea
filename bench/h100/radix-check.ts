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
import {
  countKernel,
  type MultisplitOptions,
  type MultisplitShape,
  multisplitShape,
  scatterKernel,
} from '../../packages/algorithms/src/radix-multisplit.ts';
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
const sizes = logs.length > 0 ? logs : [28, 24];
type Variant = { name: string; shape: MultisplitShape; pairs: boolean; steps: boolean };
const variants: Variant[] = [];
// [keys per invocation, workgroup size, ranking, count, pairs at 2^28 too, time the steps alone at 2^28]
const sweep: Array<[number, number, MultisplitOptions['ranking'], MultisplitOptions['count'], boolean, boolean]> = [
  [12, 256, 'rows', 'ballot', true, true],
  [12, 256, 'registers', 'registers', true, true],
  [16, 256, 'registers', 'registers', true, true],
  [8, 256, 'registers', 'registers', false, true],
  [24, 256, 'registers', 'registers', false, false],
  [16, 256, 'rows', 'ballot', false, false],
  [12, 256, 'rows', 'registers', false, false],
  [12, 256, 'rows', 'atomic', false, true],
];
for (const [items, wg, ranking, count, pairs, steps] of sweep) {
  const shape = multisplitShape(device.caps, items, wg, { ranking, count });
  if (shape) variants.push({ name: `wg=${shape.wg} items=${shape.items} rank=${ranking} count=${count}`, shape, pairs, steps });
  else console.log(`(no shape for items=${items} wg=${wg} ${ranking}/${count})`);
}

const rows: Record<string, unknown>[] = [];
const began = performance.now();
/** Stops the sweep (not the run) past this many seconds, so the anchor in the same call still runs. */
const BUDGET_S = Number(process.env.RADIX_BUDGET_S ?? 150);
const overBudget = (extra = 0) => (performance.now() - began) / 1000 > BUDGET_S + extra;
/** Further seconds for the steps alone. */
const STEPS_BUDGET_S = Number(process.env.RADIX_STEPS_BUDGET_S ?? 30);
const elapsed = () => `${((performance.now() - began) / 1000).toFixed(1)} s`;
for (const log of sizes) {
  const n = 2 ** log;
  const data = randomU32(n, 11 + log);
  const keys = device.createBuffer('u32', data);
  const keysOut = device.createBuffer('u32', n);
  const index = new Uint32Array(n);
  for (let i = 0; i < n; i++) index[i] = i;
  const values = device.createBuffer('u32', index);
  const valuesOut = device.createBuffer('u32', n);
  for (const { name, shape, pairs: pairsToo } of variants) {
    // Pairs at large n for the marked shapes only (host checks cost seconds).
    for (const pairs of log < 26 || pairsToo ? [false, true] : [false]) {
      if (overBudget()) break;
      const ms = await median(
        device,
        name,
        () => recordRadixSort(device, keys, pairs ? values : undefined, keysOut, pairs ? valuesOut : undefined, shape),
        5,
      );
      const ok = verify(data, await keysOut.read(), pairs ? await valuesOut.read() : undefined);
      const row = { n: `2^${log}`, variant: name, pairs, ms: +ms.toFixed(3), Gkeys: +(n / ms / 1e6).toFixed(2), ok };
      rows.push(row);
      console.log(`${JSON.stringify(row)} (${elapsed()})`);
    }
  }
  // One pass's three steps alone, each timed over several runs: where the time goes.
  if (log >= Number(process.env.RADIX_STEPS_LOG ?? 28)) {
    for (const { name, shape, steps: wanted } of variants) {
      if (!wanted || overBudget(STEPS_BUDGET_S)) continue;
      const tiles = Math.ceil(n / (shape.wg * shape.items));
      const m = 256 * tiles;
      const counts = device.createBuffer('u32', m);
      const offsets = device.createBuffer('u32', m);
      const args = { n, shift: 0, tiles };
      // In dependency order (count, scan, scatter), so the scatter's offsets are real ones.
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
        [
          'rank+scatter pairs',
          () =>
            dispatchGroups(device, scatterKernel(shape, 'u32'), tiles, {
              keys,
              keysOut,
              vals: values,
              valsOut: valuesOut,
              offsets,
              ...args,
            }),
        ],
      ];
      const step: Record<string, number> = {};
      for (const [label, body] of steps) step[label] = +(await median(device, label, body, 7)).toFixed(3);
      const row = { n: `2^${log}`, variant: `one pass: ${name}`, ...step };
      rows.push(row);
      console.log(`${JSON.stringify(row)} (${elapsed()})`);
      counts.destroy();
      offsets.destroy();
    }
  }
  for (const b of [keys, keysOut, values, valuesOut]) b.destroy();
}
console.log(`RESULTS ${JSON.stringify(rows)}`);
await device.destroy();
process.exit(0);
