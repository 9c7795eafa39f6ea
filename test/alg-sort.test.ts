/**
 * Conformance of the sorts (radixSort, bitonicSort, sort): keys and stable
 * key-value pairs for u32 / i32 / f32 in the documented total order, bit-identical
 * to the reference, every edge size and key pattern; typed errors on bad input.
 */
import { bitonicSort, mergeSort, quickSort, radixSort, sort, sortFormulation, sortMethod, sortReference } from '@trident/algorithms';
import {
  type Buffer,
  type Device,
  type DeviceCaps,
  type Feature,
  InvalidArgumentError,
  LimitExceededError,
  UnsupportedFeatureError,
} from 'trident';
import { expect, it } from 'vitest';
import {
  bufferLimitView,
  EDGE_SIZES,
  expectBitsEqual,
  foldedGridView,
  foldLimit,
  formulations,
  isSlow,
  noGatherView,
  SLOW_EDGE_SIZES,
  u32Patterns,
} from './alg-helpers.ts';
import { sortOutputSpecs } from './alg-sort-output.ts';
import { describeEachBackend, randomU32 } from './harness.ts';

type Keys = Uint32Array | Int32Array | Float32Array;
type SortFn = (
  device: Device,
  keys: Buffer<'u32'>,
  options?: { values?: Buffer },
) => { keys: Buffer; values?: Buffer } | Promise<{ keys: Buffer; values?: Buffer }>;

function f32FromBits(bitsList: number[]): number[] {
  const u = Uint32Array.from(bitsList);
  return [...new Float32Array(u.buffer)];
}

function keyPatterns(dtype: 'u32' | 'i32' | 'f32', n: number): Record<string, Keys> {
  const raw = randomU32(n, n * 31 + 7);
  const u = u32Patterns(n, raw);
  if (dtype === 'u32') return { ...u, fewDistinct: raw.map((x) => x % 5) };
  if (dtype === 'i32') {
    const out: Record<string, Int32Array> = {};
    for (const [k, v] of Object.entries(u)) out[k] = new Int32Array(v.buffer.slice(0));
    out.sorted = (out.random as Int32Array).slice().sort();
    out.reversed = (out.sorted as Int32Array).slice().reverse();
    out.extremes = Int32Array.from({ length: n }, (_, i) => [0, -0x80000000, 0x7fffffff, -1, 1][i % 5] as number);
    return out;
  }
  // Random bit patterns cover every class (NaNs with payloads and both signs, subnormals, ±0, ±Inf).
  const random = new Float32Array(raw.buffer.slice(0));
  // NaNs of every kind (quiet, signalling, negative, payloads, all bits set) keep their bits: the output is a permutation of the input.
  const specials = f32FromBits([
    0x80000000, 0, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 0x7f800001, 0x00000001, 0x80000001, 0xffffffff, 0x7fffffff, 0xff800001,
    0x7fc12345,
  ]);
  const sorted = Float32Array.from(raw, (x) => (x / 2 ** 32 - 0.5) * 1e6).sort();
  return {
    random,
    equal: new Float32Array(n).fill(-2.5),
    sorted,
    reversed: sorted.slice().reverse(),
    extremes: Float32Array.from({ length: n }, (_, i) => specials[i % specials.length] as number),
  };
}

async function checkSort(device: Device, fn: SortFn, keysData: Keys, what: string, withValues: boolean): Promise<void> {
  const dtype = keysData instanceof Float32Array ? 'f32' : keysData instanceof Int32Array ? 'i32' : 'u32';
  const keys = device.createBuffer(dtype, keysData as never) as Buffer<'u32'>;
  const valuesData = Int32Array.from({ length: keysData.length }, (_, i) => i - 7);
  const values = withValues ? device.createBuffer('i32', valuesData) : undefined;
  const result = await fn(device, keys, values ? { values } : undefined);
  const want = sortReference(keysData, withValues ? valuesData : undefined);
  expectBitsEqual(await result.keys.read(), want.keys, `${what} keys`);
  if (withValues) expectBitsEqual(await (result.values as Buffer).read(), want.values as Int32Array, `${what} values (stable)`);
  expectBitsEqual(await keys.read(), keysData, `${what} keys input untouched`);
  if (values) expectBitsEqual(await values.read(), valuesData, `${what} values input untouched`);
  keys.destroy();
  values?.destroy();
  result.keys.destroy();
  result.values?.destroy();
}

