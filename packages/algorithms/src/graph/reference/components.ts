import type { GraphInput } from '../graph.ts';

/**
 * Sequential reference of `components`: union-find over the stored edges (direction
 * ignored); every vertex labelled with the smallest vertex id of its component.
 */
export function componentsReference(graph: GraphInput): Int32Array {
  const n = graph.rows;
  const parent = Int32Array.from({ length: n }, (_, i) => i);
  const find = (x: number): number => {
    let r = x;
    while (parent[r] !== r) r = parent[r] as number;
    while (parent[x] !== r) {
      const next = parent[x] as number;
      parent[x] = r;
      x = next;
    }
    return r;
  };
  for (let u = 0; u < n; u++) {
    for (let e = graph.indptr[u] as number; e < (graph.indptr[u + 1] as number); e++) {
      const a = find(u);
      const b = find(graph.indices[e] as number);
      // Union by smaller id keeps each root the smallest id of its set.
      if (a < b) parent[b] = a;
      else if (b < a) parent[a] = b;
    }
  }
  const labels = new Int32Array(n);
  for (let v = 0; v < n; v++) labels[v] = find(v);
  return labels;
}
