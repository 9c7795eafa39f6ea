/**
 * Conformance of histogram: exact counts for every size, bin count and value
 * pattern; values >= bins are counted nowhere; typed errors on bad input.
 */
import { histogram, histogramReference } from '@trident/algorithms';
import {
  CHUNKED_HISTOGRAM,
  chunkCounters,
  chunkedHistogramFits,
  chunkPlan,
  recordAtomicChunkHistogram,
  recordChunkedHistogram,
  recordSharedHistogram,
  type SharedHistogramPlan,
  sharedPlan,
} from '@trident/algorithms/internal';
import { type Buffer, type Device, InvalidArgumentError, LimitExceededError } from 'trident';
import { expect, it } from 'vitest';
import {
  BIG_PRIME,
  EDGE_SIZES,
  expectBitsEqual,
  foldedGridView,
  foldLimit,
  formulations,
  refusedWithout,
  u32Patterns,
} from './alg-helpers.ts';
import { describeEachBackend, randomU32 } from './harness.ts';

/** The shared formulation's default plan for `n` values and plans that vary copies, grid, unroll and workgroup size. */
function sharedPlans(device: Device, n: number, bins: number): Array<[string, SharedHistogramPlan]> {
  const base = sharedPlan(device.caps, n % 4 === 0 ? n / 4 : n, bins);
  if (!base) return [];
  const fits = (p: SharedHistogramPlan) =>
    p.copies * bins * 4 <= device.caps.limits.maxComputeWorkgroupStorageSize &&
    p.workgroupSize <= device.caps.limits.maxComputeInvocationsPerWorkgroup;
  const variants: Array<[string, SharedHistogramPlan]> = [
    ['default', base],
    ['one copy', { ...base, copies: 1 }],
    ['8 copies, 3 workgroups, unroll 2, grid-stride', { ...base, copies: 8, workgroups: 3, unroll: 2, tiled: false }],
    ['32 copies, 1 workgroup, tiled', { ...base, copies: 32, workgroups: 1, tiled: true }],
    ['64 invocations, 4 copies, 5 workgroups, unroll 1', { workgroupSize: 64, copies: 4, workgroups: 5, unroll: 1, tiled: false }],
    ['64 invocations, 2 copies, 7 workgroups, unroll 4, tiled', { workgroupSize: 64, copies: 2, workgroups: 7, unroll: 4, tiled: true }],
  ];
  return variants.filter(([, p]) => fits(p));
}

