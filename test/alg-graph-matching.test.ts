/**
 * Conformance of matching: a valid matching of maximum cardinality (equal to
 * Hopcroft–Karp's) on bipartite edge cases, on the device and its gather-only view.
 */
import { createGraph, fromEdges, matching, matchingReference, matchingSize, randomGraph } from '@trident/algorithms';
import { InvalidArgumentError } from 'trident';
import { expect, it } from 'vitest';
import { formulations, isSlow } from './alg-helpers.ts';
import { describeEachBackend } from './harness.ts';

/** A random (nu, nv) biadjacency matrix with about `m` entries. */
function bipartite(nu: number, nv: number, m: number, seed: number) {
  const g = randomGraph(Math.max(nu, nv), m, { seed });
  const us: number[] = [];
  const vs: number[] = [];
  for (let u = 0; u < g.rows; u++) {
    for (let e = g.indptr[u] as number; e < (g.indptr[u + 1] as number); e++) {
      const v = g.indices[e] as number;
      if (u < nu && v < nv) {
        us.push(u);
        vs.push(v);
      }
    }
  }
  return fromEdges(nu, us, vs, undefined, false, nv);
}

function cases(slow: boolean) {
  const n = slow ? 200 : 1500;
  // A "ladder" where greedy choices block: left i joins right i and i + 1, so only one maximum exists.
  const ladder = fromEdges(
    50,
    Array.from({ length: 99 }, (_, i) => Math.floor(i / 2)),
    Array.from({ length: 99 }, (_, i) => Math.floor(i / 2) + (i % 2)),
    undefined,
    false,
    50,
  );
  return [
    { name: 'empty', graph: fromEdges(0, [], [], undefined, false, 0) },
    { name: 'no right vertices', graph: fromEdges(3, [], [], undefined, false, 0) },
    { name: 'no edges', graph: fromEdges(4, [], [], undefined, false, 5) },
    { name: 'one edge', graph: fromEdges(1, [0], [0], undefined, false, 1) },
    { name: 'duplicates', graph: fromEdges(3, [0, 0, 1, 1, 2], [0, 0, 0, 0, 1], undefined, false, 2) },
    {
      name: 'star (one left, many right)',
      graph: fromEdges(
        1,
        new Array(300).fill(0),
        Array.from({ length: 300 }, (_, i) => i),
        undefined,
        false,
        300,
      ),
    },
    {
      name: 'star (many left, one right)',
      graph: fromEdges(
        300,
        Array.from({ length: 300 }, (_, i) => i),
        new Array(300).fill(0),
        undefined,
        false,
        1,
      ),
    },
    { name: 'ladder', graph: ladder },
    { name: 'sparse random (long augmenting paths)', graph: bipartite(n, n, n, 31) },
    { name: 'random, more left', graph: bipartite(n, Math.floor(n / 3) + 1, 2 * n, 37) },
    { name: 'random, more right', graph: bipartite(Math.floor(n / 2) + 3, n, 3 * n, 41) },
  ];
}

describeEachBackend('matching', (ctx) => {
  it('maximum cardinality, valid matching', async () => {
    for (const { label, device } of formulations(ctx.device, ctx.kind)) {
      for (const { name, graph } of cases(isSlow(ctx.device))) {
        const mates = await matching(device, createGraph(device, graph));
        const got = await mates.read();
        expect(got.length, `${label} ${name}`).toBe(graph.rows);
        expect(matchingSize(graph, got), `${label} ${name}`).toBe(matchingSize(graph, matchingReference(graph)));
      }
    }
  });

  it('rejects bad input with typed errors', async () => {
    await expect(matching(ctx.device, {} as never)).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});
