/**
 * Conformance of reduce: u32 / i32 bit-identical to the reference (sums wrap),
 * f32 min / max exact (NaN wins both, -0 < +0), f32 sums within the documented bound.
 */
import { gammaF32, type ReduceOp, reduce, reduceInto, reduceReference, reduceSumDepth, sumAbs } from '@trident/algorithms';
import { type Buffer, type Device, InvalidArgumentError } from 'trident';
import { expect, it } from 'vitest';
import { BIG_PRIME, bits, EDGE_SIZES, expectBitsEqual, foldedGridView, foldLimit, formulations, u32Patterns } from './alg-helpers.ts';
import { describeEachBackend, randomU32 } from './harness.ts';

const OPS: ReduceOp[] = ['sum', 'min', 'max'];

/** NaNs of every kind: canonical, negative, signalling, with payloads, all bits set. */
const NAN_BITS = [0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001, 0x7fc12345, 0xffffffff];

/** `data` with NaNs of several kinds at a few positions (first, middle, last) and -Inf / +Inf beside them. */
function withNaNs(data: Float32Array, seed: number): Float32Array {
  const out = data.slice();
  const n = out.length;
  if (n === 0) return out;
  out[(seed * 7) % n] = Number.NEGATIVE_INFINITY;
  out[(seed * 13 + 1) % n] = Number.POSITIVE_INFINITY;
  const raw = new Uint32Array(out.buffer);
  for (const [j, at] of [n - 1, Math.floor(n / 2), 0].entries())
    if (j === 0 || n > 8) raw[at] = NAN_BITS[(seed + j) % NAN_BITS.length] as number;
  return out;
}

function f32Patterns(n: number, raw: Uint32Array): Record<string, Float32Array> {
  const random = Float32Array.from(raw, (x) => (x / 2 ** 32 - 0.5) * 2000);
  const sorted = random.slice().sort();
  return {
    random,
    equal: new Float32Array(n).fill(-3.25),
    sorted,
    reversed: sorted.slice().reverse(),
    tiny: Float32Array.from({ length: n }, (_, i) => [0, -0, 1e-45, -1e-45, 1e30, -1e30, 7][i % 7] as number),
    nan: withNaNs(random, n),
  };
}

function patterns(dtype: 'u32' | 'i32' | 'f32', n: number): Record<string, Uint32Array | Int32Array | Float32Array> {
  const raw = randomU32(n, n * 7 + 3);
  if (dtype === 'f32') return f32Patterns(n, raw);
  const u = u32Patterns(n, raw);
  if (dtype === 'u32') return u;
  const i: Record<string, Int32Array> = {};
  for (const [name, data] of Object.entries(u)) i[name] = new Int32Array(data.buffer.slice(0));
  i.sorted = (i.sorted as Int32Array).slice().sort();
  i.reversed = (i.sorted as Int32Array).slice().reverse();
  i.extremes = Int32Array.from({ length: n }, (_, k) => [0, -0x80000000, 0x7fffffff, -1, 1][k % 5] as number);
  return i;
}

function checkResult(
  device: Device,
  dtype: string,
  op: ReduceOp,
  data: Uint32Array | Int32Array | Float32Array,
  got: number,
  what: string,
): void {
  const want = reduceReference(data, op);
  if (dtype !== 'f32' || op !== 'sum') {
    expect(Object.is(got, want) || (Number.isNaN(got) && Number.isNaN(want)), `${what}: got ${got}, want ${want}`).toBe(true);
    return;
  }
  if (!Number.isFinite(want)) {
    expect(Object.is(got, want) || (Number.isNaN(got) && Number.isNaN(want)), `${what}: got ${got}, want ${want}`).toBe(true);
    return;
  }
  // GPUs may flush subnormals to zero: each input and each addition may lose up to 2^-126 (documented).
  const d = reduceSumDepth(device, data.length);
  const bound = gammaF32(d) * sumAbs(data as Float32Array) + (data.length + d) * 2 ** -126;
  expect(Math.abs(got - want), `${what}: got ${got}, want ${want}, bound ${bound}`).toBeLessThanOrEqual(bound);
}

