/**
 * Conformance of scan: inclusive / exclusive over u32, i32 (bit-identical, wrapping)
 * and f32 (within the documented bound), every edge size and value pattern; the
 * single-pass (decoupled look-back) formulation forced on every backend that runs
 * it, with tiles small enough that a few thousand elements span many of them, and
 * its fallback (predecessors reduced from the input) forced deterministically.
 */
import { gammaF32, type ScanVariant, scan, scanFormulation, scanReference, scanSumDepth, scanVariant } from '@trident/algorithms';
import { type Buffer, type Device, InvalidArgumentError, UnsupportedFeatureError } from 'trident';
import { expect, it } from 'vitest';
import {
  BIG_PRIME,
  EDGE_SIZES,
  expectBitsEqual,
  fewInvocations,
  foldedGridView,
  foldLimit,
  formulations,
  gatherOnlyView,
  manyInvocationsView,
  u32Patterns,
} from './alg-helpers.ts';
import { describeEachBackend, randomU32 } from './harness.ts';

type Data = Uint32Array | Int32Array | Float32Array;

function patterns(dtype: 'u32' | 'i32' | 'f32', n: number): Record<string, Data> {
  const raw = randomU32(n, n * 13 + 1);
  if (dtype === 'f32') {
    const random = Float32Array.from(raw, (x) => (x / 2 ** 32 - 0.5) * 100);
    const sorted = random.slice().sort();
    return {
      random,
      // Small integers: every prefix is exact in f32, so these must match exactly.
      integers: Float32Array.from(raw, (x) => (x % 201) - 100),
      equal: new Float32Array(n).fill(0.75),
      sorted,
      reversed: sorted.slice().reverse(),
      zeros: Float32Array.from({ length: n }, (_, i) => (i % 2 ? -0 : 0)),
    };
  }
  const u = u32Patterns(n, raw);
  if (dtype === 'u32') return u;
  const out: Record<string, Int32Array> = {};
  for (const [k, v] of Object.entries(u)) out[k] = new Int32Array(v.buffer.slice(0));
  out.extremes = Int32Array.from({ length: n }, (_, k) => [0, -0x80000000, 0x7fffffff, -1, 1][k % 5] as number);
  return out;
}

function check(got: Data, data: Data, exclusive: boolean, depth: number, what: string, exact: boolean): void {
  const want = scanReference(data, exclusive);
  if (!(data instanceof Float32Array) || exact) {
    expectBitsEqual(got, data instanceof Float32Array ? Float32Array.from(want) : (want as Data), what);
    return;
  }
  const g = gammaF32(depth);
  let abs = 0;
  for (let i = 0; i < data.length; i++) {
    if (!exclusive) abs += Math.abs(data[i] as number);
    const err = Math.abs((got[i] as number) - (want[i] as number));
    if (!(err <= g * abs)) expect.fail(`${what}: element ${i} is ${got[i]}, want ${want[i]}, bound ${g * abs}`);
    if (exclusive) abs += Math.abs(data[i] as number);
  }
}

