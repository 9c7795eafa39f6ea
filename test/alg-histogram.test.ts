/**
 * Conformance of histogram: exact counts for every size, bin count and value
 * pattern; values >= bins are counted nowhere; typed errors on bad input.
 */
import { histogram, histogramReference } from '@trident/algorithms';
import { InvalidArgumentError, LimitExceededError } from 'trident';
import { expect, it } from 'vitest';
import { BIG_PRIME, EDGE_SIZES, expectBitsEqual, foldedGridView, foldLimit, formulations, u32Patterns } from './alg-helpers.ts';
import { describeEachBackend, randomU32 } from './harness.ts';

describeEachBackend('histogram', (ctx) => {
  it('counts exactly: edge sizes, bin counts, value patterns (values >= bins ignored)', async () => {
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      for (const n of [...EDGE_SIZES, 10007]) {
        const raw = randomU32(n, n + 77);
        for (const bins of [1, 2, 7, 256, 1000]) {
          const inRange = Uint32Array.from(raw, (x) => x % (bins + 3)); // some values land past the last bin
          const pats = { ...u32Patterns(n, raw), inRange, allSame: new Uint32Array(n).fill(bins - 1) };
          for (const [pattern, data] of Object.entries(pats)) {
            const values = device.createBuffer('u32', data);
            const got = await histogram(device, values, { bins }).read();
            expectBitsEqual(got, histogramReference(data, bins), `${label} n=${n} bins=${bins} ${pattern}`);
            expectBitsEqual(await values.read(), data, `${label} input untouched`);
            values.destroy();
          }
        }
      }
    }
  });

  it('a prime above 10^6 into 256 bins, and one heavily contended bin', async () => {
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      const data = Uint32Array.from(randomU32(BIG_PRIME, 5), (x) => x & 255);
      const values = device.createBuffer('u32', data);
      expectBitsEqual(await histogram(device, values, { bins: 256 }).read(), histogramReference(data, 256), `${label} n=${BIG_PRIME}`);
      const same = new Uint32Array(2 ** 20).fill(3);
      const got = await histogram(device, device.createBuffer('u32', same), { bins: 4 }).read();
      expect([...got], label).toEqual([0, 0, 0, 2 ** 20]);
    }
  });

  it('many bins (sub-histograms shrink to fit) and a given output', async () => {
    const device = ctx.device;
    const data = randomU32(50000, 3).map((x) => x % 70000);
    const out = device.createBuffer('u32', 70000);
    out.fill(123);
    expect(histogram(device, device.createBuffer('u32', data), { bins: 70000, output: out })).toBe(out);
    expectBitsEqual(await out.read(), histogramReference(data, 70000), 'bins=70000');
  });

  it('rejects bad input with typed errors and leaves buffers untouched', async () => {
    const device = ctx.device;
    const data = Uint32Array.from([1, 2, 3]);
    const values = device.createBuffer('u32', data);
    const cases: Array<[() => unknown, string]> = [
      [() => histogram(device, values, { bins: 0 }), 'options.bins'],
      [() => histogram(device, values, { bins: -4 }), 'options.bins'],
      [() => histogram(device, values, { bins: 2.5 }), 'options.bins'],
      [() => histogram(device, values, { bins: Number.NaN }), 'options.bins'],
      [() => histogram(device, device.createBuffer('i32', 3) as never, { bins: 4 }), 'values'],
      [() => histogram(device, values, { bins: 4, output: device.createBuffer('u32', 5) }), 'options.output'],
      [() => histogram(device, values, { bins: 3, output: values }), 'options.output'],
      [() => histogram(device, values, undefined as never), 'options'],
    ];
    for (const [fn, argument] of cases) {
      let error: unknown;
      try {
        fn();
      } catch (e) {
        error = e;
      }
      expect(error, argument).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).argument).toBe(argument);
    }
    expect(() => histogram(device, values, { bins: device.caps.limits.maxBufferElements + 1 })).toThrow(LimitExceededError);
    expectBitsEqual(await values.read(), data, 'values');
  });
  it('ignores the extra workgroups of folded grids', async () => {
    const device = foldedGridView(ctx.device, foldLimit(ctx.device, 3));
    for (const n of [5000, 20003]) {
      const data = randomU32(n, 4).map((x) => x % 300);
      expectBitsEqual(
        await histogram(device, device.createBuffer('u32', data), { bins: 256 }).read(),
        histogramReference(data, 256),
        `folded n=${n}`,
      );
    }
  });
});