/**
 * The sorts each formulation runs: radixSort and bitonicSort where workgroups exist
 * (sort() is radixSort there); on the gather-only view sort() — that is, merge
 * sort by merge path — radixSort (its gather formulation, radix-gather.ts),
 * bitonic sort and quicksort.
 */
function sortsFor(device: Device): Array<[string, SortFn]> {
  if (device.caps.features.has('workgroup')) {
    return [
      ['radixSort', radixSort],
      ['bitonicSort', bitonicSort],
      ['mergeSort', mergeSort],
      ['quickSort', quickSort],
    ];
  }
  return [
    ['sort', sort],
    ['radixSort', radixSort],
    ['bitonicSort', bitonicSort],
    ['quickSort', quickSort],
  ];
}

/** Sizes that get every key pattern; the other sizes get random keys. */
const PATTERN_SIZES = new Set([1, 2, 33, 257, 1025]);

describeEachBackend('sort', (ctx) => {
  it('keys and stable pairs, u32 / i32 / f32, edge sizes and key patterns', async () => {
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      for (const [name, fn] of sortsFor(device)) {
        for (const dtype of ['u32', 'i32', 'f32'] as const) {
          for (const n of isSlow(device) ? SLOW_EDGE_SIZES : [...EDGE_SIZES, 5000]) {
            const all = Object.entries(keyPatterns(dtype, n));
            for (const [pattern, data] of PATTERN_SIZES.has(n) ? all : all.slice(0, 1)) {
              await checkSort(device, fn, data, `${label} ${name} ${dtype} n=${n} ${pattern}`, pattern !== 'sorted');
            }
          }
        }
      }
    }
  });

  it('f32 keys come back as a permutation of their bits: NaNs of every kind keep theirs, after +Inf; -0 < +0; stable', async () => {
    // Input order, and the order every sort must return (by hand: see sort-keys.ts).
    const input = [
      0x7fc00000, 0x3f800000, 0xffffffff, 0x80000000, 0x7f800001, 0xff800000, 0xffc00001, 0x00000000, 0x7fc12345, 0x7f800000, 0xff800001,
      0x7fc00000, 0x80000001, 0x00000001, 0x7fffffff, 0xbf800000, 0xffc00001,
    ];
    const want = [
      0xff800000, 0xbf800000, 0x80000001, 0x80000000, 0x00000000, 0x00000001, 0x3f800000, 0x7f800000, 0x7f800001, 0x7fc00000, 0x7fc00000,
      0x7fc12345, 0x7fffffff, 0xff800001, 0xffc00001, 0xffc00001, 0xffffffff,
    ];
    // The values say where each key came from: equal bits keep their input order.
    const wantValues = [5, 15, 12, 3, 7, 13, 1, 9, 4, 0, 11, 8, 14, 10, 6, 16, 2];
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      for (const [name, fn] of sortsFor(device)) {
        for (const n of [input.length, 2 * input.length + 1]) {
          const bitsIn = Uint32Array.from({ length: n }, (_, i) => input[i % input.length] as number);
          const keys = device.createBuffer('f32', new Float32Array(bitsIn.buffer));
          const values = device.createBuffer(
            'u32',
            Uint32Array.from({ length: n }, (_, i) => i),
          );
          const result = await fn(device, keys as unknown as Buffer<'u32'>, { values });
          const gotBits = [...new Uint32Array((await result.keys.read()).buffer)];
          const gotValues = [...((await (result.values as Buffer).read()) as Uint32Array)];
          const what = `${label} ${name} n=${n}`;
          if (n === input.length) {
            expect(
              gotBits.map((b) => b.toString(16)),
              what,
            ).toEqual(want.map((b) => b.toString(16)));
            expect(gotValues, `${what} values`).toEqual(wantValues);
          } else {
            expect(
              [...gotBits].sort((a, b) => a - b),
              `${what}: a permutation of the input's bits`,
            ).toEqual([...bitsIn].sort((a, b) => a - b));
            expectBitsEqual(Uint32Array.from(gotBits), sortReference(new Float32Array(bitsIn.buffer)).keys, what);
          }
          keys.destroy();
          values.destroy();
          result.keys.destroy();
          result.values?.destroy();
        }
      }
    }
  });

  it('larger inputs: radix sort on 2^17 + 1 keys; sort, merge sort, quicksort (and the gather radix sort) on 2^14 + 1 (software rasterisers: 2^14 + 1, 2^12 + 1)', async () => {
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      const slow = isSlow(device);
      if (device.caps.features.has('workgroup')) {
        const n = slow ? 2 ** 14 + 1 : 2 ** 17 + 1;
        await checkSort(device, radixSort, keyPatterns('u32', n).random as Keys, `${label} radix u32 n=${n}`, true);
        if (!slow) await checkSort(device, radixSort, keyPatterns('f32', 2 ** 16 + 1).random as Keys, `${label} radix f32 n=2^16+1`, false);
      }
      const m = slow ? 2 ** 12 + 1 : 2 ** 14 + 1;
      if (!device.caps.features.has('workgroup')) {
        // The gather radix sort: several superblocks of 256 keys, a last block of one key.
        await checkSort(device, radixSort, keyPatterns('f32', m).random as Keys, `${label} gather radix f32 n=${m}`, true);
      }
      await checkSort(device, sort, keyPatterns('i32', m).random as Keys, `${label} sort i32 n=${m}`, true);
      await checkSort(device, mergeSort, keyPatterns('f32', m).random as Keys, `${label} mergeSort f32 n=${m}`, true);
      await checkSort(device, quickSort, keyPatterns('u32', m).random as Keys, `${label} quickSort u32 n=${m}`, true);
      await checkSort(device, quickSort, keyPatterns('u32', m).fewDistinct as Keys, `${label} quickSort few distinct n=${m}`, true);
    }
  });

  it('sort() picks by caps: radix on the CPU backend and hardware GPUs, merge path on software GPUs and where only gathers run', async () => {
    const device = ctx.device;
    const { caps } = device;
    const want = caps.features.has('workgroup') && (caps.features.has('serial-workgroups') || !device.info.software) ? 'radix' : 'merge';
    expect(sortMethod(caps)).toBe(want);
    // The same caps with the other traits: many invocations at once, or serial workgroups.
    const withCaps = (over: Partial<DeviceCaps>, features: Feature[]): DeviceCaps => ({ ...caps, ...over, features: new Set(features) });
    const gpu = ['gather', 'scatter', 'workgroup', 'subgroup', 'atomic'] as Feature[];
    expect(sortMethod(withCaps({ concurrency: 131072 }, gpu))).toBe('radix');
    expect(sortMethod(withCaps({ concurrency: 4096 }, gpu))).toBe('merge');
    expect(sortMethod(withCaps({ concurrency: 2 }, [...gpu, 'serial-workgroups']))).toBe('radix');
    expect(sortMethod(withCaps({ concurrency: 131072 }, ['gather', 'scatter']))).toBe('merge');
    // Whatever it picks sorts pairs stably, as radixSort does.
    const n = 1000;
    const data = randomU32(n, 41).map((x) => x % 37);
    const keys = device.createBuffer('u32', data);
    const values = device.createBuffer(
      'u32',
      Uint32Array.from({ length: n }, (_, i) => i),
    );
    const got = sort(device, keys, { values });
    const ref = sortReference(
      data,
      Uint32Array.from({ length: n }, (_, i) => i),
    );
    expect([...(await got.keys.read())]).toEqual([...ref.keys]);
    expect([...(await (got.values as Buffer).read())]).toEqual([...(ref.values as Uint32Array)]);
    const four = device.createBuffer('u32', [5, 3, 9, 1]);
    expect([...(await sort(device, four).keys.read())]).toEqual([1, 3, 5, 9]);
    // Radix sort needs workgroup kernels; the gather view refuses them, so sort() must not use them there.
    for (const { device: d } of formulations(device, ctx.kind)) {
      if (d.caps.features.has('workgroup')) continue;
      expect([...(await sort(d, d.createBuffer('u32', [5, 3, 9, 1])).keys.read())]).toEqual([1, 3, 5, 9]);
    }
  });

  it('radixSort and quickSort run on a gather-only device; radixSort names the missing feature without gather', async () => {
    for (const { device } of formulations(ctx.device, ctx.kind)) {
      if (device.caps.features.has('workgroup')) continue;
      const keys = device.createBuffer('u32', [3, 1, 2]);
      expect([...(await radixSort(device, keys).keys.read())]).toEqual([1, 2, 3]);
      expect([...(await (await quickSort(device, keys)).keys.read())]).toEqual([1, 2, 3]);
    }
    const none = noGatherView(ctx.device);
    const keys = none.createBuffer('u32', [3, 1, 2]);
    let error: unknown;
    try {
      radixSort(none, keys);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UnsupportedFeatureError);
    expect((error as UnsupportedFeatureError).feature).toBe('gather');
  });

  it('rejects bad input with typed errors and leaves buffers untouched', async () => {
    const device = ctx.device;
    const data = Uint32Array.from([3, 1, 2]);
    const keys = device.createBuffer('u32', data);
    for (const fn of [sort, radixSort, bitonicSort, mergeSort, quickSort] as SortFn[]) {
      const cases: Array<[() => unknown, string]> = [
        [() => fn(device, keys, { values: device.createBuffer('u32', 4) }), 'options.values'],
        [() => fn(device, keys, { values: keys }), 'options.values'],
        [() => fn(device, [3, 1, 2] as never), 'keys'],
        [() => fn(device, keys, null as never), 'options'],
      ];
      for (const [call, argument] of cases) {
        let error: unknown;
        try {
          await call();
        } catch (e) {
          error = e;
        }
        expect(error, `${fn.name} ${argument}`).toBeInstanceOf(InvalidArgumentError);
        expect((error as InvalidArgumentError).argument).toBe(argument);
      }
    }
    expectBitsEqual(await keys.read(), data, 'keys');
  });
  it('sizes temporaries per buffer: keys that fill the largest buffer sort; bitonic sort, which pads them, is refused', async () => {
    const n = 5000; // bitonic sort pads to 8192
    const device = bufferLimitView(ctx.device, n);
    const data = keyPatterns('u32', n).random as Keys;
    for (const [name, fn] of sortsFor(device)) {
      if (fn === bitonicSort) {
        const keys = device.createBuffer('u32', data);
        let error: unknown;
        try {
          await fn(device, keys);
        } catch (e) {
          error = e;
        }
        expect(error, name).toBeInstanceOf(LimitExceededError);
        expect((error as LimitExceededError).limit).toBe('maxBufferElements');
        continue;
      }
      await checkSort(device, fn, data, `${name} at the binding limit`, false);
    }
  });

  it('gather devices: the striped merge sort, keys alone and stable pairs, with and without diagonal samples, every key pattern, folded grids', async () => {
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      const f = sortFormulation(device);
      if (f.name !== 'merge-striped') continue;
      expect(sortFormulation(device, { pairs: true }).name, label).toBe('merge-striped');
      // Runs of sampledFrom elements and longer search between diagonal samples; a partial
      // last group, and lengths not divisible by 4 (scalar input and output).
      const sampled = 4 * f.shape.sampledFrom;
      for (const dtype of ['u32', 'i32', 'f32'] as const) {
        for (const n of [17, 16 * 12 + 4, sampled + 3, sampled]) {
          const all = Object.entries(keyPatterns(dtype, n));
          for (const [pattern, data] of n === sampled ? all : all.slice(0, 1)) {
            for (const pairs of [false, true]) await checkSort(device, sort, data, `${label} striped ${dtype} n=${n} ${pattern}`, pairs);
          }
        }
      }
      const folded = foldedGridView(device, 16);
      for (const pairs of [false, true]) {
        await checkSort(folded, sort, keyPatterns('u32', sampled + 1).random as Keys, `${label} striped, folded grid`, pairs);
      }
    }
  });

  it('ignores the extra workgroups of folded grids', async () => {
    const device = foldedGridView(ctx.device, foldLimit(ctx.device, 6));
    for (const [name, fn] of sortsFor(device)) {
      await checkSort(device, fn, keyPatterns('u32', 5001).random as Keys, `folded ${name}`, true);
    }
    // Radix sort of u32 keys dispatches 5 tiles here: with 2 per dimension, 3 extra workgroups.
    if (ctx.device.caps.features.has('workgroup')) {
      const tight = foldedGridView(ctx.device, 2);
      await checkSort(tight, radixSort, keyPatterns('u32', 5001).random as Keys, 'folded radixSort (2 per dimension)', true);
    }
  });

  // Last: the device has compiled these sorts' kernels by now (software adapters take most of a first sort compiling).
  sortOutputSpecs(ctx);
});
