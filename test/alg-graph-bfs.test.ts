/**
 * Conformance of bfs: depths equal the sequential reference on every edge-case
 * graph, on the device and its gather-only view; typed errors on bad input.
 */
import { type BfsFormulation, bfs, bfsFormulation, bfsReference, createGraph, randomGraph } from '@trident/algorithms';
import { InvalidArgumentError } from 'trident';
import { expect, it } from 'vitest';
import { graphCases } from './alg-graph-helpers.ts';
import { expectBitsEqual, formulations, isSlow } from './alg-helpers.ts';
import { describeEachBackend } from './harness.ts';

describeEachBackend('bfs', (ctx) => {
  it('depths equal the reference: directed and undirected edge cases', async () => {
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      for (const symmetric of [false, true]) {
        for (const { name, graph } of graphCases({ symmetric, slow: isSlow(ctx.device) })) {
          const g = createGraph(device, graph);
          const sources = graph.rows === 0 ? [] : [0, graph.rows - 1, Math.floor(graph.rows / 2)];
          // Every formulation the view's caps allow (the gather-only view: 'edges' only).
          const forms: BfsFormulation[] = device.caps.features.has('atomic-other') ? ['frontier', 'frontier-balanced'] : ['edges'];
          expect(forms, label).toContain(bfsFormulation(device));
          for (const s of sources) {
            const want = bfsReference(graph, s);
            for (const formulation of forms) {
              const levels = await bfs(device, g, s, { formulation });
              expectBitsEqual(await levels.read(), want, `${label} ${formulation} ${name} symmetric=${symmetric} source=${s}`);
              levels.destroy();
            }
          }
          g.destroy();
        }
      }
    }
  });

  it('rejects bad input with typed errors', async () => {
    const device = ctx.device;
    const g = createGraph(device, randomGraph(10, 20));
    for (const source of [-1, 10, 1.5, Number.NaN]) {
      const error = await bfs(device, g, source).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, String(source)).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).argument).toBe('source');
    }
    const rect = createGraph(device, { rows: 2, columns: 3, indptr: [0, 1, 2], indices: [2, 0] });
    await expect(bfs(device, rect, 0)).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});
