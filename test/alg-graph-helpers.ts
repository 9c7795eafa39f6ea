/**
 * Graphs for the graph conformance files (test/alg-graph-*.test.ts): the issue's
 * edge cases (empty, one vertex, isolated vertices, a long path, a star,
 * disconnected parts, self-loops and duplicates, equal weights) and random sparse
 * graphs whose sizes are not multiples of any workgroup size.
 */
import { fromEdges, type GraphInput, pathGraph, randomGraph, rmatGraph, starGraph } from '@trident/algorithms';

export interface GraphCase {
  readonly name: string;
  readonly graph: GraphInput;
}

/** Two graphs side by side (vertex ids of `b` shifted by a.rows): disconnected parts. */
export function disjointUnion(a: GraphInput, b: GraphInput): GraphInput {
  const indptr = new Uint32Array(a.rows + b.rows + 1);
  indptr.set(Array.from(a.indptr), 0);
  const ma = a.indices.length;
  for (let i = 1; i <= b.rows; i++) indptr[a.rows + i] = (b.indptr[i] as number) + ma;
  const indices = Uint32Array.from([...Array.from(a.indices), ...Array.from(b.indices, (v) => v + a.rows)]);
  const weights = a.weights && b.weights ? Float32Array.from([...Array.from(a.weights), ...Array.from(b.weights)]) : undefined;
  const shape = { rows: a.rows + b.rows, indptr, indices, ...(a.symmetric && b.symmetric ? { symmetric: true } : {}) };
  return weights ? { ...shape, weights } : shape;
}

/**
 * Square graphs, undirected (symmetric) when `symmetric`, with weights when
 * `weights` is given; smaller on software rasterisers (`slow`).
 */
export function graphCases(options: { symmetric: boolean; weights?: 'random' | 'integer'; slow: boolean }): GraphCase[] {
  const { symmetric, weights, slow } = options;
  const o = { symmetric, ...(weights ? { weights } : {}) };
  const one = fromEdges(1, [], [], weights ? [] : undefined, symmetric);
  const loop = fromEdges(1, [0], [0], weights ? [2] : undefined, symmetric);
  const big = slow ? 300 : 1999;
  return [
    { name: 'empty', graph: fromEdges(0, [], [], weights ? [] : undefined, symmetric) },
    { name: 'one vertex', graph: one },
    { name: 'one vertex with a self-loop', graph: loop },
    { name: 'isolated vertices', graph: fromEdges(7, [], [], weights ? [] : undefined, symmetric) },
    {
      name: 'self-loops and duplicates',
      graph: fromEdges(6, [0, 0, 1, 1, 2, 3, 3, 5], [0, 1, 0, 1, 3, 2, 2, 5], weights ? [3, 2, 2, 1, 4, 4, 1, 7] : undefined, symmetric),
    },
    { name: 'long path', graph: pathGraph(slow ? 97 : 301, { ...o, seed: 3 }) },
    { name: 'star', graph: starGraph(slow ? 257 : 1025, { ...o, seed: 5 }) },
    {
      name: 'disconnected parts',
      graph: disjointUnion(randomGraph(130, 200, { ...o, seed: 11 }), randomGraph(67, 90, { ...o, seed: 12 })),
    },
    { name: 'equal weights', graph: randomGraph(257, 700, { symmetric, weights: weights ? 'integer' : undefined, seed: 13 } as never) },
    { name: `random n=${big}`, graph: randomGraph(big, 3 * big, { ...o, seed: 17 }) },
    { name: 'R-MAT scale 9', graph: rmatGraph(9, 4, { ...o, seed: 19 }) },
  ];
}
