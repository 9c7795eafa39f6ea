/**
 * Conformance of zcopy / zfill on every backend (and its gather-only view):
 * bit-identical copies for every dtype, size and value pattern, typed errors on bad input.
 */
import { zcopy, zcopyFormulation, zcopyReference, zfill, zfillReference } from '@trident/algorithms';
import { InvalidArgumentError } from 'trident';
import { expect, it } from 'vitest';
import { BIG_PRIME, EDGE_SIZES, expectBitsEqual, foldedGridView, foldLimit, formulations } from './alg-helpers.ts';
import { describeEachBackend, randomU32 } from './harness.ts';

/** `expected` with each signalling NaN replaced by its quieted form where `actual` holds that. */
function quietedLike(expected: Uint32Array | Int32Array | Float32Array, actual: Float32Array): Float32Array {
  const e = new Uint32Array(expected.buffer.slice(0));
  const a = new Uint32Array(actual.buffer, actual.byteOffset, actual.length);
  for (let i = 0; i < e.length; i++) {
    const x = e[i] as number;
    const signalling = (x & 0x7fc00000) === 0x7f800000 && (x & 0x3fffff) !== 0;
    if (signalling && a[i] === (x | 0x400000) >>> 0) e[i] = a[i] as number;
  }
  return new Float32Array(e.buffer);
}

const SPECIALS = [0, -0, 1, -1, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NaN, 3.4e38, 1e-45];

describeEachBackend('zcopy', (ctx) => {
  it('copies every dtype bit for bit, sizes 0 .. 2^k+1 and a prime > 10^6', async () => {
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      for (const n of [...EDGE_SIZES, BIG_PRIME]) {
        const raw = randomU32(n, n + 1);
        // f32: random bit patterns include NaNs with payloads, -0 and infinities.
        const f = new Float32Array(raw.buffer.slice(0));
        for (let i = 0; i < Math.min(n, SPECIALS.length); i++) f[i] = SPECIALS[i] as number;
        const inputs = { u32: raw, i32: new Int32Array(raw.buffer.slice(0)), f32: f };
        for (const [dtype, data] of Object.entries(inputs) as Array<['u32' | 'i32' | 'f32', Uint32Array | Int32Array | Float32Array]>) {
          if (n === BIG_PRIME && dtype !== 'f32') continue; // the big size once is enough
          const input = device.createBuffer(dtype, data);
          const out = zcopy(device, input);
          // Documented: f32 is copied as values, so signalling NaNs may come back quieted.
          const expected = dtype === 'f32' ? quietedLike(zcopyReference(data), (await out.read()) as Float32Array) : zcopyReference(data);
          expectBitsEqual(await out.read(), expected, `${label} ${dtype} n=${n}`);
          expectBitsEqual(await input.read(), data, `${label} ${dtype} n=${n} input untouched`);
          input.destroy();
          out.destroy();
        }
      }
    }
  });

  it('copies into a given output; equal, sorted and reversed data', async () => {
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      // 12292 and 2^16 + 4: several chunks of whole vec4s where workers copy a chunk each.
      for (const n of [1024, 1021, 12292, 2 ** 16 + 4]) {
        const sorted = Uint32Array.from({ length: n }, (_, i) => i);
        for (const data of [new Uint32Array(n).fill(7), sorted, sorted.slice().reverse()]) {
          const input = device.createBuffer('u32', data);
          const output = device.createBuffer('u32', n);
          expect(zcopy(device, input, { output })).toBe(output);
          expectBitsEqual(await output.read(), data, `${label} n=${n}`);
        }
      }
    }
  });

  it('fills with write-only kernels', async () => {
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      for (const n of [0, 1, 3, 4, 5, 257, 4096, 4099, 12292, 12293]) {
        for (const [dtype, value] of [
          ['u32', 0xffffffff],
          ['i32', -0x80000000],
          ['f32', -0],
          ['f32', Number.NaN],
          ['f32', 0.1],
        ] as const) {
          const out = device.createBuffer(dtype, n);
          out.fill(dtype === 'f32' ? 1.5 : 17);
          zfill(device, out, value);
          const like = { u32: new Uint32Array(0), i32: new Int32Array(0), f32: new Float32Array(0) }[dtype];
          expectBitsEqual(await out.read(), zfillReference(like, n, value), `${label} ${dtype} fill ${value} n=${n}`);
        }
      }
    }
  });

  it('copies a contiguous chunk per worker on serial-workgroup devices, grid-stride loops on other compute devices', () => {
    const { name } = zcopyFormulation(ctx.device);
    const f = ctx.device.caps.features;
    expect(name).toBe(f.has('serial-workgroups') ? 'chunked' : f.has('workgroup') ? 'grid-stride' : 'gather');
  });

  it('rejects bad input with typed errors and leaves buffers untouched', async () => {
    const device = ctx.device;
    const data = Uint32Array.from([1, 2, 3]);
    const input = device.createBuffer('u32', data);
    const short = device.createBuffer('u32', [9, 9]);
    const wrongType = device.createBuffer('f32', 3);
    const expectArg = (fn: () => unknown, argument: string) => {
      try {
        fn();
      } catch (e) {
        expect(e).toBeInstanceOf(InvalidArgumentError);
        expect((e as InvalidArgumentError).argument).toBe(argument);
        return;
      }
      expect.fail(`expected InvalidArgumentError for '${argument}'`);
    };
    expectArg(() => zcopy(device, input, { output: short }), 'options.output');
    expectArg(() => zcopy(device, input, { output: wrongType as never }), 'options.output');
    expectArg(() => zcopy(device, input, { output: input }), 'options.output');
    expectArg(() => zcopy(device, {} as never), 'input');
    expectArg(() => zfill(device, input, -1), 'value');
    expectArg(() => zfill(device, input, 1.5), 'value');
    expectArg(() => zfill(device, input, 2 ** 32), 'value');
    const destroyed = device.createBuffer('u32', 3);
    destroyed.destroy();
    expectArg(() => zcopy(device, destroyed), 'input');
    expectBitsEqual(await input.read(), data, 'input');
    expectBitsEqual(await short.read(), Uint32Array.from([9, 9]), 'output');
  });
  it('ignores the extra workgroups of folded grids', async () => {
    const device = foldedGridView(ctx.device, foldLimit(ctx.device, 2));
    for (const n of [5000, 5001]) {
      const data = randomU32(n, 4);
      expectBitsEqual(await zcopy(device, device.createBuffer('u32', data)).read(), data, `folded n=${n}`);
    }
  });
});
