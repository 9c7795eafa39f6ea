/**
 * The examples (examples/*.ts) run on every backend and agree with their references,
 * so they cannot rot. Sizes are the examples' own small defaults. Where a backend lacks
 * a kernel class, the examples choose another formulation from `device.caps`: the
 * kernel names they report are checked against the features here.
 */
import { describe, expect, it } from 'vitest';
import { runCsr } from '../examples/csr-graph.ts';
import { runHistogram } from '../examples/histogram-atomics.ts';
import { EXAMPLES } from '../examples/index.ts';
import { runMatmul } from '../examples/matmul-tiled.ts';
import { runStencil } from '../examples/stencil-2d.ts';
import { describeEachBackend } from './harness.ts';

describeEachBackend('examples', (ctx) => {
  it('stencil-2d: Jacobi relaxation on a 24 x 16 grid', async () => {
    const r = await runStencil(ctx.device);
    expect(r.maxError).toBeLessThanOrEqual(1e-6);
    expect(r.ok).toBe(true);
  });

  it('matmul-tiled: 20 x 20 (not a multiple of the tile), exact integer entries', async () => {
    const r = await runMatmul(ctx.device);
    expect(r.kernel).toBe(ctx.device.caps.features.has('workgroup') ? 'matmul_tiled' : 'matmul_naive');
    expect(r.ok).toBe(true);
  });

  it('matmul-tiled: sizes 1, 8 and 9', async () => {
    for (const n of [1, 8, 9]) expect((await runMatmul(ctx.device, n)).ok, `n = ${n}`).toBe(true);
  });

  it('histogram-atomics: 5000 skewed values in 40 bins, values past the last bin ignored', async () => {
    const r = await runHistogram(ctx.device);
    expect(r.kernel).toBe(ctx.device.caps.features.has('workgroup') ? 'histogram_shared' : 'histogram_global');
    expect(r.counted).toBeLessThan(5000);
    expect(r.ok).toBe(true);
  });

  it('csr-graph: SpMV over a 300-vertex ring with chords', async () => {
    const r = await runCsr(ctx.device);
    expect(r.edges).toBe(900);
    expect(r.ok).toBe(true);
  });
});

describe('examples/index.ts', () => {
  it('lists every example', () => {
    expect(Object.keys(EXAMPLES).sort()).toEqual(['csr', 'histogram', 'matmul', 'stencil']);
  });
});
