/**
 * docs/kernels.md's snippets (docs/snippets/*.ts) run on every backend and give what
 * their comments say. Where a backend lacks a snippet's kernel class it must refuse
 * with UnsupportedFeatureError naming it, as the doc's class table says.
 * (test/docs-snippets.node.test.ts checks the doc's copies match these files.)
 */
import { type Feature, KernelBuildError, UnsupportedFeatureError } from 'trident';
import { expect, it } from 'vitest';

import * as algorithms from '../docs/snippets/algorithms.ts';
import * as kernels from '../docs/snippets/kernels.ts';
import { describeEachBackend } from './harness.ts';

describeEachBackend('docs/kernels.md snippets', (ctx) => {
  /** Runs `demo`, or checks the refusal where the device lacks `needs`. */
  async function where<T>(needs: Feature[], demo: () => Promise<T>, check: (result: T) => void): Promise<void> {
    const missing = needs.find((f) => !ctx.device.caps.features.has(f));
    if (missing === undefined) {
      check(await demo());
      return;
    }
    const err = await demo().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UnsupportedFeatureError);
    expect((err as UnsupportedFeatureError).feature).toBe(missing);
  }

  it('params', async () => {
    expect(await kernels.demoParams(ctx.device)).toEqual(new Float32Array([12, 24, 36]));
  });

  it('atomic access', async () => {
    await where(
      ['atomic'],
      () => kernels.demoAtomicAccess(ctx.device),
      (r) => expect(r).toEqual(new Uint32Array([0, 3, 6, 9])),
    );
  });

  it('variables', async () => {
    expect(await kernels.demoVariables(ctx.device)).toEqual(new Uint32Array([1, 11, 21]));
  });

  it('loops', async () => {
    expect(await kernels.demoLoops(ctx.device)).toEqual(new Uint32Array([0, 0, 5, 1, 1, 5, 3, 7, 5]));
  });

  it('select', async () => {
    expect(await kernels.demoSelect(ctx.device)).toEqual([new Int32Array([0, 0, 7]), new Int32Array([-1, 1, 1])]);
  });

  it('casts', async () => {
    expect(await kernels.demoCasts(ctx.device)).toEqual([
      new Uint32Array([4294967294, 4294967295, 1065353216, 1]),
      new Float32Array([3.5, -3]),
    ]);
  });

  it('vectors', async () => {
    expect(await kernels.demoVectors(ctx.device)).toEqual(new Float32Array([30, 0, 40, 5, 0, 10, 0, 1]));
  });

  it('workgroup arrays and barriers', async () => {
    await where(
      ['workgroup'],
      () => kernels.demoWorkgroup(ctx.device),
      (r) => expect(r).toEqual(new Uint32Array([64, 64, 64, 8])),
    );
  });

  it('uniformity: a barrier under a localIndex branch is refused when the kernel is built', () => {
    expect(() => kernels.defineNonUniformBarrier()).toThrow(KernelBuildError);
    expect(() => kernels.defineNonUniformBarrier()).toThrow(
      "kernel 'bad_barrier': barrier() under non-uniform control flow: an if whose condition depends on k.localIndex. Every invocation of a workgroup must reach the same barriers; ",
    );
  });

  it('subgroups', async () => {
    await where(
      ['subgroup'],
      () => kernels.demoSubgroups(ctx.device),
      ({ sums, width }) => {
        expect(width).toBeGreaterThanOrEqual(ctx.device.caps.limits.minSubgroupSize);
        expect(width).toBeLessThanOrEqual(ctx.device.caps.limits.maxSubgroupSize);
        expect(sums).toEqual(new Uint32Array(64).fill(width));
      },
    );
  });

  it('ids', async () => {
    expect(await kernels.demoIds(ctx.device)).toEqual(
      new Uint32Array([0, 0, 2, 8, 1, 0, 2, 8, 2, 0, 2, 8, 3, 0, 2, 8, 0, 1, 2, 8, 1, 1, 2, 8]),
    );
  });

  it('ids-2d', async () => {
    await where(
      ['scatter'],
      () => kernels.demoIds2d(ctx.device),
      (r) => expect(r).toEqual(new Float32Array([1, 4, 2, 5, 3, 6])),
    );
  });

  it('private', async () => {
    expect(await kernels.demoPrivate(ctx.device)).toEqual(new Float32Array([3, 3, 3]));
  });

  it('atomics-f32', async () => {
    await where(
      ['atomic'],
      () => kernels.demoAtomicsF32(ctx.device),
      (r) => expect(r).toEqual(new Float32Array([0.75, -2, 2])),
    );
  });

  it('grids', async () => {
    await where(
      ['scatter'],
      () => kernels.demoGrids(ctx.device),
      (r) => expect(r).toEqual(new Float32Array(1000).fill(4)),
    );
  });

  it('atomics', async () => {
    await where(
      ['atomic', 'atomic-other'],
      () => kernels.demoAtomics(ctx.device),
      ({ stats, first }) => {
        expect(stats).toEqual(new Int32Array([12, -2, 9]));
        expect([0, 1, 2, 3]).toContain(first);
      },
    );
  });

  it('math', async () => {
    expect(await kernels.demoMath(ctx.device)).toEqual([new Float32Array([1, -1, 4]), new Uint32Array([14])]);
  });

  it('algorithms: primitives', async () => {
    const r = await algorithms.demoPrimitives(ctx.device);
    expect(r).toEqual({
      sum: 18,
      max: 9,
      inclusive: new Uint32Array([5, 8, 17, 18]),
      exclusive: new Uint32Array([0, 5, 8, 17]),
      counts: new Uint32Array([0, 1, 0, 1, 0, 1, 0, 0]),
      filled: new Uint32Array([7, 7, 7, 7]),
      count: 2,
      kept: new Uint32Array([5, 9]),
    });
  });

  it('algorithms: sorts', async () => {
    const r = await algorithms.demoSorts(ctx.device);
    const want = new Float32Array([-7, -1, 0, 2.5, 2.5]);
    expect(r.keys).toEqual(want);
    expect(r.values).toEqual(new Uint32Array([4, 1, 2, 0, 3]));
    // Every sort runs on every device, radixSort included (gather passes where there are no workgroups).
    expect(r.same).toHaveLength(4);
    for (const keys of r.same) expect(await keys.read()).toEqual(want);
  });

  it('algorithms: nbody', async () => {
    const { after, velocities } = await algorithms.demoNbody(ctx.device);
    const [x0 = 0, , , m0, x1 = 0, , , m1] = after;
    expect(x0).toBeGreaterThan(0);
    expect(x1).toBeLessThan(1);
    expect(x0 + x1).toBeCloseTo(1, 5); // equal masses: the centre of mass stays at 0.5
    expect([m0, m1]).toEqual([1, 1]);
    expect(velocities[0]).toBeCloseTo(-(velocities[4] ?? 0), 5);
    expect(velocities[0]).toBeGreaterThan(0);
  });

  it('algorithms: graphs', async () => {
    const r = await algorithms.demoGraphs(ctx.device);
    expect(r.levels).toEqual(new Int32Array([0, 1, 1, -1, -1]));
    expect(r.labels).toEqual(new Int32Array([0, 0, 0, 3, 3]));
    expect(r.mst).toEqual({ edges: new Int32Array([0, 1, 1, 2, 3, 4]), weights: new Float32Array([1, 2, 1]), totalWeight: 4 });
    expect(r.dist[2]).toBe(3);
    expect(r.dist[3]).toBe(Number.POSITIVE_INFINITY);
    expect(r.matched).toBe(2);
  });
});
