/**
 * Radix sort's onesweep passes against the reduce-then-scan ones on a real GPU:
 * u32 keys and u32/u32 pairs at 2^28 and 2^24, several shapes (keys per invocation,
 * ranking order), each sort recorded back-to-back into outputs allocated once (as the
 * suite and CUB's benchmark call it), GPU timestamps, median of 5 after >= 100 ms of
 * back-to-back warm-up, variants in two interleaved rounds. Then, at 2^28, one pass's
 * parts alone (the up-front histogram; one onesweep pass, keys and pairs), and the
 * correctness of every variant (sorted, same multiset; pairs a stable permutation)
 * after all timing. Run beside the CUB anchor: bash bench/h100/run.sh dev
 */

import { randomU32 } from '@trident/algorithms';
import {
  countKernel,
  dispatchGroups,
  MULTISPLIT_ITEMS,
  MULTISPLIT_PAIR_ITEMS,
  type MultisplitOptions,
  type MultisplitShape,
  multisplitShape,
  recordOnesweepHistogram,
  recordOnesweepPass,
  recordOnesweepPasses,
  recordRadixSort,
} from '@trident/algorithms/internal';
import { createDevice } from 'trident';
import { isSortedPermutation as verifySort } from '../../packages/cli/src/bench/checks.ts';
import { warmedMedian } from '../../packages/cli/src/bench/sustained.ts';