describeEachBackend('reduce', (ctx) => {
  it('sum / min / max over u32, i32, f32 on edge sizes and value patterns', async () => {
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      for (const dtype of ['u32', 'i32', 'f32'] as const) {
        for (const n of EDGE_SIZES) {
          for (const [pattern, data] of Object.entries(patterns(dtype, n))) {
            const input = device.createBuffer(dtype, data as never) as Buffer;
            for (const op of OPS) {
              const got = await reduce(device, input, { op });
              checkResult(device, dtype, op, data, got, `${label} ${op} ${dtype} n=${n} ${pattern}`);
            }
            expectBitsEqual(await input.read(), data, `${label} ${dtype} n=${n} input untouched`);
            input.destroy();
          }
        }
      }
    }
  });

  it('a prime above 10^6, and 2^20 (vec4 path)', async () => {
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      for (const n of [BIG_PRIME, 2 ** 20]) {
        // Keep the file fast: every dtype once on the native formulation, u32 on the view.
        for (const dtype of label.includes('gather') || n !== BIG_PRIME ? (['u32'] as const) : (['u32', 'i32', 'f32'] as const)) {
          const data = patterns(dtype, n).random as Uint32Array;
          const input = device.createBuffer(dtype, data as never) as Buffer;
          for (const op of OPS) checkResult(device, dtype, op, data, await reduce(device, input, { op }), `${label} ${op} ${dtype} n=${n}`);
          input.destroy();
        }
        // f32 min / max with one NaN in the last chunk / workgroup / pass: NaN on every formulation.
        const nan = patterns('f32', n).random as Float32Array;
        new Uint32Array(nan.buffer)[n - 3] = 0xff800001;
        const input = device.createBuffer('f32', nan);
        for (const op of ['min', 'max'] as const)
          expect(await reduce(device, input, { op }), `${label} ${op} f32 n=${n} one NaN`).toBeNaN();
        input.destroy();
      }
    }
  });

  it('u32 sums wrap modulo 2^32 and i32 sums wrap at ±2^31', async () => {
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      const u = device.createBuffer('u32', new Uint32Array(1000).fill(0xffffffff));
      expect(await reduce(device, u, { op: 'sum' }), label).toBe((2 ** 32 - 1000) >>> 0);
      const i = device.createBuffer('i32', new Int32Array(3).fill(0x7fffffff));
      expect(await reduce(device, i, { op: 'sum' }), label).toBe((0x7fffffff * 3) | 0);
    }
  });

  it('f32: infinities and NaN propagate; min and max are NaN when any element is, and follow -0 < +0', async () => {
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      const cases: Array<[number[], ReduceOp, number]> = [
        [[1, Number.POSITIVE_INFINITY, 2], 'sum', Number.POSITIVE_INFINITY],
        [[Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY], 'sum', Number.NaN],
        [[Number.NaN, 1], 'sum', Number.NaN],
        [[0, -0, 0], 'min', -0],
        [[-0, 0, -0], 'max', 0],
        [[1, Number.NaN, Number.POSITIVE_INFINITY], 'max', Number.NaN],
        [[1, Number.NaN, Number.NEGATIVE_INFINITY], 'min', Number.NaN],
        [[1, Number.NaN, 3], 'min', Number.NaN],
        [[1, Number.NaN, 3], 'max', Number.NaN],
        [[Number.NaN, Number.NaN], 'min', Number.NaN],
        [[Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY], 'min', Number.POSITIVE_INFINITY],
        [[Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY], 'max', Number.NEGATIVE_INFINITY],
        [[Number.NEGATIVE_INFINITY, -0, 0, Number.POSITIVE_INFINITY], 'min', Number.NEGATIVE_INFINITY],
        [[Number.NEGATIVE_INFINITY, -0, 0, Number.POSITIVE_INFINITY], 'max', Number.POSITIVE_INFINITY],
      ];
      for (const [values, op, want] of cases) {
        const got = await reduce(device, device.createBuffer('f32', values), { op });
        expect(Object.is(got, want), `${label} ${op}(${values}) = ${got}, want ${want}`).toBe(true);
      }
      // A NaN result is the canonical quiet NaN (documented), whatever NaN came in, for min and max alike;
      // 17 and 64 elements: the gather passes' tail and vec4 loads, the workgroup path's atomics.
      for (const b of NAN_BITS) {
        for (const n of [2, 17, 64]) {
          const data = Float32Array.from({ length: n }, (_, i) => i - 5);
          new Uint32Array(data.buffer)[n >> 1] = b;
          const input = device.createBuffer('f32', data);
          for (const op of ['min', 'max'] as const) {
            const out = reduceInto(device, input, { op });
            expect(bits(await out.read())[0], `${label} ${op} n=${n} NaN 0x${b.toString(16)}`).toBe(0x7fc00000);
            out.destroy();
          }
          input.destroy();
        }
      }
    }
  });

  it('empty input gives the identity (f32 min +Infinity, max -Infinity)', async () => {
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      const e = { u32: device.createBuffer('u32', 0), i32: device.createBuffer('i32', 0), f32: device.createBuffer('f32', 0) };
      expect(await reduce(device, e.u32, { op: 'sum' }), label).toBe(0);
      expect(await reduce(device, e.u32, { op: 'min' }), label).toBe(0xffffffff);
      expect(await reduce(device, e.u32, { op: 'max' }), label).toBe(0);
      expect(await reduce(device, e.i32, { op: 'min' }), label).toBe(0x7fffffff);
      expect(await reduce(device, e.i32, { op: 'max' }), label).toBe(-0x80000000);
      expect(await reduce(device, e.f32, { op: 'sum' }), label).toBe(0);
      expect(await reduce(device, e.f32, { op: 'min' }), label).toBe(Number.POSITIVE_INFINITY);
      expect(await reduce(device, e.f32, { op: 'max' }), label).toBe(Number.NEGATIVE_INFINITY);
    }
  });

  it('reduceInto writes into a given output', async () => {
    const device = ctx.device;
    const input = device.createBuffer('u32', [5, 6, 7]);
    const output = device.createBuffer('u32', [1, 2]);
    expect(reduceInto(device, input, { op: 'sum', output })).toBe(output);
    expect([...(await output.read())]).toEqual([18, 2]);
  });

  it('rejects bad input with typed errors and leaves buffers untouched', async () => {
    const device = ctx.device;
    const data = Uint32Array.from([1, 2, 3]);
    const input = device.createBuffer('u32', data);
    const expectArg = async (fn: () => unknown, argument: string) => {
      let error: unknown;
      try {
        await fn();
      } catch (e) {
        error = e;
      }
      expect(error, argument).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).argument).toBe(argument);
    };
    await expectArg(() => reduce(device, input, { op: 'mean' as never }), 'options.op');
    await expectArg(() => reduce(device, input, undefined as never), 'options');
    await expectArg(() => reduce(device, [1, 2] as never, { op: 'sum' }), 'input');
    await expectArg(() => reduceInto(device, input, { op: 'sum', output: device.createBuffer('f32', 1) as never }), 'options.output');
    await expectArg(() => reduceInto(device, input, { op: 'sum', output: device.createBuffer('u32', 0) }), 'options.output');
    await expectArg(() => reduceInto(device, input, { op: 'sum', output: input }), 'options.output');
    expectBitsEqual(await input.read(), data, 'input');
  });
  it('ignores the extra workgroups of folded grids', async () => {
    const device = foldedGridView(ctx.device, foldLimit(ctx.device, 4));
    for (const n of [5000, 5001, 100003]) {
      const data = randomU32(n, 4);
      for (const op of OPS)
        expect(await reduce(device, device.createBuffer('u32', data), { op }), `folded ${op} n=${n}`).toBe(reduceReference(data, op));
      const f = Float32Array.from(data, (x) => x / 2 ** 32);
      checkResult(device, 'f32', 'sum', f, await reduce(device, device.createBuffer('f32', f), { op: 'sum' }), `folded f32 sum n=${n}`);
    }
  });
});
