import { APSP_BLOCK, closureSquarings } from '../apsp.ts';
import type { GraphInput } from '../graph.ts';

/**
 * Sequential reference of `apsp`: the same blocked Floyd–Warshall over the directed
 * stored edges (rounds of APSP_BLOCK vertices: the diagonal block closed by min-plus
 * squarings, then the block's rows and columns, then the rest), every sum rounded to
 * f32 and every min folding k in ascending order as the device does, so the results
 * agree bit for bit; 0 on the diagonal, +Infinity where unreachable. Row-major (n, n).
 */
export function apspReference(graph: GraphInput): Float32Array {
  const n = graph.rows;
  const d = initialDistances(graph);
  for (let k0 = 0; k0 < n; k0 += APSP_BLOCK) {
    const s = Math.min(APSP_BLOCK, n - k0);
    const c = closeBlock(d, n, k0, s);
    // The block's rows (s x n) and columns (n x s) through the closure.
    const rows = new Float32Array(s * n);
    const cols = new Float32Array(n * s);
    for (let a = 0; a < s; a++) {
      for (let j = 0; j < n; j++) rows[a * n + j] = d[(k0 + a) * n + j] as number;
      for (let kk = 0; kk < s; kk++) {
        const cak = c[a * s + kk] as number;
        if (cak === Number.POSITIVE_INFINITY) continue;
        for (let j = 0; j < n; j++) {
          const via = Math.fround(cak + (d[(k0 + kk) * n + j] as number));
          if (via < (rows[a * n + j] as number)) rows[a * n + j] = via;
        }
      }
    }
    for (let i = 0; i < n; i++) {
      for (let b = 0; b < s; b++) {
        let best = d[i * n + k0 + b] as number;
        for (let kk = 0; kk < s; kk++) {
          const via = Math.fround((d[i * n + k0 + kk] as number) + (c[kk * s + b] as number));
          if (via < best) best = via;
        }
        cols[i * s + b] = best;
      }
    }
    // The block's own rows and columns are the closure's (inside the block) and the cross values.
    for (let a = 0; a < s; a++) for (let b = 0; b < s; b++) rows[a * n + k0 + b] = cols[(k0 + a) * s + b] = c[a * s + b] as number;
    // Every other pair through the block (k ascending per pair, as on the device), then the block's rows and columns.
    for (let i = 0; i < n; i++) {
      for (let kk = 0; kk < s; kk++) {
        const dik = cols[i * s + kk] as number;
        if (dik === Number.POSITIVE_INFINITY) continue;
        for (let j = 0; j < n; j++) {
          const via = Math.fround(dik + (rows[kk * n + j] as number));
          if (via < (d[i * n + j] as number)) d[i * n + j] = via;
        }
      }
    }
    for (let i = 0; i < n; i++) for (let b = 0; b < s; b++) d[i * n + k0 + b] = cols[i * s + b] as number;
    for (let a = 0; a < s; a++) for (let j = 0; j < n; j++) d[(k0 + a) * n + j] = rows[a * n + j] as number;
  }
  return d;
}

/** The closure of d's s x s diagonal block at k0: closureSquarings(s) min-plus squarings. */
function closeBlock(d: Float32Array, n: number, k0: number, s: number): Float32Array {
  let c = new Float32Array(s * s);
  for (let a = 0; a < s; a++) for (let b = 0; b < s; b++) c[a * s + b] = d[(k0 + a) * n + k0 + b] as number;
  for (let r = 0; r < closureSquarings(s); r++) {
    const next = new Float32Array(s * s);
    for (let a = 0; a < s; a++) {
      for (let b = 0; b < s; b++) {
        let best = c[a * s + b] as number;
        for (let kk = 0; kk < s; kk++) {
          const via = Math.fround((c[a * s + kk] as number) + (c[kk * s + b] as number));
          if (via < best) best = via;
        }
        next[a * s + b] = best;
      }
    }
    c = next;
  }
  return c;
}

/**
 * Plain sequential Floyd–Warshall in f32 (one vertex of k at a time, rows with an
 * unreachable d[i][k] skipped): the fastest simple JavaScript APSP, the benchmarks'
 * plain-JS peer. Its lengths differ from `apspReference`'s only by f32 rounding
 * (another order of the same sums); the same layout and conventions.
 */
export function floydWarshallReference(graph: GraphInput): Float32Array {
  const n = graph.rows;
  const d = initialDistances(graph);
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

/** The lightest stored edge i -> j, 0 on the diagonal, +Infinity elsewhere. */
function initialDistances(graph: GraphInput): Float32Array {
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
  return d;
}
