/**
 * Radix sort's two formulations, each forced where the device can run it: the 8-bit
 * ballot multisplit (devices with subgroups whose counter rows fit) and the 4-bit
 * packed-count one (every workgroup device). Inputs span many tiles and stress what
 * each pass must keep: stability across tiles and subgroups, runs of equal digits,
 * one digit everywhere, and the i32 / f32 order-preserving transforms at extremes.
 * Plus the formulation choice from caps, on made-up caps.
 */
import { sortReference } from '@trident/algorithms';
import {
  KEY_RANK_BATCH,
  MULTISPLIT_ITEMS,
  MULTISPLIT_PAIR_ITEMS,
  type MultisplitShape,
  multisplitShape,
  PAIR_RANK_BATCH,
  recordOnesweepPasses,
  recordRadixSort,
  sortShape,
} from '@trident/algorithms/internal';
import type { Buffer, Device, DeviceCaps, Feature } from 'trident';
import { expect, it } from 'vitest';
import { expectBitsEqual, isSlow, refusedWithout } from './alg-helpers.ts';
import { describeEachBackend, randomU32 } from './harness.ts';

type Keys = Uint32Array | Int32Array | Float32Array;

/** The formulations `device` can run: the multisplit where its caps give a shape, packed always. */
function formulationsOf(device: Device): Array<[string, MultisplitShape | null]> {
  const shape = multisplitShape(device.caps);
  const out: Array<[string, MultisplitShape | null]> = [['packed', null]];
  if (shape) out.unshift([`multisplit ${shape.passes} wg=${shape.wg}`, shape]);
  // A small tile (more tiles and subgroups per input) where the device allows one.
  const small = multisplitShape(device.caps, 3, 64);
  if (small) out.push([`multisplit ${small.passes} wg=${small.wg} items=3`, small]);
  // The non-default choices: the reduce-then-scan passes with the ballot-aggregated
  // count step; values loaded after the ranking, with the other ranking order.
  const ballot = multisplitShape(device.caps, 4, 128, { count: 'ballot', passes: 'reduce-then-scan' });
  if (ballot) out.push([`multisplit reduce-then-scan ballot count wg=${ballot.wg} items=4`, ballot]);
  const rank = shape?.rank === 'atomic' ? 'barrier' : 'atomic';
  // (values staged through the keys' workgroup array after the keys, too.)
  const late = multisplitShape(device.caps, 5, 128, { valueLoads: 'late', valueStaging: 'shared', rank });
  if (late) out.push([`multisplit ${late.passes} late values staged after the keys, ${rank} ranking wg=${late.wg} items=5`, late]);
  // Reduce-then-scan passes whose scatter loads its offsets before the keys.
  const early = multisplitShape(device.caps, 3, 64, { passes: 'reduce-then-scan', offsets: 'early' });
  if (early) out.push([`multisplit reduce-then-scan early offsets wg=${early.wg} items=3`, early]);
  return out;
}

/** Sorts keysData (with values 0..n-1 when `pairs`) by one formulation and checks against the reference. */
async function check(device: Device, shape: MultisplitShape | null, keysData: Keys, what: string, pairs: boolean): Promise<void> {
  const n = keysData.length;
  const dtype = keysData instanceof Float32Array ? 'f32' : keysData instanceof Int32Array ? 'i32' : 'u32';
  const keys = device.createBuffer(dtype, keysData as never) as Buffer;
  const keysOut = device.createBuffer(dtype, n) as Buffer;
  const valuesData = Uint32Array.from({ length: n }, (_, i) => i);
  const values = pairs ? device.createBuffer('u32', valuesData) : undefined;
  const valuesOut = pairs ? device.createBuffer('u32', n) : undefined;
  recordRadixSort(device, keys, values, keysOut, valuesOut, shape);
  const want = sortReference(keysData, pairs ? valuesData : undefined);
  expectBitsEqual(await keysOut.read(), want.keys, `${what} keys`);
  if (valuesOut) expectBitsEqual(await valuesOut.read(), want.values as Uint32Array, `${what} values (stable)`);
  for (const b of [keys, keysOut, values, valuesOut]) b?.destroy();
}

