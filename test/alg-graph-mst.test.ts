/**
 * Conformance of mst: the forest equals the sequential reference (Kruskal under the
 * same (weight, smaller end, larger end) order) on every edge-case graph, weighted
 * with random and with tied integer weights and pattern-only; typed errors.
 */
import { createGraph, fewInvocations, mst, mstFormulation, mstReference } from '@trident/algorithms';
import { InvalidArgumentError } from 'trident';
import { expect, it } from 'vitest';
import { graphCases } from './alg-graph-helpers.ts';
import { expectBitsEqual, formulations, isSlow, manyInvocationsView } from './alg-helpers.ts';
import { describeEachBackend } from './harness.ts';

describeEachBackend('mst', (ctx) => {
  it('the forest equals the reference: random, tied and unit weights', async () => {
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      for (const weights of ['random', 'integer', undefined] as const) {
        for (const { name, graph } of graphCases({ symmetric: true, ...(weights ? { weights } : {}), slow: isSlow(ctx.device) })) {
          const g = createGraph(device, graph);
          // Both formulations on every device (the graphs are declared symmetric): the caps pick one, the other is forced.
          for (const formulation of ['edges', 'vertices'] as const) {
            const got = await mst(device, g, { formulation });
            const want = mstReference(graph);
            const what = `${label} ${formulation} ${name} weights=${weights ?? 'none'}`;
            expectBitsEqual(got.edges, want.edges, `${what} edges`);
            expectBitsEqual(got.weights, want.weights, `${what} weights`);
            expect(got.totalWeight, what).toBe(want.totalWeight);
          }
          g.destroy();
        }
      }
    }
  });

  it('entries stored in one direction only count as undirected edges', async () => {
    const graph = { rows: 4, indptr: [0, 2, 3, 3, 3], indices: [1, 3, 2], weights: [5, 1, 2] };
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      const got = await mst(device, createGraph(device, graph));
      expect(Array.from(got.edges), label).toEqual([0, 1, 0, 3, 1, 2]);
      expect(got.totalWeight, label).toBe(8);
    }
  });

  it('takes the vertex passes for symmetric graphs on devices without many thin invocations', async () => {
    const device = ctx.device;
    const { features } = device.caps;
    const fewFat = features.has('atomics-via-blending') || features.has('serial-workgroups') || fewInvocations(device.caps);
    const sym = createGraph(device, { rows: 3, indptr: [0, 1, 2, 2], indices: [1, 0], weights: [1, 1], symmetric: true });
    expect(sym.symmetric).toBe(true);
    expect(mstFormulation(device, sym).name).toBe(fewFat ? 'vertices' : 'edges');
    // A GPU of many thin invocations keeps the edge passes (an R-MAT hub's row would serialise one thread).
    if (!features.has('serial-workgroups') && !features.has('atomics-via-blending'))
      expect(mstFormulation(manyInvocationsView(device), sym).name).toBe('edges');
    const oneWay = createGraph(device, { rows: 4, indptr: [0, 2, 3, 3, 3], indices: [1, 3, 2], weights: [5, 1, 2] });
    expect(mstFormulation(device, oneWay).name).toBe('edges');
    // Rows hold only one direction of these edges: the vertex passes would miss them, so they are refused.
    await expect(mst(device, oneWay, { formulation: 'vertices' })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(mst(device, sym, { formulation: 'rows' as never })).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('rejects bad input with typed errors', async () => {
    const device = ctx.device;
    const rect = createGraph(device, { rows: 2, columns: 3, indptr: [0, 1, 2], indices: [2, 0] });
    await expect(mst(device, rect)).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(() => createGraph(device, { rows: 2, indptr: [0, 1, 2], indices: [1, 0], weights: [1, Number.NaN] })).toThrow(
      InvalidArgumentError,
    );
  });
});