// ONESWEEP_BINDING=<bytes>: a lower storage-binding limit, so that the same n spans more bindings (segments).
const binding = Number(process.env.ONESWEEP_BINDING ?? 0);
const device = await createDevice({
  backend: 'webgpu',
  ...(binding > 0 ? { options: { webgpu: { maxStorageBufferBindingSize: binding } } } : {}),
});
const { limits } = device.caps;
console.log(
  `device ${device.info.adapter}; subgroups ${limits.minSubgroupSize}..${limits.maxSubgroupSize}; ` +
    `workgroup storage ${limits.maxComputeWorkgroupStorageSize}; default shape ${JSON.stringify(multisplitShape(device.caps))}`,
);
type Variant = { name: string; keys?: MultisplitShape; pairs?: MultisplitShape; window?: number };
const variants: Variant[] = [];
const add = (
  name: string,
  options: MultisplitOptions,
  window?: number,
  items = MULTISPLIT_ITEMS,
  pairItems = MULTISPLIT_PAIR_ITEMS,
  wg = 256,
) => {
  const keys = multisplitShape(device.caps, items, wg, options) ?? undefined;
  const pairs = multisplitShape(device.caps, pairItems, wg, options) ?? undefined;
  if (keys || pairs) variants.push({ name, keys, pairs, window });
  else console.log(`(no shape for ${name})`);
};
// 2026-11-23 sweeps (bench/results/tuning/h100-onesweep-2026-11-23.json): the atomic ranking beat
// the barrier one everywhere; look-back windows 1, 2, 8, 16, 32 lost to 4; 8, 10, 16, 20 keys per
// invocation lost to 12 (16 with values); publishing counts before the ranking lost.
// Session 4: the batched ranking (all of a batch's ballots, then its atomic adds, then its shuffles).
// Call 1: batches of 4 won (keys reduce-then-scan 12.48 ms against 13.08 atomic, 12.68 all
// 12 items in one batch; pairs onesweep 18.84 against 19.43 / 19.56); keys at 16 items lost.
// Session 5, call 2 (the generator's branch-free atomics): batched 2 / 3 / 4 / 6 keys 13.01 /
// 12.91 / 12.45 / 12.47 ms reduce-then-scan, pairs onesweep 19.45 / 19.14 / 18.81 / 18.62: unchanged.
// Session 6, call 1 (radixSort's two shapes, then the same kernels writing each tile's sorted
// keys back to its own range): keys reduce-then-scan 12.458 ms against 11.875 with coalesced
// writes, pairs onesweep 18.650 against 17.065; so the scattered writes cost about 0.15 ms a
// pass of 3.1 (keys), and ranking and staging the rest.
// Call 2: the last tile's slots past n ranked as digit 255 ('max-digit', now the only way:
// one ballot fewer per item, no branch) against the guarded ranking: keys reduce-then-scan
// 12.295 / 12.439 ms, pairs onesweep 18.212 / 18.511 (2^24: 0.901 / 0.910, 1.288 / 1.314);
// 16 keys per invocation (20 with values) 16.03 / 29.90; a probe without the eight bit
// ballots of each match ran slower (15.23 keys), its colliding ranks costing more than the
// ballots saved, so it measured nothing and was dropped
// (bench/results/tuning/h100-radix-tail-2026-11-23.json).
// Call 3: the match by a workgroup atomic OR of each lane's bit into its subgroup's word for
// the digit (read back, cleared by the run's lowest lane) instead of eight ballots: keys
// 18.52 ms against 12.10, pairs 34.22 against 18.51 (same file); removed.
// Call 4: tiles of 512 x 12, 512 x 8, 128 x 12 keys lost (13.22 / 16.38 / 15.66 ms against
// 256 x 12's 12.10), 128 x 16 pairs too (21.55); pairs by reduce-then-scan passes won again
// (18.00 against onesweep's 18.49): sortShape now uses them for pairs too.
// Session 7 (23:20 UTC, tuning/h100-radix-count-tiles-2026-11-23.json): the count step storing
// whole sectors (2, 4, 8 consecutive tiles per workgroup, each digit's counts side by side)
// against one tile per workgroup: count step 0.596 / 0.620 / 0.672 ms against 0.556, keys 2^28
// 12.215 / 12.392 / 12.604 against 12.092 (the tiles in sequence cost more than the scattered
// stores): dropped.
// radixSort's shapes (sortShape): values staged after the keys (only pairs see it).
const rts = { passes: 'reduce-then-scan', rank: 'batched', rankBatch: 4, offsets: 'early', valueStaging: 'shared' } as const;
add('reduce-then-scan batched 4', rts);
// Call 8 (tuning/h100-radix-session8-2026-11-24.json): keys and values per invocation again, on
// the code after IndexBounds: keys 10 / 12 / 14 items 12.09 / 10.91 / 10.16 ms, pairs 12 / 14 /
// 16 / 18 items 20.63 / 19.17 / 18.01 / 17.08. Call 9: around the new best: keys 14 items 10.11 ms
// (15 / 16: 15.13 / 14.66, a cliff), pairs 18 items 16.98; radixSort takes 14 / 18 items.
if (process.env.ONESWEEP_PAIRS) {
  // Session 8, call 13: the pairs shape around 18 items.
  add('reduce-then-scan batched 4, late value loads', { ...rts, valueLoads: 'late' });
  add('reduce-then-scan batched 6', { ...rts, rankBatch: 6 });
  add('reduce-then-scan batched 3', { ...rts, rankBatch: 3 });
  add('reduce-then-scan batched 4, late offsets', { ...rts, offsets: 'late' });
}
if (process.env.ONESWEEP_WG) {
  // Session 8, call 14: 128-wide tiles (half the workgroup memory, twice the workgroups an SM may
  // hold): keys 13.51 / 12.64 / 14.28 ms against 10.11, pairs 21.17 / 26.10 / 24.49 against 17.06.
  add('reduce-then-scan batched 4, 128 wide, 14 keys / 18 pairs', rts, undefined, 14, 18, 128);
  add('reduce-then-scan batched 4, 128 wide, 16 keys / 22 pairs', rts, undefined, 16, 22, 128);
  add('reduce-then-scan batched 4, 128 wide, 12 keys / 26 pairs', rts, undefined, 12, 26, 128);
}
if (process.env.ONESWEEP_ITEMS) {
  add('reduce-then-scan batched 4, 14 keys / 18 pairs', rts, undefined, 14, 18);
  add('reduce-then-scan batched 4, 15 keys / 17 pairs', rts, undefined, 15, 17);
  add('reduce-then-scan batched 4, 16 keys / 18 pairs', rts, undefined, 16, 18);
  add('reduce-then-scan batched 6, 13 keys / 18 pairs', { ...rts, rankBatch: 6 }, undefined, 13, 18);
  add('reduce-then-scan batched 7, 14 keys / 18 pairs', { ...rts, rankBatch: 7 }, undefined, 14, 18);
}
if (process.env.ONESWEEP_STAGING) {
  // Session 9: values staged through the keys' workgroup array once the keys are out (half the
  // workgroup memory of the pairs tile, so more items fit); pairs only (keys sort as before).
  const pairsOnly = (name: string, options: MultisplitOptions, pairItems: number) => {
    const pairs = multisplitShape(device.caps, pairItems, 256, options);
    if (pairs) variants.push({ name, pairs });
    else console.log(`(no shape for ${name})`);
  };
  // Call 1: 18 / 22 / 26 items 16.829 / 15.659 / 14.856 ms (separate staging at 18: 16.870); late
  // value loads 17.433 / 16.097 at 18 / 22.
  // Call 2: 26 / 28 / 30 / 32 / 36 items 14.967 / 14.561 / 14.226 / 14.125 / 13.904 ms (separate
  // staging at 18: 16.974); 2^24 1.034 / 1.029 / 1.006 / 1.005 / 1.010 (1.131).
  // Call 3: 34 / 36 items 13.909 / 13.827 ms, batches of 6 at 36 13.986; keys alone at 18 / 22 / 26 /
  // 30 / 36 items 13.87 / 13.07 / 12.39 / 11.85 / 11.21 against 14 items' 10.01.
  // Calls 7-8: the suites' onesweep diagnostic (36 pairs, batches of 6) 13.77 / 13.76 ms against
  // radixSort's 14.04 / 14.04. Call 9: onesweep passes for the 36-item pairs tile, batches of 4 / 6:
  // 13.705 / 13.686 ms against reduce-then-scan's 13.926 at 2^28, 1.077 / 1.079 against 1.029 at 2^24;
  // 30 items 14.426 / 1.099.
  const onesweep = { passes: 'onesweep', rank: 'batched', valueStaging: 'shared' } as const;
  for (const batch of [4, 6])
    pairsOnly(`onesweep batched ${batch} window 4, shared staging, 36 pairs`, { ...onesweep, rankBatch: batch }, 36);
  pairsOnly('onesweep batched 4 window 4, shared staging, 30 pairs', { ...onesweep, rankBatch: 4 }, 30);
}
if (process.env.ONESWEEP_OS)
  add(
    'onesweep batched 4 window 4, 14 keys / 36 pairs',
    { passes: 'onesweep', rank: 'batched', rankBatch: 4, valueStaging: 'shared' },
    4,
    14,
    36,
  );
