import type { GraphInput } from '../graph.ts';

/**
 * Sequential reference of `apsp`: Floyd–Warshall in f32 (each sum rounded to f32,
 * as the device does) over the directed stored edges; 0 on the diagonal, +Infinity
 * where unreachable. Row-major (n, n).
 */
export function apspReference(graph: GraphInput): Float32Array {
  const n = graph.rows;
  const d = new Float32Array(n * n).fill(Number.POSITIVE_INFINITY);
  for (let u = 0; u < n; u++) {
    for (let e = graph.indptr[u] as number; e < (graph.indptr[u + 1] as number); e++) {
      const v = graph.indices[e] as number;
      const w = Math.fround(graph.weights ? (graph.weights[e] as number) : 1);
      if (w < (d[u * n + v] as number)) d[u * n + v] = w;
    }
    d[u * n + u] = 0;
  }
  for (let k = 0; k < n; k++) {
    for (let i = 0; i < n; i++) {
      const dik = d[i * n + k] as number;
      if (dik === Number.POSITIVE_INFINITY) continue;
      for (let j = 0; j < n; j++) {
        const via = Math.fround(dik + (d[k * n + j] as number));
        if (via < (d[i * n + j] as number)) d[i * n + j] = via;
      }
    }
  }
  return d;
}
