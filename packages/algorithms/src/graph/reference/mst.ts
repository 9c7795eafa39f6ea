import type { GraphInput } from '../graph.ts';

/** A minimum spanning forest: k edges (u < v), rows sorted, their f32 weights and the f64 total. */
export interface MstForest {
  /** k x 2, row-major: edge i is (edges[2i], edges[2i+1]) with edges[2i] < edges[2i+1]; rows in ascending order. */
  readonly edges: Int32Array;
  /** The weight of each edge, in the order of `edges`. */
  readonly weights: Float32Array;
  /** Sum of `weights` in float64. */
  readonly totalWeight: number;
}

/**
 * Sequential reference of `mst`: Kruskal over the stored entries taken as undirected
 * edges (self-loops skipped), ordered by (f32 weight, smaller end, larger end) —
 * the same total order as the device's Borůvka, so ties give the same forest.
 */
export function mstReference(graph: GraphInput): MstForest {
  const n = graph.rows;
  const m = graph.indices.length;
  const lo = new Int32Array(m);
  const hi = new Int32Array(m);
  const w = new Float32Array(m);
  const order: number[] = [];
  for (let u = 0; u < n; u++) {
    for (let e = graph.indptr[u] as number; e < (graph.indptr[u + 1] as number); e++) {
      const v = graph.indices[e] as number;
      if (u === v) continue;
      lo[e] = Math.min(u, v);
      hi[e] = Math.max(u, v);
      w[e] = graph.weights ? (graph.weights[e] as number) : 1;
      order.push(e);
    }
  }
  order.sort(
    (a, b) => (w[a] as number) - (w[b] as number) || (lo[a] as number) - (lo[b] as number) || (hi[a] as number) - (hi[b] as number),
  );
  const parent = Int32Array.from({ length: n }, (_, i) => i);
  const find = (x: number): number => {
    while (parent[x] !== x) {
      parent[x] = parent[parent[x] as number] as number;
      x = parent[x] as number;
    }
    return x;
  };
  const chosen: Array<[number, number, number]> = [];
  for (const e of order) {
    const a = find(lo[e] as number);
    const b = find(hi[e] as number);
    if (a === b) continue;
    parent[Math.max(a, b)] = Math.min(a, b);
    chosen.push([lo[e] as number, hi[e] as number, w[e] as number]);
  }
  return forestOf(chosen);
}

/** Sorts (u, v, w) triples by (u, v) into an MstForest. */
export function forestOf(triples: Array<[number, number, number]>): MstForest {
  triples.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const edges = new Int32Array(2 * triples.length);
  const weights = new Float32Array(triples.length);
  let totalWeight = 0;
  triples.forEach(([u, v, x], i) => {
    edges[2 * i] = u;
    edges[2 * i + 1] = v;
    weights[i] = x;
    totalWeight += weights[i] as number;
  });
  return { edges, weights, totalWeight };
}
