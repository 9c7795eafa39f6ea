/**
 * Conformance of apsp: the (n, n) f32 distances equal the sequential reference
 * (blocked Floyd–Warshall, f32 sums in the same order) bit for bit on small
 * edge-case graphs; the reference itself against a plain Floyd–Warshall in f64;
 * typed errors for negative weights and an n^2 beyond the device.
 */
import { APSP_BLOCK, apsp, apspReference, createGraph, floydWarshallReference, type GraphInput, randomGraph } from '@trident/algorithms';
import { InvalidArgumentError, LimitExceededError } from 'trident';
import { describe, expect, it } from 'vitest';
import { graphCases } from './alg-graph-helpers.ts';
import { bufferLimitView, expectBitsEqual, formulations, isSlow } from './alg-helpers.ts';
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
    const small = bufferLimitView(device, 1000);
    expect(() => apsp(small, createGraph(small, randomGraph(40, 10)))).toThrow(LimitExceededError);
  });
});

/** Plain Floyd–Warshall in f64, one vertex at a time: independent of the blocked order. */
function plainFloydWarshall(graph: GraphInput): Float64Array {
  const n = graph.rows;
  const d = new Float64Array(n * n).fill(Number.POSITIVE_INFINITY);
  for (let u = 0; u < n; u++) {
    for (let e = graph.indptr[u] as number; e < (graph.indptr[u + 1] as number); e++) {
      const v = graph.indices[e] as number;
      d[u * n + v] = Math.min(d[u * n + v] as number, Math.fround(graph.weights ? (graph.weights[e] as number) : 1));
    }
    d[u * n + u] = 0;
  }
  for (let k = 0; k < n; k++)
    for (let i = 0; i < n; i++)
      for (let j = 0; j < n; j++) d[i * n + j] = Math.min(d[i * n + j] as number, (d[i * n + k] as number) + (d[k * n + j] as number));
  return d;
}

describe('apspReference', () => {
  it('both references equal a plain Floyd–Warshall in f64: exactly for integer weights, within f32 rounding for random ones', () => {
    // Sizes around the block: one partial block, exact multiples, a partial last block; paths across many blocks.
    const sizes = [APSP_BLOCK - 1, APSP_BLOCK, 2 * APSP_BLOCK + 3, 4 * APSP_BLOCK];
    for (const n of sizes) {
      for (const weights of ['integer', 'random', undefined] as const) {
        for (const [shape, graph] of [
          ['random', randomGraph(n, 2 * n, { ...(weights ? { weights } : {}), seed: n })],
          // A directed cycle through the vertices in reverse order: every shortest path crosses blocks backwards.
          [
            'reverse cycle',
            {
              rows: n,
              indptr: Array.from({ length: n + 1 }, (_, i) => i),
              indices: Array.from({ length: n }, (_, i) => (i + n - 1) % n),
              ...(weights
                ? { weights: Array.from({ length: n }, (_, i) => (weights === 'integer' ? 1 + (i % 5) : 0.5 + ((i * 0.37) % 1))) }
                : {}),
            },
          ],
        ] as const) {
          const want = plainFloydWarshall(graph);
          for (const [name, got] of [
            ['apspReference', apspReference(graph)],
            ['floydWarshallReference', floydWarshallReference(graph)],
          ] as const) {
            for (let x = 0; x < n * n; x++) {
              const g = got[x] as number;
              const w = want[x] as number;
              const what = `${name} ${shape} n=${n} weights=${weights ?? 'none'} at (${Math.floor(x / n)}, ${x % n}): ${g} vs ${w}`;
              if (weights === 'random') expect(Math.abs(g - w) <= 1e-5 * w || g === w, what).toBe(true);
              else expect(g, what).toBe(w);
            }
          }
        }
      }
    }
  });
});
