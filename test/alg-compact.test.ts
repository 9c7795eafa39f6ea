/**
 * Conformance of compact: the kept elements in order, exact count, for every
 * dtype, size and flag pattern; typed errors on bad input.
 */
import { compact, compactFormulation, compactInto, compactReference } from '@trident/algorithms';
import { compactChunked, compactTiles, type TileShape, tileShape } from '@trident/algorithms/internal';
import { type Buffer, type Device, InvalidArgumentError } from 'trident';
import { expect, it } from 'vitest';
import {
  BIG_PRIME,
  EDGE_SIZES,
  expectBitsEqual,
  foldedGridView,
  foldLimit,
  formulations,
  isSlow,
  manyInvocationsView,
  refusedWithout,
} from './alg-helpers.ts';
import { describeEachBackend, randomU32 } from './harness.ts';

function flagPatterns(n: number): Record<string, Uint32Array> {
  const r = randomU32(n, n + 11);
  return {
    random: r.map((x) => (x & 1 ? x : 0)), // any non-zero value keeps
    none: new Uint32Array(n),
    all: new Uint32Array(n).fill(0xffffffff),
    firstHalf: Uint32Array.from({ length: n }, (_, i) => (i < n / 2 ? 1 : 0)),
    sparse: Uint32Array.from({ length: n }, (_, i) => (i % 97 === 96 ? 1 : 0)),
    lastOnly: Uint32Array.from({ length: n }, (_, i) => (i === n - 1 ? 1 : 0)),
  };
}

/**
 * f32 values whose bits must survive the move: -0, infinities, quiet NaNs with a
 * payload and with the sign set, the smallest subnormal, ordinary values.
 */
function f32Values(n: number): Float32Array {
  const special = [0x80000000, 0x7f800000, 0xff800000, 0x7fc00001, 0xffc00000, 0x00000001];
  const out = new Float32Array(n);
  const bits = new Uint32Array(out.buffer);
  for (let i = 0; i < n; i++) {
    const s = special[i % 8];
    if (s === undefined) out[i] = i * 0.5 - 7;
    else bits[i] = s;
  }
  return out;
}

/** Runs compactTiles with `shape` and checks the count and the kept elements' bits against the reference. */
async function expectTiles(device: Device, shape: TileShape, data: Uint32Array | Float32Array, flagData: Uint32Array, what: string) {
  const dtype = data instanceof Float32Array ? 'f32' : 'u32';
  const input = device.createBuffer(dtype, data as never) as Buffer;
  const flags = device.createBuffer('u32', flagData);
  const { count, output } = await compactTiles(device, input, flags, shape);
  const want = compactReference(data, flagData);
  expect(count, what).toBe(want.length);
  expect(output.length, what).toBe(want.length);
  expectBitsEqual(await output.read(), want, what);
  for (const b of [input, flags, output]) b.destroy();
}