/**
 * The workgroup passes tested here are refused by name where the device has no workgroups
 * (radixSort runs the gather formulation there: test/alg-sort.test.ts); true if so.
 */
function refusesPasses(device: Device): Promise<boolean> {
  const one = device.createBuffer('u32', 1);
  return refusedWithout(device, 'workgroup', () => recordRadixSort(device, one, undefined, device.createBuffer('u32', 1), undefined, null));
}

describeEachBackend('radix sort formulations', (ctx) => {
  it('many tiles: random, few distinct keys (stability), one digit per pass, all equal', async () => {
    const device = ctx.device;
    if (await refusesPasses(device)) return;
    const n = isSlow(device) ? 6151 : 40_009;
    const raw = randomU32(n, 17);
    const patterns: Record<string, Uint32Array> = {
      random: raw,
      // Few distinct keys spread over all four bytes: long runs of equal digits in every pass.
      fewDistinct: raw.map((x) => [0x01020304, 0xff00ff00, 0x00000000, 0xffffffff, 0x80808080][x % 5] as number),
      // Only the third byte varies: three passes see one digit, one sees 256.
      oneByte: raw.map((x) => (x & 0xff) << 16),
      equal: new Uint32Array(n).fill(0xdeadbeef),
    };
    for (const [label, shape] of formulationsOf(device)) {
      for (const [name, data] of Object.entries(patterns)) await check(device, shape, data, `${ctx.kind} ${label} ${name} n=${n}`, true);
    }
    // Software GPUs spend most of this compiling the formulations' unrolled kernels (SwiftShader:
    // about 24 s alone on a 2-vCPU VM, more beside the other test files): a wider limit than the
    // suite's 60 s.
  }, 180_000);

  it('the batched ranking, a last batch shorter than the others (6 items in batches of 4), both pass kinds', async () => {
    const device = ctx.device;
    // Not a multiple of any tile: the last tile's slots past n rank as digit 255 beside
    // the real keys of digit 255 (0xffffffff here) and must stay out of the output.
    const n = isSlow(device) ? 6151 : 40_009;
    const raw = randomU32(n, 29);
    const fewDistinct = raw.map((x) => [0x01020304, 0xff00ff00, 0x00000000, 0xffffffff][x % 4] as number);
    for (const passes of ['reduce-then-scan', 'onesweep'] as const) {
      const shape = multisplitShape(device.caps, 6, 128, { rank: 'batched', rankBatch: 4, passes });
      if (!shape) {
        // Only where the device runs no multisplit of this pass kind at all (e.g. the CPU's width-1 subgroups).
        expect(multisplitShape(device.caps, 6, 128, { passes })).toBeUndefined();
        continue;
      }
      for (const [name, data] of Object.entries({ random: raw, fewDistinct }))
        await check(device, shape, data, `${ctx.kind} ${passes} batched ${name} n=${n}`, true);
    }
  });

  it('i32 and f32 extremes over many tiles keep the total order (-0 before +0, NaN last) and stability', async () => {
    const device = ctx.device;
    if (await refusesPasses(device)) return;
    const n = isSlow(device) ? 3001 : 20_011;
    const ints = [0, -0x80000000, 0x7fffffff, -1, 1, -2, 2];
    const i32 = Int32Array.from({ length: n }, (_, i) => ints[(i * 7919) % ints.length] as number);
    const bitsList = [0x80000000, 0, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 0x7f800001, 1, 0x80000001, 0x3f800000, 0xbf800000];
    const fbits = Uint32Array.from({ length: n }, (_, i) => bitsList[(i * 104729) % bitsList.length] as number);
    const f32 = new Float32Array(fbits.buffer);
    for (const [label, shape] of formulationsOf(device)) {
      await check(device, shape, i32, `${ctx.kind} ${label} i32 extremes n=${n}`, true);
      await check(device, shape, f32, `${ctx.kind} ${label} f32 extremes n=${n}`, true);
    }
  });

  it('onesweep without trusting any published count (the no-forward-progress fallback) sorts the same', async () => {
    const device = ctx.device;
    const shape = multisplitShape(device.caps, 3, 64, { passes: 'onesweep' });
    if (!shape) {
      // Only where the device runs no multisplit at all (e.g. the CPU's width-1 subgroups).
      expect(multisplitShape(device.caps, 3, 64)).toBeUndefined();
      return;
    }
    const tile = shape.wg * shape.items;
    // A dozen tiles: every tile counts each digit of every earlier tile from the keys.
    const n = 12 * tile + 5;
    const raw = randomU32(n, 23);
    for (const [name, data] of Object.entries({ random: raw, fewDistinct: raw.map((x) => (x % 3) * 0x01010101) })) {
      const keys = device.createBuffer('u32', data);
      const values = device.createBuffer(
        'u32',
        Uint32Array.from({ length: n }, (_, i) => i),
      );
      const keysOut = device.createBuffer('u32', n);
      const valuesOut = device.createBuffer('u32', n);
      recordOnesweepPasses(device, shape, keys, values, keysOut, valuesOut, n, { forceFallback: true });
      const want = sortReference(
        data,
        Uint32Array.from({ length: n }, (_, i) => i),
      );
      expectBitsEqual(await keysOut.read(), want.keys, `${ctx.kind} onesweep fallback ${name} keys`);
      expectBitsEqual(await valuesOut.read(), want.values as Uint32Array, `${ctx.kind} onesweep fallback ${name} values`);
      for (const b of [keys, values, keysOut, valuesOut]) b.destroy();
    }
  });

  it('partial last tiles: sizes just around a tile, for the keys and the pairs default shapes', async () => {
    const device = ctx.device;
    // radixSort's own shapes (sortShape: the batched ranking, keys and pairs).
    for (const pairs of [false, true]) {
      const shape = sortShape(device.caps, pairs);
      if (!shape) {
        // Only where the device runs no multisplit at all: radixSort then takes the 4-bit passes.
        expect(multisplitShape(device.caps)).toBeUndefined();
        continue;
      }
      const tile = shape.wg * shape.items;
      for (const n of [tile - 1, tile, tile + 1, 2 * tile + shape.wg + 3]) {
        await check(device, shape, randomU32(n, n), `${ctx.kind} multisplit n=${n} (tile ${tile})`, pairs);
      }
    }
  });
});