if (process.env.ONESWEEP_LARGE) {
  // Arrays past one binding: fewer keys per invocation (fewer segment switches in flight) and onesweep's passes.
  add('reduce-then-scan batched 4, 12 keys / 30 pairs', rts, undefined, 12, 30);
  add('reduce-then-scan batched 4, 10 keys / 26 pairs', rts, undefined, 10, 26);
  const onesweep = { passes: 'onesweep', rank: 'batched', rankBatch: 4, valueStaging: 'shared' } as const;
  add('onesweep batched 4 window 4, 14 keys / 36 pairs', onesweep, 4, 14, 36);
  add('onesweep batched 4 window 4, 12 keys / 30 pairs', onesweep, 4, 12, 30);
}
if (process.env.ONESWEEP_OLD_VARIANTS) {
  add('reduce-then-scan batched 4, late offsets', { ...rts, offsets: 'late' });
  add('onesweep batched 6 window 4', { passes: 'onesweep', rank: 'batched', rankBatch: 6 }, 4);
}
// Session 7, call 2 (23:32 UTC, same file): the count step's histogram rows (one per subgroup, 8
// on the H100) shared by 2, 4, 8 subgroups: count step 0.5667 / 0.5563 / 0.5711 ms (4 / 2 / 1 rows)
// against 0.5523, keys 2^28 12.109 / 12.117 / 12.135 against 12.085: no gain (clearing and summing
// the rows is not the count's cost either); dropped.

