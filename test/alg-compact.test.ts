/**
 * Conformance of compact: the kept elements in order, exact count, for every
 * dtype, size and flag pattern; typed errors on bad input.
 */
import { compact, compactReference } from '@trident/algorithms';
import { compactChunked } from '@trident/algorithms/internal';
import { type Buffer, InvalidArgumentError } from 'trident';
import { expect, it } from 'vitest';
import { BIG_PRIME, EDGE_SIZES, expectBitsEqual, foldedGridView, foldLimit, formulations, isSlow } from './alg-helpers.ts';
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
  it('ignores the extra workgroups of folded grids', async () => {
    const device = foldedGridView(ctx.device, foldLimit(ctx.device, 7));
    const data = randomU32(20001, 4);
    const flagData = data.map((x) => x & 1);
    const { output } = await compact(device, device.createBuffer('u32', data), device.createBuffer('u32', flagData));
    expectBitsEqual(await output.read(), compactReference(data, flagData), 'folded');
  });
});
