/**
 * Radix sort on a real GPU: the multisplit formulation's shapes (workgroup size ×
 * keys per invocation, count step), keys and pairs, at 2^28 and 2^24 u32 keys, plus
 * skewed keys (equal digits in a subgroup) for the two count steps. Timing protocol:
 * figures taken right after host-side pauses varied up to 4x for one kernel on the
 * H100 (clocks ramping up, presumably), so every measurement follows at least
 * ~100 ms of back-to-back warm-up runs, variants are timed in two interleaved
 * rounds (they agreed within 0.2% at 2^28), and all host-side correctness checks
 * come after all timing (sorted, same multiset; pairs: a stable permutation). Bundle:
 *   esbuild --bundle --conditions=trident-source … --alias:trident=./bench/h100/trident-webgpu-only.mjs bench/h100/radix-check.ts
 * and run beside the CUB anchor:  node .gpu/radix-check.mjs [log2 sizes…]
 */

import { randomU32 } from '@trident/algorithms';
import {
  countKernel,
  dispatchGroups,
  MULTISPLIT_ITEMS,
  MULTISPLIT_PAIR_ITEMS,
  type MultisplitCount,
  type MultisplitShape,
  type MultisplitValueLoads,
  multisplitShape,
  recordRadixSort,
  recordScan,
  scatterKernel,
} from '@trident/algorithms/internal';
import { createDevice } from 'trident';
import { isSortedPermutation as verifySort } from '../../packages/cli/src/bench/checks.ts';
import { warmedMedian } from '../../packages/cli/src/bench/sustained.ts';

const device = await createDevice({ backend: 'webgpu' });
const { limits } = device.caps;
console.log(
  `device ${device.info.adapter}; timer ${device.caps.timerSource}; subgroups ${limits.minSubgroupSize}..${limits.maxSubgroupSize}; ` +
    `workgroup storage ${limits.maxComputeWorkgroupStorageSize}; default shape ${JSON.stringify(multisplitShape(device.caps))}`,
);
const logs = process.argv.slice(2).map(Number);
const sizes = logs.length > 0 ? logs : [28, 24];
type Variant = { name: string; shape: MultisplitShape; pairs: boolean; steps: boolean; checkLarge: boolean };
const variants: Variant[] = [];
// [keys per invocation, workgroup size, count step, value loads, time pairs too, time the steps alone, check at 2^28 too]
const sweep: Array<[number, number, MultisplitCount, MultisplitValueLoads, boolean, boolean, boolean]> = [
  [MULTISPLIT_ITEMS, 256, 'ballot', 'late', true, true, true],
  [MULTISPLIT_PAIR_ITEMS, 256, 'ballot', 'late', true, false, false],
  [MULTISPLIT_ITEMS, 256, 'ballot', 'early', true, true, false],
  [MULTISPLIT_PAIR_ITEMS, 256, 'ballot', 'early', true, false, false],
  [12, 256, 'atomic', 'late', true, true, true],
  [16, 256, 'atomic', 'late', true, false, false],
  [8, 256, 'atomic', 'late', false, false, false],
];
for (const [items, wg, count, valueLoads, pairs, steps, checkLarge] of sweep) {
  const shape = multisplitShape(device.caps, items, wg, { count, valueLoads });
  const name = `wg=${shape?.wg} items=${items} count=${count}${valueLoads === 'early' ? ' early values' : ''}`;
  if (shape) variants.push({ name, shape, pairs, steps, checkLarge });
  else console.log(`(no shape for ${name})`);
}

