/**
 * Conformance of components: labels equal the sequential reference (smallest
 * vertex id of each weakly connected component) on every edge-case graph, on the
 * device and its gather-only view, by both formulations (hooking: atomic or
 * min-blended; pull: gather only); typed errors on bad input.
 */
import {
  type ComponentsFormulation,
  components,
  componentsFormulation,
  componentsReference,
  createGraph,
  fewInvocations,
} from '@trident/algorithms';
import { InvalidArgumentError } from 'trident';
import { expect, it } from 'vitest';
import { graphCases } from './alg-graph-helpers.ts';
import { expectBitsEqual, formulations, isSlow } from './alg-helpers.ts';
import { describeEachBackend } from './harness.ts';

const FORMS: readonly ComponentsFormulation[] = ['hooking', 'pull'];

describeEachBackend('components', (ctx) => {
  it('labels equal the reference: directed (weakly connected) and undirected edge cases', async () => {
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      for (const symmetric of [false, true]) {
        for (const { name, graph } of graphCases({ symmetric, slow: isSlow(ctx.device) })) {
          const g = createGraph(device, graph);
          for (const formulation of FORMS) {
            const labels = await components(device, g, { formulation });
            expectBitsEqual(await labels.read(), componentsReference(graph), `${label} ${formulation} ${name} symmetric=${symmetric}`);
            labels.destroy();
          }
          g.destroy();
        }
      }
    }
  });

  it('a path numbered against the hooking order (deep label chains)', async () => {
    // Vertex ids descend along the path, so every hook moves a label by one step.
    const n = 200;
    const us = Array.from({ length: n - 1 }, (_, i) => n - 1 - i);
    const vs = us.map((u) => u - 1);
    const indptr = new Uint32Array(n + 1);
    for (const u of us) indptr[u + 1] = 1;
    for (let i = 0; i < n; i++) indptr[i + 1] = (indptr[i + 1] as number) + (indptr[i] as number);
    const indices = new Uint32Array(n - 1);
    us.forEach((u, e) => {
      indices[indptr[u] as number] = vs[e] as number;
    });
    const graph = { rows: n, indptr, indices };
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      for (const formulation of FORMS) {
        const labels = await components(device, createGraph(device, graph), { formulation });
        expectBitsEqual(await labels.read(), componentsReference(graph), `${label} ${formulation}`);
      }
    }
  });

  it('hooks on GPUs of many thin invocations with native atomics, pulls elsewhere', () => {
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      const { features } = device.caps;
      const returning = ['atomic', 'atomic-other', 'scatter'].every((f) => features.has(f as never));
      const manyThin = !features.has('serial-workgroups') && !fewInvocations(device.caps);
      expect(componentsFormulation(device).name, label).toBe(returning && manyThin ? 'hooking' : 'pull');
    }
  });

  it('rejects bad input with typed errors', async () => {
    const device = ctx.device;
    const rect = createGraph(device, { rows: 2, columns: 3, indptr: [0, 1, 2], indices: [2, 0] });
    await expect(components(device, rect)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(components(device, {} as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    const g = createGraph(device, { rows: 2, indptr: [0, 1, 1], indices: [1] });
    await expect(components(device, g, { formulation: 'jumping' as never })).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});