describeEachBackend('histogram', (ctx) => {
  it('shared formulation: copies, grids and views; maximum contention; values >= bins (also ones that wrap when scaled)', async () => {
    const device = ctx.device;
    for (const n of [12288, 12290, 33333]) {
      for (const bins of [5, 256]) {
        const raw = randomU32(n, n + bins);
        const pats: Record<string, Uint32Array> = {
          mixed: raw.map((x) => x % (bins + 3)),
          allEqual: new Uint32Array(n).fill(bins - 1),
          allPastBins: Uint32Array.from({ length: n }, (_, i) => [bins, 0xffffffff, 2 ** 27 + 1, 2 ** 29 + 3][i % 4] as number),
          halfWrapping: Uint32Array.from(raw, (x, i) => (i % 2 ? x % bins : (2 ** 27 + (x % bins)) >>> 0)),
        };
        const plans = sharedPlans(device, n, bins);
        // Devices without workgroup memory have no shared formulation: the public entry still counts exactly.
        if (device.caps.features.has('workgroup')) expect(plans.length, `n=${n} bins=${bins}`).toBeGreaterThan(2);
        for (const [pattern, data] of Object.entries(pats)) {
          const values = device.createBuffer('u32', data);
          const expected = histogramReference(data, bins);
          expectBitsEqual(await histogram(device, values, { bins }).read(), expected, `histogram n=${n} bins=${bins} ${pattern}`);
          for (const [label, plan] of plans) {
            const out = device.createBuffer('u32', bins);
            out.fill(123); // the formulation zeroes its output
            recordSharedHistogram(device, values, out, bins, plan);
            expectBitsEqual(await out.read(), expected, `${label} n=${n} bins=${bins} ${pattern}`);
            out.destroy();
          }
          values.destroy();
        }
      }
    }
  });

  it('chunked formulations (serial workgroups): chunk boundaries, odd lengths, more chunks than values, values >= bins', async () => {
    const device = ctx.device;
    // Chosen where workgroups run serially (the CPU); other devices run them too, but for the
    // per-chunk shapes on gather-only devices (WebGL2): their workgroup counters are refused by
    // name, and their scratch counters read-modify-write one counter many times per invocation,
    // which a scatter pass there cannot do (it reads the buffer from before the dispatch: the
    // backend README), so they are not run there; the atomic shape (blending) is.
    const one = device.createBuffer('u32', 1);
    const perChunk = !(await refusedWithout(device, 'workgroup', () => recordChunkedHistogram(device, one, one, 1, 1, 'workgroup')));
    for (const n of [1, 2, 3, 7, 4097, 10007]) {
      for (const bins of [1, 5, 256]) {
        const raw = randomU32(n, 7 * n + bins);
        const pats: Record<string, Uint32Array> = {
          mixed: raw.map((x) => x % (bins + 3)),
          allEqual: new Uint32Array(n).fill(bins - 1),
          // base + v would land in the next chunk's slice if v >= bins were not skipped first.
          pastBins: Uint32Array.from(raw, (x, i) => (i % 2 ? x % bins : (bins + (x % 1000)) >>> 0)),
        };
        for (const [pattern, data] of Object.entries(pats)) {
          const values = device.createBuffer('u32', data);
          const expected = histogramReference(data, bins);
          for (const chunks of [1, 2, 3, 7, 16]) {
            const shapes: Array<[string, (out: Buffer<'u32'>) => void]> = [
              ['atomic', (out) => recordAtomicChunkHistogram(device, values, out, bins, chunks)],
            ];
            if (perChunk)
              shapes.unshift(
                ['per-chunk (workgroup counters)', (out) => recordChunkedHistogram(device, values, out, bins, chunks, 'workgroup')],
                ['per-chunk (scratch counters)', (out) => recordChunkedHistogram(device, values, out, bins, chunks, 'scratch')],
              );
            for (const [shape, record] of shapes) {
              const out = device.createBuffer('u32', bins);
              out.fill(123); // every shape overwrites the output
              record(out);
              expectBitsEqual(await out.read(), expected, `${shape} chunks=${chunks} n=${n} bins=${bins} ${pattern}`);
              out.destroy();
            }
          }
          expectBitsEqual(await values.read(), data, `input untouched n=${n} ${pattern}`);
          values.destroy();
        }
      }
    }
  });

  it('the chunked shape is chosen up to its threshold of bins per value; past it, counts stay exact', async () => {
    const device = ctx.device;
    const n = 5003;
    const { chunks } = chunkPlan(device, n);
    // The largest bin count the per-chunk shape takes for n values, and one more.
    const edge = Math.floor(Math.min(n * CHUNKED_HISTOGRAM.maxBinsPerElement, CHUNKED_HISTOGRAM.maxSubElements) / chunks);
    expect(chunkedHistogramFits(n, edge, chunks)).toBe(true);
    expect(chunkedHistogramFits(n, edge + 1, chunks)).toBe(false);
    expect(chunkedHistogramFits(2 ** 24, CHUNKED_HISTOGRAM.maxSubElements / chunks + 1, chunks)).toBe(false);
    // Counters in workgroup memory while they fit it; the scratch beyond (both pinned above).
    const fit = Math.floor(device.caps.limits.maxComputeWorkgroupStorageSize / 4);
    if (device.caps.features.has('workgroup')) expect(chunkCounters(device, fit)).toBe('workgroup');
    expect(chunkCounters(device, fit + 1)).toBe('scratch');
    // Both sides of that limit through the public entry, with values enough for the per-chunk shape.
    for (const bins of [fit, fit + 1]) {
      if (bins < 1) continue;
      const data = randomU32(4 * bins, bins).map((x) => x % (bins + 2));
      expectBitsEqual(
        await histogram(device, device.createBuffer('u32', data), { bins }).read(),
        histogramReference(data, bins),
        `bins=${bins}`,
      );
    }
    for (const bins of [edge, edge + 1, 4 * edge]) {
      const data = randomU32(n, bins).map((x) => x % (bins + 10));
      const out = device.createBuffer('u32', bins);
      out.fill(7);
      histogram(device, device.createBuffer('u32', data), { bins, output: out });
      expectBitsEqual(await out.read(), histogramReference(data, bins), `bins=${bins} (edge ${edge})`);
    }
  });

  it('bins at the workgroup-storage limit stay shared (one copy); one more bin takes the global formulation', async () => {
    const device = ctx.device;
    const limit = Math.floor(device.caps.limits.maxComputeWorkgroupStorageSize / 4);
    const n = 20000;
    for (const bins of [Math.max(1, limit), limit + 1]) {
      if (device.caps.features.has('workgroup')) {
        expect(sharedPlan(device.caps, n / 4, bins)?.copies, `bins=${bins}`).toBe(bins <= limit ? 1 : undefined);
      }
      const data = randomU32(n, bins).map((x) => x % (bins + 2));
      const got = await histogram(device, device.createBuffer('u32', data), { bins }).read();
      expectBitsEqual(got, histogramReference(data, bins), `bins=${bins}`);
    }
  });

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
