import type { GraphInput } from '../graph.ts';

/**
 * Sequential reference of `matching`: Hopcroft–Karp on the (rows x columns)
 * biadjacency matrix. Returns, per left vertex (row), its matched right vertex
 * (column) or -1. Maximum cardinality; which maximum matching is found may differ
 * from the device's, so compare cardinalities and validity, not the arrays.
 */
export function matchingReference(graph: GraphInput): Int32Array {
  const nu = graph.rows;
  const nv = graph.columns ?? graph.rows;
  const mateU = new Int32Array(nu).fill(-1);
  const mateV = new Int32Array(nv).fill(-1);
  const dist = new Int32Array(nu);
  const INF = 0x7fffffff;
  const bfs = (): boolean => {
    const queue: number[] = [];
    for (let u = 0; u < nu; u++) {
      dist[u] = mateU[u] === -1 ? 0 : INF;
      if (mateU[u] === -1) queue.push(u);
    }
    let found = false;
    for (let h = 0; h < queue.length; h++) {
      const u = queue[h] as number;
      for (let e = graph.indptr[u] as number; e < (graph.indptr[u + 1] as number); e++) {
        const w = mateV[graph.indices[e] as number] as number;
        if (w === -1) found = true;
        else if (dist[w] === INF) {
          dist[w] = (dist[u] as number) + 1;
          queue.push(w);
        }
      }
    }
    return found;
  };
  // Iterative DFS along the layered graph (no recursion: paths may be long).
  const it = new Int32Array(nu);
  const augment = (root: number): boolean => {
    const stack = [root];
    it[root] = graph.indptr[root] as number;
    while (stack.length > 0) {
      const u = stack[stack.length - 1] as number;
      if ((it[u] as number) >= (graph.indptr[u + 1] as number)) {
        dist[u] = INF;
        stack.pop();
        continue;
      }
      const v = graph.indices[it[u] as number] as number;
      it[u] = (it[u] as number) + 1;
      const w = mateV[v] as number;
      if (w === -1) {
        // Flip the path: each stacked u takes the column its iterator last looked at.
        for (let s = stack.length - 1; s >= 0; s--) {
          const x = stack[s] as number;
          const col = graph.indices[(it[x] as number) - 1] as number;
          mateU[x] = col;
          mateV[col] = x;
        }
        return true;
      }
      if (dist[w] === (dist[u] as number) + 1) {
        it[w] = graph.indptr[w] as number;
        stack.push(w);
      }
    }
    return false;
  };
  while (bfs()) {
    for (let u = 0; u < nu; u++) if (mateU[u] === -1) augment(u);
  }
  return mateU;
}

/** Number of matched left vertices, after checking that `mates` is a valid matching of `graph` (throws otherwise). */
export function matchingSize(graph: GraphInput, mates: Int32Array): number {
  const nv = graph.columns ?? graph.rows;
  const used = new Uint8Array(nv);
  let size = 0;
  for (let u = 0; u < graph.rows; u++) {
    const v = mates[u] as number;
    if (v === -1) continue;
    if (v < 0 || v >= nv) throw new Error(`left vertex ${u} matched to ${v}, not a right vertex`);
    if (used[v]) throw new Error(`right vertex ${v} matched twice`);
    used[v] = 1;
    let edge = false;
    for (let e = graph.indptr[u] as number; e < (graph.indptr[u + 1] as number) && !edge; e++) edge = graph.indices[e] === v;
    if (!edge) throw new Error(`left vertex ${u} matched to ${v} without an edge`);
    size++;
  }
  return size;
}