const rows: Record<string, unknown>[] = [];
const began = performance.now();
/** Stops the sweep (not the run) past this many seconds, so the anchor in the same call still runs. */
const BUDGET_S = Number(process.env.RADIX_BUDGET_S ?? 150);
const overBudget = () => (performance.now() - began) / 1000 > BUDGET_S;
const elapsed = () => `${((performance.now() - began) / 1000).toFixed(1)} s`;
const ROUNDS = 2;
for (const log of sizes) {
  const n = 2 ** log;
  const data = randomU32(n, 11 + log);
  const keys = device.createBuffer('u32', data);
  const keysOut = device.createBuffer('u32', n);
  const index = new Uint32Array(n);
  for (let i = 0; i < n; i++) index[i] = i;
  const values = device.createBuffer('u32', index);
  const valuesOut = device.createBuffer('u32', n);
  const sort = (shape: MultisplitShape, pairs: boolean) => () =>
    recordRadixSort(device, keys, pairs ? values : undefined, keysOut, pairs ? valuesOut : undefined, shape);
  // Timing: interleaved rounds over all variants.
  const times = new Map<string, number[]>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const { name, shape, pairs: pairsToo } of variants) {
      for (const pairs of pairsToo ? [false, true] : [false]) {
        if (overBudget()) break;
        const key = `${name}${pairs ? ' pairs' : ''}`;
        const ms = await warmedMedian(device, key, sort(shape, pairs));
        times.set(key, [...(times.get(key) ?? []), ms]);
      }
    }
    console.log(`2^${log} timing round ${round} done (${elapsed()})`);
  }
  // One pass's steps alone, in dependency order (count, scan, scatter) so the scatter's offsets are real.
  for (const { name, shape, steps: wanted } of variants) {
    if (!wanted || log < 28 || overBudget()) continue;
    const tiles = Math.ceil(n / (shape.wg * shape.items));
    const m = 256 * tiles;
    const counts = device.createBuffer('u32', m);
    const offsets = device.createBuffer('u32', m);
    const args = { n, shift: 0, tiles, firstTile: 0, endTile: tiles };
    const scatter = (vt: 'u32' | undefined) => () =>
      dispatchGroups(device, scatterKernel(shape, vt), tiles, { keys, keysOut, vals: values, valsOut: valuesOut, offsets, ...args });
    const steps: Array<[string, () => void]> = [
      ['count', () => dispatchGroups(device, countKernel(shape), tiles, { keys, counts, ...args })],
      ['scan', () => recordScan(device, counts, offsets, m, true)],
      ['rank+scatter', scatter(undefined)],
      ['rank+scatter pairs', scatter('u32')],
    ];
    const step: Record<string, number> = {};
    for (const [label, body] of steps) step[label] = +(await warmedMedian(device, label, body, { reps: 7 })).toFixed(3);
    const row = { n: `2^${log}`, variant: `one pass: ${name}`, ...step };
    rows.push(row);
    console.log(`${JSON.stringify(row)} (${elapsed()})`);
    counts.destroy();
    offsets.destroy();
  }
  // Correctness after all timing: every variant at small n, the marked ones at large n.
  for (const { name, shape, pairs: pairsToo, checkLarge } of variants) {
    for (const pairs of pairsToo ? [false, true] : [false]) {
      const key = `${name}${pairs ? ' pairs' : ''}`;
      const ms = times.get(key);
      if (!ms) continue;
      let ok: boolean | 'unchecked' = 'unchecked';
      if (log < 26 || (checkLarge && !pairs && !overBudget())) {
        sort(shape, pairs)();
        ok = verifySort(data, await keysOut.read(), pairs ? await valuesOut.read() : undefined);
      }
      const best = Math.min(...ms);
      const row = {
        n: `2^${log}`,
        variant: name,
        pairs,
        rounds: ms.map((x) => +x.toFixed(3)),
        ms: +best.toFixed(3),
        Gkeys: +(n / best / 1e6).toFixed(2),
        ok,
      };
      rows.push(row);
      console.log(`${JSON.stringify(row)} (${elapsed()})`);
    }
  }
  // Skewed keys, where equal digits meet in a subgroup: keys < 2^16 (two passes see one
  // digit) and all keys equal; the count steps differ most here.
  const skewed: Array<[string, Uint32Array]> = [
    ['keys < 2^16', data.map((x) => x >>> 16)],
    ['all equal', new Uint32Array(n).fill(0x12345678)],
  ];
  for (const [pattern, input] of skewed) {
    keys.write(input);
    for (const { name, shape } of variants) {
      if (overBudget() || shape.items !== MULTISPLIT_ITEMS || shape.valueLoads !== 'late') continue;
      const ms = await warmedMedian(device, `${name} ${pattern}`, sort(shape, false));
      let ok: boolean | 'unchecked' = 'unchecked';
      if (log < 26) {
        sort(shape, false)();
        ok = verifySort(input, await keysOut.read());
      }
      const row = {
        n: `2^${log}`,
        variant: `${name}, ${pattern}`,
        pairs: false,
        ms: +ms.toFixed(3),
        Gkeys: +(n / ms / 1e6).toFixed(2),
        ok,
      };
      rows.push(row);
      console.log(`${JSON.stringify(row)} (${elapsed()})`);
    }
  }
  for (const b of [keys, keysOut, values, valuesOut]) b.destroy();
}
console.log(`RESULTS ${JSON.stringify(rows)}`);
await device.destroy();
process.exit(0);
