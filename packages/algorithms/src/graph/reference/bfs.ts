import type { GraphInput } from '../graph.ts';

/** Sequential reference of `bfs`: a queue over the CSR rows; -1 where unreachable. */
export function bfsReference(graph: GraphInput, source: number): Int32Array {
  const n = graph.rows;
  const level = new Int32Array(n).fill(-1);
  const queue = new Int32Array(n);
  level[source] = 0;
  queue[0] = source;
  let head = 0;
  let tail = 1;
  while (head < tail) {
    const u = queue[head++] as number;
    const d = (level[u] as number) + 1;
    for (let e = graph.indptr[u] as number; e < (graph.indptr[u + 1] as number); e++) {
      const v = graph.indices[e] as number;
      if (level[v] === -1) {
        level[v] = d;
        queue[tail++] = v;
      }
    }
  }
  return level;
}