/** Caps of a made-up device: the features given, workgroup memory and subgroup sizes as stated. */
function caps(features: Feature[], storage: number, minSubgroup: number, maxSubgroup: number, maxInvocations = 1024): DeviceCaps {
  return {
    features: new Set(features),
    timerSource: 'wall',
    preferredWorkgroupSize: 256,
    concurrency: 1,
    dispatchCostMicros: 10,
    limits: {
      maxBufferElements: 2 ** 28,
      maxStorageBufferBindingSize: 2 ** 30,
      maxBuffersPerKernel: 8,
      maxComputeInvocationsPerWorkgroup: maxInvocations,
      maxComputeWorkgroupStorageSize: storage,
      maxComputeWorkgroupsPerDimension: 65535,
      minSubgroupSize: minSubgroup,
      maxSubgroupSize: maxSubgroup,
      maxTotalBufferBytes: 0,
      maxExactAtomicCount: 2 ** 32 - 1,
    },
  };
}

it('radix sort picks the multisplit from caps: subgroups, and counter rows that fit', () => {
  const all: Feature[] = ['gather', 'scatter', 'workgroup', 'subgroup', 'atomic', 'atomic-other'];
  // A GPU with 32-wide subgroups and 48 KiB: 256-wide workgroups, 8 counter rows, 1 mask word.
  expect(multisplitShape(caps(all, 49152, 32, 32))).toEqual({
    wg: 256,
    items: MULTISPLIT_ITEMS,
    rows: 8,
    words: 1,
    count: 'atomic',
    offsets: 'late',
    valueLoads: 'early',
    valueStaging: 'separate',
    passes: 'onesweep',
    rank: 'atomic',
    rankBatch: MULTISPLIT_ITEMS,
  });
  // The pairs tile (36 keys and values per invocation, the values staged after the keys in one
  // workgroup array) still fits 48 KiB at 256 invocations.
  expect(multisplitShape(caps(all, 49152, 32, 32), MULTISPLIT_PAIR_ITEMS, 256, { valueStaging: 'shared' })).toEqual({
    wg: 256,
    items: MULTISPLIT_PAIR_ITEMS,
    rows: 8,
    words: 1,
    count: 'atomic',
    offsets: 'late',
    valueLoads: 'early',
    valueStaging: 'shared',
    passes: 'onesweep',
    rank: 'atomic',
    rankBatch: MULTISPLIT_PAIR_ITEMS,
  });
  // radixSort's shapes: the batched ranking and reduce-then-scan passes, keys alone or with values.
  expect(sortShape(caps(all, 49152, 32, 32), false)).toMatchObject({
    items: MULTISPLIT_ITEMS,
    offsets: 'early',
    passes: 'reduce-then-scan',
    rank: 'batched',
    rankBatch: KEY_RANK_BATCH,
  });
  expect(sortShape(caps(all, 49152, 32, 32), true)).toMatchObject({
    items: MULTISPLIT_PAIR_ITEMS,
    offsets: 'early',
    passes: 'reduce-then-scan',
    rank: 'batched',
    rankBatch: PAIR_RANK_BATCH,
    valueStaging: 'shared',
  });
  // Staged beside the keys, values would not fit 256 x 36 in 48 KiB: the workgroup narrows.
  expect(multisplitShape(caps(all, 49152, 32, 32), MULTISPLIT_PAIR_ITEMS)?.wg).toBe(128);
  // Subgroups of 4 and 32 KiB (SwiftShader): the rows (wg / 4 of them) bound the workgroup.
  expect(multisplitShape(caps(all, 32768, 4, 4))).toEqual({
    wg: 64,
    items: MULTISPLIT_ITEMS,
    rows: 16,
    words: 1,
    count: 'atomic',
    offsets: 'late',
    valueLoads: 'early',
    valueStaging: 'separate',
    passes: 'onesweep',
    rank: 'atomic',
    rankBatch: MULTISPLIT_ITEMS,
  });
  // Without atomics on buffers (no look-back): the reduce-then-scan passes; onesweep refused when asked for.
  const noAtomics: Feature[] = ['gather', 'scatter', 'workgroup', 'subgroup'];
  expect(multisplitShape(caps(noAtomics, 49152, 32, 32))?.passes).toBe('reduce-then-scan');
  expect(multisplitShape(caps(noAtomics, 49152, 32, 32), 12, 256, { passes: 'onesweep' })).toBeUndefined();
  // Subgroups of 16 to 64: rows for the smallest, masks for the largest.
  expect(multisplitShape(caps(all, 65536, 16, 64))).toEqual({
    wg: 256,
    items: MULTISPLIT_ITEMS,
    rows: 16,
    words: 2,
    count: 'atomic',
    offsets: 'late',
    valueLoads: 'early',
    valueStaging: 'separate',
    passes: 'onesweep',
    rank: 'atomic',
    rankBatch: MULTISPLIT_ITEMS,
  });
  // Width-1 subgroups (the CPU backend's emulation): rows would fill the memory, so no multisplit.
  expect(multisplitShape(caps(all, 65536, 1, 1))).toBeUndefined();
  // No subgroups: no multisplit.
  expect(multisplitShape(caps(['gather', 'scatter', 'workgroup'], 49152, 0, 0))).toBeUndefined();
  // Workgroups narrower than the largest subgroup could leave subgroups partial: refused.
  expect(multisplitShape(caps(all, 49152, 32, 32, 16))).toBeUndefined();
});