describeEachBackend('compact', (ctx) => {
  it('keeps flagged elements in order: dtypes, edge sizes, flag patterns', async () => {
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      for (const n of EDGE_SIZES) {
        const raw = randomU32(n, 3 * n + 1);
        const inputs = {
          u32: raw,
          i32: new Int32Array(raw.buffer.slice(0)),
          // Values incl. -0, infinities and NaN patterns are moved bit for bit (quiet NaNs only here).
          f32: Float32Array.from({ length: n }, (_, i) => [-0, 0, Number.POSITIVE_INFINITY, Number.NaN, i * 0.5 - 7][i % 5] as number),
        };
        for (const [dtype, data] of Object.entries(inputs) as Array<['u32' | 'i32' | 'f32', Uint32Array | Int32Array | Float32Array]>) {
          const input = device.createBuffer(dtype, data as never) as Buffer;
          for (const [pattern, flagData] of Object.entries(flagPatterns(n))) {
            const flags = device.createBuffer('u32', flagData);
            const { count, output } = await compact(device, input, flags);
            const want = compactReference(data, flagData);
            const what = `${label} ${dtype} n=${n} ${pattern}`;
            expect(count, what).toBe(want.length);
            expect(output.length, what).toBe(want.length);
            expectBitsEqual(await output.read(), want, what);
            expectBitsEqual(await flags.read(), flagData, `${what} flags untouched`);
            flags.destroy();
            output.destroy();
          }
          expectBitsEqual(await input.read(), data, `${label} ${dtype} n=${n} input untouched`);
          input.destroy();
        }
      }
    }
  });

  it('chunked formulation (serial workgroups): chunk boundaries, odd lengths, more chunks than elements', async () => {
    const device = ctx.device;
    // Chosen where workgroups run serially (the CPU); other devices run it too, smaller where slow.
    for (const n of isSlow(device) ? [1, 2, 3, 5, 1031] : [1, 2, 3, 5, 4097, 10007]) {
      const raw = randomU32(n, 5 * n + 3);
      const inputs = {
        u32: raw,
        f32: Float32Array.from({ length: n }, (_, i) => [-0, Number.NEGATIVE_INFINITY, Number.NaN, i * 0.25 - 3][i % 4] as number),
      };
      for (const [dtype, data] of Object.entries(inputs) as Array<['u32' | 'f32', Uint32Array | Float32Array]>) {
        const input = device.createBuffer(dtype, data as never) as Buffer;
        for (const [pattern, flagData] of Object.entries(flagPatterns(n))) {
          const flags = device.createBuffer('u32', flagData);
          const want = compactReference(data, flagData);
          for (const chunks of [1, 2, 3, 7, 16]) {
            const { count, output } = await compactChunked(device, input, flags, chunks);
            const what = `chunks=${chunks} ${dtype} n=${n} ${pattern}`;
            expect(count, what).toBe(want.length);
            expectBitsEqual(await output.read(), want, what);
            output.destroy();
          }
          flags.destroy();
        }
        expectBitsEqual(await input.read(), data, `${dtype} n=${n} input untouched`);
        input.destroy();
      }
    }
  });

  it('chunked formulation: concurrent calls share its pooled counts and offsets safely', async () => {
    const device = ctx.device;
    const n = isSlow(device) ? 3001 : 20011;
    const data = randomU32(n, 17);
    const input = device.createBuffer('u32', data);
    // Different chunk counts make the pooled temporaries grow between the calls.
    const cases = [2, 9, 3, 31].map((chunks, j) => ({ chunks, flags: Uint32Array.from(data, (x) => (((x >>> j) & 3) === 0 ? 1 : 0)) }));
    const results = await Promise.all(
      cases.map(({ chunks, flags }) => compactChunked(device, input, device.createBuffer('u32', flags), chunks)),
    );
    for (const [j, { count, output }] of results.entries()) {
      const want = compactReference(data, cases[j]?.flags as Uint32Array);
      expect(count, `call ${j}`).toBe(want.length);
      expectBitsEqual(await output.read(), want, `call ${j} (chunks=${cases[j]?.chunks})`);
    }
  });

  it('whole texels (lengths that are multiples of 4): every kept count mod 4, runs across samples', async () => {
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      for (const n of [8, 64, 1028, 4096, 20000]) {
        const data = randomU32(n, 5 * n + 3);
        const input = device.createBuffer('u32', data);
        const patterns = { ...flagPatterns(n), dense: randomU32(n, n + 7).map((x) => (x % 8 === 0 ? 0 : 1)) };
        for (const [pattern, base] of Object.entries(patterns)) {
          // Drop up to three kept elements so that every count mod 4 is covered.
          for (const drop of [0, 1, 2, 3]) {
            const flagData = base.slice();
            for (let i = 0, left = drop; i < n && left > 0; i++) {
              if (flagData[i] !== 0) {
                flagData[i] = 0;
                left--;
              }
            }
            const flags = device.createBuffer('u32', flagData);
            const { count, output } = await compact(device, input, flags);
            const want = compactReference(data, flagData);
            const what = `${label} n=${n} ${pattern} drop ${drop}`;
            expect(count, what).toBe(want.length);
            expect(output.length, what).toBe(want.length);
            expectBitsEqual(await output.read(), want, what);
            flags.destroy();
            output.destroy();
          }
        }
        input.destroy();
      }
    }
  });

  it('a prime above 10^6', async () => {
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      const data = randomU32(BIG_PRIME, 99);
      const flagData = data.map((x) => (x % 3 === 0 ? 1 : 0));
      const { count, output } = await compact(device, device.createBuffer('u32', data), device.createBuffer('u32', flagData));
      const want = compactReference(data, flagData);
      expect(count, label).toBe(want.length);
      expectBitsEqual(await output.read(), want, `${label} n=${BIG_PRIME}`);
    }
  });

  it('concurrent calls do not disturb each other', async () => {
    const device = ctx.device;
    const a = Uint32Array.from({ length: 3000 }, (_, i) => i);
    const [r1, r2] = await Promise.all([
      compact(
        device,
        device.createBuffer('u32', a),
        device.createBuffer(
          'u32',
          a.map((x) => x % 2),
        ),
      ),
      compact(
        device,
        device.createBuffer('u32', a),
        device.createBuffer(
          'u32',
          a.map((x) => (x % 3 === 0 ? 1 : 0)),
        ),
      ),
    ]);
    expectBitsEqual(
      await r1.output.read(),
      a.filter((x) => x % 2),
      'odd',
    );
    expectBitsEqual(
      await r2.output.read(),
      a.filter((x) => x % 3 === 0),
      'multiples of 3',
    );
  });

  it('compactInto: the kept elements from element 0 and their count, the rest of the output as it was', async () => {
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      for (const n of [0, 1, 5, 1028, 4099]) {
        const data = f32Values(n);
        const input = device.createBuffer('f32', data);
        // Longer than the input, and filled with a sentinel that no kept element has.
        const sentinel = new Float32Array(n + 3).fill(12345.5);
        for (const [pattern, flagData] of Object.entries(flagPatterns(n))) {
          const flags = device.createBuffer('u32', flagData);
          const output = device.createBuffer('f32', sentinel);
          const count = device.createBuffer('u32', [7, 8]);
          await compactInto(device, input, flags, { output, count });
          const want = compactReference(data, flagData);
          const what = `${label} n=${n} ${pattern}`;
          expectBitsEqual(await count.read(), Uint32Array.from([want.length, 8]), `${what} count (element 1 untouched)`);
          const got = await output.read();
          expectBitsEqual(got.subarray(0, want.length), want, what);
          expectBitsEqual(got.subarray(want.length), sentinel.subarray(want.length), `${what} past the count`);
          for (const b of [flags, output, count]) b.destroy();
        }
        input.destroy();
      }
    }
  });

  it('compactInto: back-to-back calls on pooled temporaries, each into its own output', async () => {
    const device = ctx.device;
    const n = isSlow(device) ? 3001 : 20011;
    const data = randomU32(n, 23);
    const input = device.createBuffer('u32', data);
    const runs = [1, 2, 3].map((j) => {
      const flagData = Uint32Array.from(data, (x) => (((x >>> j) & 3) === 0 ? 1 : 0));
      return {
        flagData,
        flags: device.createBuffer('u32', flagData),
        output: device.createBuffer('u32', n),
        count: device.createBuffer('u32', 1),
      };
    });
    // Recorded one after another with no read between them (a workgroup device records all three).
    await Promise.all(runs.map(({ flags, output, count }) => compactInto(device, input, flags, { output, count })));
    for (const [j, { flagData, output, count }] of runs.entries()) {
      const want = compactReference(data, flagData);
      expect((await count.read())[0], `call ${j} count`).toBe(want.length);
      expectBitsEqual((await output.read()).subarray(0, want.length), want, `call ${j}`);
    }
  });

  it('compactInto rejects bad buffers with typed errors, naming the argument', async () => {
    const device = ctx.device;
    const input = device.createBuffer('u32', [1, 2, 3]);
    const flags = device.createBuffer('u32', [1, 0, 1]);
    const output = device.createBuffer('u32', 3);
    const count = device.createBuffer('u32', 1);
    const cases: Array<[() => Promise<unknown>, string]> = [
      [() => compactInto(device, input, device.createBuffer('u32', 4), { output, count }), 'flags'],
      [() => compactInto(device, input, flags, { output: device.createBuffer('u32', 2), count }), 'options.output'],
      [() => compactInto(device, input, flags, { output: device.createBuffer('f32', 3) as never, count }), 'options.output'],
      [() => compactInto(device, input, flags, { output: input, count }), 'options.output'],
      [() => compactInto(device, input, flags, { output: flags, count }), 'options.output'],
      [() => compactInto(device, input, flags, { output, count: device.createBuffer('u32', 0) }), 'options.count'],
      [() => compactInto(device, input, flags, { output, count: device.createBuffer('i32', 1) as never }), 'options.count'],
      [() => compactInto(device, input, flags, { output, count: output }), 'options.count'],
      [() => compactInto(device, input, flags, null as never), 'options'],
    ];
    for (const [fn, argument] of cases) {
      const error = await fn().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, argument).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).argument).toBe(argument);
    }
    expectBitsEqual(await output.read(), new Uint32Array(3), 'output untouched');
    expectBitsEqual(await count.read(), new Uint32Array(1), 'count untouched');
  });

  it('rejects bad input with typed errors and leaves buffers untouched', async () => {
    const device = ctx.device;
    const data = Uint32Array.from([1, 2, 3]);
    const input = device.createBuffer('u32', data);
    const flags = device.createBuffer('u32', [1, 0, 1]);
    const cases: Array<[() => Promise<unknown>, string]> = [
      [() => compact(device, input, device.createBuffer('u32', 4)), 'flags'],
      [() => compact(device, input, device.createBuffer('f32', 3) as never), 'flags'],
      [() => compact(device, {} as never, flags), 'input'],
    ];
    for (const [fn, argument] of cases) {
      const error = await fn().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, argument).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).argument).toBe(argument);
    }
    expectBitsEqual(await input.read(), data, 'input');
    expectBitsEqual(await flags.read(), Uint32Array.from([1, 0, 1]), 'flags');
  });
  it('tile-scan formulation (workgroup devices): tile boundaries, rounds paired and alone, scalar and vec4 loads', async () => {
    const device = ctx.device;
    const tiny: TileShape = { wg: 8, items: 4 };
    const attempt = () => expectTiles(device, tiny, new Uint32Array(8), new Uint32Array(8), 'refused');
    if (await refusedWithout(device, 'workgroup', attempt)) return;
    if (!device.caps.features.has('serial-workgroups')) {
      // The view that runs a hardware GPU's formulations runs this one.
      expect(compactFormulation(manyInvocationsView(device)).name).toBe('tile-scan');
    }
    // One round (no partner), three rounds (a pair and one alone), and the tuned shape.
    const shapes: TileShape[] = [tiny, { wg: 16, items: 12 }, tileShape(device)];
    for (const shape of shapes) {
      const tile = shape.wg * shape.items;
      // Whole and partial last tiles, lengths that are and are not multiples of 4.
      const sizes =
        shape === tiny
          ? [1, 2, 3, 4, 5, tile - 1, tile, tile + 1, 2 * tile + 3, 3 * tile + 4, 9 * tile + 6]
          : [tile - 1, tile + 1, 2 * tile + 4, 3 * tile + 3];
      for (const n of sizes) {
        const u = randomU32(n, 7 * n + 5);
        const f = f32Values(n);
        for (const [pattern, flagData] of Object.entries(flagPatterns(n))) {
          const what = `wg ${shape.wg} x ${shape.items} n=${n} ${pattern}`;
          await expectTiles(device, shape, u, flagData, `${what} u32`);
          await expectTiles(device, shape, f, flagData, `${what} f32`);
        }
      }
    }
  });

  it('tile-scan formulation: calls after a larger one, whose tile counts the pooled buffer still holds', async () => {
    const device = ctx.device;
    const shape: TileShape = { wg: 8, items: 4 };
    const tile = shape.wg * shape.items;
    const attempt = () => expectTiles(device, shape, new Uint32Array(8), new Uint32Array(8), 'refused');
    if (await refusedWithout(device, 'workgroup', attempt)) return;
    // Every tile full: the pooled counts past a later call's tiles hold non-zero counts it must not add.
    const big = randomU32(5 * tile, 3);
    await expectTiles(device, shape, big, new Uint32Array(big.length).fill(1), 'all kept, 5 tiles');
    for (const n of [2 * tile + 1, tile, 3]) {
      const data = randomU32(n, n);
      await expectTiles(
        device,
        shape,
        data,
        data.map((x) => x & 1),
        `then n=${n}`,
      );
    }
  });

  it('tile-scan formulation: ignores the extra workgroups of folded grids', async () => {
    const shape: TileShape = { wg: 8, items: 4 };
    const tile = shape.wg * shape.items;
    // Three workgroups a dimension: 11 and 12 workgroups fold into 3 x 4, one to spare in the scatter.
    const device = foldedGridView(ctx.device, 3);
    const attempt = () => expectTiles(device, shape, new Uint32Array(8), new Uint32Array(8), 'refused');
    if (await refusedWithout(device, 'workgroup', attempt)) return;
    for (const n of [10 * tile + 5, 10 * tile + 4]) {
      const data = randomU32(n, n + 1);
      await expectTiles(
        device,
        shape,
        data,
        data.map((x) => (x >>> 3) & 1),
        `folded n=${n}`,
      );
    }
  });

  it('concurrent calls of every formulation, of different lengths, do not disturb each other', async () => {
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      // Growing and shrinking lengths: pooled temporaries are replaced while earlier calls still use them.
      const cases = [3000, 20011, 50, 9000].map((n, j) => {
        const data = randomU32(n, n + j);
        return { data, flags: data.map((x) => (((x >>> j) & 3) === 0 ? 1 : 0)) };
      });
      const results = await Promise.all(
        cases.map(({ data, flags }) => compact(device, device.createBuffer('u32', data), device.createBuffer('u32', flags))),
      );
      for (const [j, { count, output }] of results.entries()) {
        const { data, flags } = cases[j] as (typeof cases)[number];
        const want = compactReference(data, flags);
        expect(count, `${label} call ${j}`).toBe(want.length);
        expectBitsEqual(await output.read(), want, `${label} call ${j} (n=${data.length})`);
      }
    }
  });

  it('ignores the extra workgroups of folded grids', async () => {
    const device = foldedGridView(ctx.device, foldLimit(ctx.device, 7));
    const data = randomU32(20001, 4);
    const flagData = data.map((x) => x & 1);
    const { output } = await compact(device, device.createBuffer('u32', data), device.createBuffer('u32', flagData));
    expectBitsEqual(await output.read(), compactReference(data, flagData), 'folded');
  });
});