const sizes = (process.argv.slice(2).map(Number).filter(Boolean).length ? process.argv.slice(2).map(Number) : [28, 24]) as number[];
const rows: Record<string, unknown>[] = [];
const began = performance.now();
const BUDGET_S = Number(process.env.ONESWEEP_BUDGET_S ?? 240);
const overBudget = () => (performance.now() - began) / 1000 > BUDGET_S;
const elapsed = () => `${((performance.now() - began) / 1000).toFixed(1)} s`;
for (const log of sizes) {
  const n = 2 ** log;
  const data = randomU32(n, 11 + log);
  const keys = device.createBuffer('u32', data);
  const keysOut = device.createBuffer('u32', n);
  const iota = new Uint32Array(n);
  for (let i = 0; i < n; i++) iota[i] = i;
  const values = device.createBuffer('u32', iota);
  const valuesOut = device.createBuffer('u32', n);
  const sort = (shape: MultisplitShape, pairs: boolean, window?: number) => () => {
    if (shape.passes === 'onesweep')
      recordOnesweepPasses(device, shape, keys, pairs ? values : undefined, keysOut, pairs ? valuesOut : undefined, n, {
        window,
      });
    else recordRadixSort(device, keys, pairs ? values : undefined, keysOut, pairs ? valuesOut : undefined, shape);
  };
  const times = new Map<string, number[]>();
  for (let round = 0; round < 2; round++) {
    for (const v of variants) {
      for (const pairs of [false, true]) {
        const shape = pairs ? v.pairs : v.keys;
        if (!shape || overBudget()) continue;
        const key = `${v.name}${pairs ? ' pairs' : ' keys'}`;
        times.set(key, [...(times.get(key) ?? []), await warmedMedian(device, key, sort(shape, pairs, v.window), { batch: 4 })]);
      }
    }
    console.log(`2^${log} round ${round} done (${elapsed()})`);
  }
  // The count step alone at the largest size, per reduce-then-scan variant (keys).
  if (log >= 28) {
    for (const v of variants) {
      const shape = v.keys;
      if (shape?.passes !== 'reduce-then-scan' || overBudget()) continue;
      const tiles = Math.ceil(n / (shape.wg * shape.items));
      const counts = device.createBuffer('u32', 256 * tiles);
      const ms = await warmedMedian(
        device,
        `${v.name} count`,
        () => dispatchGroups(device, countKernel(shape), tiles, { keys, counts, n, shift: 0, tiles, firstTile: 0, endTile: tiles }),
        { batch: 4 },
      );
      counts.destroy();
      const row = { n: `2^${log}`, variant: `${v.name}: count step`, ms: +ms.toFixed(4) };
      rows.push(row);
      console.log(`${JSON.stringify(row)} (${elapsed()})`);
    }
  }
  // One pass's parts alone at the largest size: the histogram, one onesweep pass (keys, pairs).
  if (log >= 28) {
    for (const v of variants) {
      if (v.keys?.passes !== 'onesweep' || overBudget()) continue;
      // (PROBE variants included: their pass alone, with the same histogram.)
      const part: Record<string, number> = {};
      let starts = recordOnesweepHistogram(device, v.keys, keys, n);
      part.histogram = +(
        await warmedMedian(
          device,
          `${v.name} histogram`,
          () => {
            starts = recordOnesweepHistogram(device, v.keys as MultisplitShape, keys, n);
          },
          { batch: 4 },
        )
      ).toFixed(3);
      part['pass keys'] = +(
        await warmedMedian(
          device,
          `${v.name} pass`,
          () =>
            recordOnesweepPass(device, v.keys as MultisplitShape, starts, { keysIn: keys, keysOut }, n, 0, {
              window: v.window,
            }),
          { batch: 4 },
        )
      ).toFixed(3);
      if (v.pairs) {
        const ps = v.pairs;
        const pstarts = recordOnesweepHistogram(device, ps, keys, n);
        part['pass pairs'] = +(
          await warmedMedian(
            device,
            `${v.name} pass pairs`,
            () =>
              recordOnesweepPass(device, ps, pstarts, { keysIn: keys, keysOut, valsIn: values, valsOut: valuesOut }, n, 0, {
                window: v.window,
              }),
            { batch: 4 },
          )
        ).toFixed(3);
      }
      const row = { n: `2^${log}`, variant: `${v.name}: parts`, ...part };
      rows.push(row);
      console.log(`${JSON.stringify(row)} (${elapsed()})`);
    }
  }
  for (const v of variants) {
    for (const pairs of [false, true]) {
      const shape = pairs ? v.pairs : v.keys;
      const key = `${v.name}${pairs ? ' pairs' : ' keys'}`;
      const ms = times.get(key);
      if (!shape || !ms) continue;
      let ok: boolean | 'unchecked' | 'probe (not sorted)' = 'unchecked';
      if (v.name.startsWith('PROBE')) ok = 'probe (not sorted)';
      else if (log < 28 || !pairs || v.name.startsWith('onesweep') || v.name.includes('shared staging')) {
        sort(shape, pairs, v.window)();
        ok = verifySort(data, await keysOut.read(), pairs ? await valuesOut.read() : undefined);
      }
      const best = Math.min(...ms);
      const row = {
        n: `2^${log}`,
        variant: key,
        rounds: ms.map((x) => +x.toFixed(3)),
        ms: +best.toFixed(3),
        Gkeys: +(n / best / 1e6).toFixed(2),
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
