/**
 * Conformance of apsp: the (n, n) f32 distances equal the sequential reference
 * (Floyd–Warshall, f32 sums in the same order) bit for bit on small edge-case
 * graphs; typed errors for negative weights and an n^2 beyond the device.
 */
import { apsp, apspReference, createGraph, randomGraph } from '@trident/algorithms';
import { InvalidArgumentError, LimitExceededError } from 'trident';
import { expect, it } from 'vitest';
import { graphCases } from './alg-graph-helpers.ts';
import { bindingLimitView, expectBitsEqual, formulations, isSlow } from './alg-helpers.ts';
import { describeEachBackend } from './harness.ts';

describeEachBackend('apsp', (ctx) => {
  it('distances equal the reference: directed, weighted and unit', async () => {
    const slow = isSlow(ctx.device);
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      for (const weights of ['random', 'integer', undefined] as const) {
        // n^3 work: the larger cases are cut to the first ones and a small random graph.
        const cases = graphCases({ symmetric: false, ...(weights ? { weights } : {}), slow: true }).filter(
          (c) => c.graph.rows <= (slow ? 100 : 300),
        );
        cases.push({ name: 'random n=61', graph: randomGraph(61, 150, { ...(weights ? { weights } : {}), seed: 23 }) });
        for (const { name, graph } of cases) {
          const dist = apsp(device, createGraph(device, graph));
          expectBitsEqual(await dist.read(), apspReference(graph), `${label} ${name} weights=${weights ?? 'none'}`);
          dist.destroy();
        }
      }
    }
  });

  it('rejects negative weights and too large n with typed errors', () => {
    const device = ctx.device;
    const neg = createGraph(device, { rows: 2, indptr: [0, 1, 1], indices: [1], weights: [-1] });
    expect(() => apsp(device, neg)).toThrow(InvalidArgumentError);
    const small = bindingLimitView(device, 4 * 1000);
    expect(() => apsp(small, createGraph(small, randomGraph(40, 10)))).toThrow(LimitExceededError);
  });
});