describeEachBackend('scan', (ctx) => {
  it('inclusive and exclusive, u32 / i32 / f32, edge sizes and patterns', async () => {
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      for (const dtype of ['u32', 'i32', 'f32'] as const) {
        for (const n of [...EDGE_SIZES, 16384, 20001]) {
          for (const [pattern, data] of Object.entries(patterns(dtype, n))) {
            const input = device.createBuffer(dtype, data as never) as Buffer;
            for (const exclusive of [false, true]) {
              const out = scan(device, input, { exclusive });
              const what = `${label} ${exclusive ? 'exclusive' : 'inclusive'} ${dtype} n=${n} ${pattern}`;
              // Small integers and 0.75 multiples: every prefix is exact in f32.
              const exact = pattern === 'integers' || pattern === 'equal';
              check(await out.read(), data, exclusive, scanSumDepth(device, n), what, exact);
              out.destroy();
            }
            expectBitsEqual(await input.read(), data, `${label} ${dtype} n=${n} input untouched`);
            input.destroy();
          }
        }
      }
    }
  });

  it('a prime above 10^6 (u32, f32) and 2^20 (vec4 path)', async () => {
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      for (const n of [BIG_PRIME, 2 ** 20]) {
        for (const dtype of label.includes('gather') ? (['u32'] as const) : (['u32', 'f32'] as const)) {
          const data = patterns(dtype, n).random as Data;
          const input = device.createBuffer(dtype, data as never) as Buffer;
          const out = scan(device, input, { exclusive: n === BIG_PRIME });
          check(await out.read(), data, n === BIG_PRIME, scanSumDepth(device, n), `${label} ${dtype} n=${n}`, false);
          input.destroy();
          out.destroy();
        }
      }
      if (device.caps.features.has('serial-workgroups')) {
        // The chunked formulation's vec4 pass (integers of whole vec4s), exclusive and i32 too;
        // chunks of an odd count of vec4s run the unrolled loop's tail (one chunk at 4 * 4099).
        for (const n of [2 ** 20, 2 ** 20 + 4, 4 * 4099]) {
          const data = patterns('i32', n).random as Data;
          const input = device.createBuffer('i32', data as never) as Buffer;
          for (const exclusive of [true, false]) {
            const out = scan(device, input, { exclusive });
            check(await out.read(), data, exclusive, scanSumDepth(device, n), `${label} i32 exclusive=${exclusive} n=${n}`, true);
            out.destroy();
          }
          input.destroy();
        }
      }
    }
  });

  it('NaN and infinity propagate to every later element', async () => {
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      const data = new Float32Array(3000).fill(1);
      data[1000] = Number.POSITIVE_INFINITY;
      data[2000] = Number.NaN;
      const got = await scan(device, device.createBuffer('f32', data)).read();
      expect(got[999], label).toBe(1000);
      expect(got[1000], label).toBe(Number.POSITIVE_INFINITY);
      expect(got[1999], label).toBe(Number.POSITIVE_INFINITY);
      expect(got[2000], label).toBeNaN();
      expect(got[2999], label).toBeNaN();
    }
  });

  it('writes into a given output; rejects bad input with typed errors', async () => {
    const device = ctx.device;
    const data = Uint32Array.from([1, 2, 3]);
    const input = device.createBuffer('u32', data);
    const output = device.createBuffer('u32', 3);
    expect(scan(device, input, { output, exclusive: true })).toBe(output);
    expect([...(await output.read())]).toEqual([0, 1, 3]);
    const cases: Array<[() => unknown, string]> = [
      [() => scan(device, input, { output: device.createBuffer('u32', 4) }), 'options.output'],
      [() => scan(device, input, { output: device.createBuffer('i32', 3) as never }), 'options.output'],
      [() => scan(device, input, { output: input }), 'options.output'],
      [() => scan(device, input, { exclusive: 1 as never }), 'options.exclusive'],
      [() => scan(device, new Uint32Array(3) as never), 'input'],
    ];
    for (const [fn, argument] of cases) {
      expect(fn, argument).toThrow(InvalidArgumentError);
      try {
        fn();
      } catch (e) {
        expect((e as InvalidArgumentError).argument).toBe(argument);
      }
    }
    expectBitsEqual(await input.read(), data, 'input');
    expectBitsEqual(await output.read(), Uint32Array.from([0, 1, 3]), 'output');
  });
  /** The single pass needs workgroups, scatter stores, atomic add and atomic load/store. */
  const runsSinglePass = () => ['workgroup', 'scatter', 'atomic', 'atomic-other'].every((f) => ctx.device.caps.features.has(f as never));

  it('single pass with decoupled look-back: many tiles, every layout and tile-id source, forced fallback', async () => {
    const device = ctx.device;
    if (!runsSinglePass()) {
      // Devices without those features refuse it by name, before recording anything.
      const input = device.createBuffer('u32', 8);
      expect(() => scanVariant(device, input, {}, { formulation: 'single-pass' })).toThrow(UnsupportedFeatureError);
      return;
    }
    const variants: Array<[string, ScanVariant]> = [
      // The default tuning, forced where the caps would choose reduce-then-scan.
      ['default tuning', { formulation: 'single-pass' }],
      ['blocked', { formulation: 'single-pass', lookback: { wg: 32, vecs: 2, layout: 'blocked' } }],
      ['blocked 4 quads', { formulation: 'single-pass', lookback: { wg: 64, vecs: 4, layout: 'blocked' } }],
      // Runs per subgroup: more subgroups than lanes on narrow subgroups (the runs' scan takes several chunks).
      ['subgroup', { formulation: 'single-pass', lookback: { wg: 32, vecs: 4, layout: 'subgroup' } }],
      [
        'subgroup 8 quads, workgroup ids',
        { formulation: 'single-pass', lookback: { wg: 64, vecs: 8, layout: 'subgroup', ids: 'workgroup' } },
      ],
      ['subgroup 1 quad', { formulation: 'single-pass', lookback: { wg: 16, vecs: 1, layout: 'subgroup' } }],
      // Asked narrower than any subgroup (the H100's are 32 wide): widened to one whole subgroup.
      ['subgroup, 2 invocations asked', { formulation: 'single-pass', lookback: { wg: 2, vecs: 2, layout: 'subgroup' } }],
      ['blocked, 2 invocations asked', { formulation: 'single-pass', lookback: { wg: 2, vecs: 1, layout: 'blocked' } }],
      ['subgroup-blocked 3 quads', { formulation: 'single-pass', lookback: { wg: 32, vecs: 3, layout: 'subgroup-blocked' } }],
      // Every predecessor is reduced from the input: the fallback path alone must give the same sums.
      ['fallback', { formulation: 'single-pass', lookback: { wg: 16, vecs: 1, layout: 'blocked', spinLimit: 0, forceFallback: true } }],
      [
        'fallback, subgroup, workgroup ids',
        {
          formulation: 'single-pass',
          lookback: { wg: 16, vecs: 2, layout: 'subgroup', ids: 'workgroup', spinLimit: 0, forceFallback: true },
        },
      ],
    ];
    const cases: Array<['u32' | 'i32' | 'f32', string]> = [
      ['u32', 'random'], // wraps modulo 2^32 many times
      ['u32', 'extremes'],
      ['i32', 'extremes'], // negatives, MIN and MAX
      ['f32', 'random'],
      ['f32', 'integers'], // every prefix exact in f32
    ];
    for (const [name, variant] of variants) {
      for (const n of [1, 5, 63, 64, 65, 1027, 4096, 20001]) {
        for (const [dtype, pattern] of cases) {
          const data = patterns(dtype, n)[pattern] as Data;
          const input = device.createBuffer(dtype, data as never) as Buffer;
          for (const exclusive of [false, true]) {
            const out = scanVariant(device, input, { exclusive }, variant);
            const what = `single-pass ${name} ${exclusive ? 'exclusive' : 'inclusive'} ${dtype} n=${n} ${pattern}`;
            check(await out.read(), data, exclusive, scanSumDepth(device, n, variant), what, pattern === 'integers');
            out.destroy();
          }
          input.destroy();
        }
      }
    }
  });

  it('the default formulation follows the caps', async () => {
    const device = ctx.device;
    // Single pass needs workgroups, atomics and a look-back window (subgroup) of at least 8.
    const wide = ['workgroup', 'atomic', 'atomic-other', 'subgroup'].every((f) => device.caps.features.has(f as never));
    // Serial workgroups (a CPU) take one sequential loop per chunk instead.
    const serial = device.caps.features.has('serial-workgroups') && device.caps.features.has('scatter');
    // Software GPUs (few invocations at once) default to the gather formulation too.
    const workgroupDefault = (d: Device) => (wide && d.caps.limits.minSubgroupSize >= 8 ? 'single-pass' : 'reduce-then-scan');
    const want = serial
      ? 'chunked'
      : !device.caps.features.has('workgroup') || fewInvocations(device.caps)
        ? 'gather'
        : workgroupDefault(device);
    expect(scanFormulation(device).name).toBe(want);
    if (!serial && device.caps.features.has('workgroup'))
      expect(scanFormulation(manyInvocationsView(device)).name).toBe(workgroupDefault(device));
    if (serial) {
      // The workgroup formulation still runs there when asked for, and agrees with the chunked one.
      const data = new Uint32Array(5000).map((_, i) => (i * 2654435761) >>> 0);
      const input = device.createBuffer('u32', data);
      const a = await scanVariant(device, input, {}, { formulation: 'reduce-then-scan' }).read();
      const b = await scanVariant(device, input, {}, { formulation: 'chunked' }).read();
      expect(Array.from(b)).toEqual(Array.from(a));
    }
    expect(scanFormulation(gatherOnlyView(device)).name).toBe('gather');
    expect(() => scanFormulation(gatherOnlyView(device), { formulation: 'single-pass' })).toThrow(UnsupportedFeatureError);
  });

  it('ignores the extra workgroups of folded grids', async () => {
    const device = foldedGridView(ctx.device, foldLimit(ctx.device, 4));
    for (const n of [5000, 20001, 100003]) {
      const data = randomU32(n, 4);
      expectBitsEqual(
        await scan(device, device.createBuffer('u32', data)).read(),
        scanReference(data, false) as Uint32Array,
        `folded n=${n}`,
      );
    }
    if (!runsSinglePass()) return;
    // The single pass: one workgroup per tile, so 20001 elements in tiles of 512 need a folded grid.
    const data = randomU32(20001, 5);
    const variant: ScanVariant = { formulation: 'single-pass', lookback: { wg: 32, vecs: 4, layout: 'blocked' } };
    expectBitsEqual(
      await scanVariant(device, device.createBuffer('u32', data), { exclusive: true }, variant).read(),
      scanReference(data, true) as Uint32Array,
      'folded single-pass',
    );
  });
});
