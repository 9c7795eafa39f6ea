/**
 * Deterministic graph generators for the conformance suite, the benchmarks and
 * the GPU checks: uniform random (Erdős–Rényi G(n, m)), R-MAT (Chakrabarti et al.,
 * Graph500's a = 0.57, b = c = 0.19), paths and stars, as host CSR arrays.
 */
import type { GraphInput } from './graph.ts';

export interface GenerateOptions {
  /** Store every edge in both directions (an undirected graph, symmetric matrix). */
  readonly symmetric?: boolean;
  /** Attach weights: 'random' in [1, 100) (f32), or 'integer' small integers 1..4 (many ties). */
  readonly weights?: 'random' | 'integer';
  readonly seed?: number;
}

/** xorshift32 in [0, 1). */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 4294967296;
  };
}

/**
 * CSR from an edge list (u, v) with optional weights, rows in source order, optionally symmetrised:
 * a counting sort by source (one pass to count, a prefix sum, one pass to place), O(rows + m).
 */
export function fromEdges(
  rows: number,
  us: ArrayLike<number>,
  vs: ArrayLike<number>,
  ws?: ArrayLike<number>,
  symmetric = false,
  columns = rows,
): GraphInput {
  const count = us.length;
  const m = count * (symmetric ? 2 : 1);
  const indptr = new Uint32Array(rows + 1);
  for (let e = 0; e < count; e++) {
    const u = us[e] as number;
    indptr[u + 1] = (indptr[u + 1] as number) + 1;
    if (symmetric) {
      const v = vs[e] as number;
      indptr[v + 1] = (indptr[v + 1] as number) + 1;
    }
  }
  for (let u = 0; u < rows; u++) indptr[u + 1] = (indptr[u + 1] as number) + (indptr[u] as number);
  const next = indptr.slice(0, rows);
  const indices = new Uint32Array(m);
  const weights = ws ? new Float32Array(m) : undefined;
  // Each edge placed at its source's next slot, then (symmetric) its reverse at the target's:
  // a row lists its entries in edge order.
  for (let e = 0; e < count; e++) {
    const u = us[e] as number;
    const v = vs[e] as number;
    const at = next[u] as number;
    next[u] = at + 1;
    indices[at] = v;
    if (weights) weights[at] = ws?.[e] as number;
    if (symmetric) {
      const back = next[v] as number;
      next[v] = back + 1;
      indices[back] = u;
      if (weights) weights[back] = ws?.[e] as number;
    }
  }
  const shape = { rows, columns, indptr, indices, ...(symmetric ? { symmetric } : {}) };
  return weights ? { ...shape, weights } : shape;
}

function weightsFor(m: number, kind: GenerateOptions['weights'], next: () => number): Float32Array | undefined {
  if (kind === undefined) return undefined;
  const out = new Float32Array(m);
  for (let e = 0; e < m; e++) out[e] = kind === 'integer' ? 1 + Math.floor(next() * 4) : 1 + next() * 99;
  return out;
}

/** G(n, m): m edges with uniformly random ends (self-loops and duplicates possible, as in real data). */
export function randomGraph(n: number, m: number, options: GenerateOptions = {}): GraphInput {
  const next = rng(options.seed ?? 12345);
  const us = new Uint32Array(n === 0 ? 0 : m);
  const vs = new Uint32Array(us.length);
  for (let e = 0; e < us.length; e++) {
    us[e] = Math.floor(next() * n);
    vs[e] = Math.floor(next() * n);
  }
  return fromEdges(n, us, vs, weightsFor(us.length, options.weights, next), options.symmetric);
}

/** R-MAT with 2^scale vertices and edgeFactor * 2^scale edges (skewed degrees, as Graph500's generator). */
export function rmatGraph(scale: number, edgeFactor: number, options: GenerateOptions = {}): GraphInput {
  const n = 2 ** scale;
  const m = edgeFactor * n;
  const us = new Uint32Array(m);
  const vs = new Uint32Array(m);
  const end = rmatEdges(us, vs, 0, m, scale, (options.seed ?? 4242) >>> 0 || 1);
  return fromEdges(n, us, vs, weightsFor(m, options.weights, rng(end)), options.symmetric);
}

/**
 * Writes R-MAT edges [from, to) into `us` / `vs` from the xorshift32 state `state` (scale draws
 * an edge, the most significant bit first) and returns the state after them. Each draw r picks
 * a quadrant by thresholds a | b / c | d with a = 0.57, b = c = 0.19, d = 0.05: the source's bit
 * is r >= a + b, the target's (r >= a) ^ (r >= a + b) ^ (r >= a + b + c). The comparisons are
 * computed without branches (a branch per draw mispredicts about half the time, and the loop
 * draws scale numbers per edge): for integers r, t below 2^32, ((r - t) * 2^-32 + 1) | 0 is 1
 * where r >= t and 0 where r < t.
 */
function rmatEdges(us: Uint32Array, vs: Uint32Array, from: number, to: number, scale: number, state: number): number {
  // Thresholds rounded up: r >= 0.57 * 2^32 is r >= ceil(0.57 * 2^32) for integer r.
  const a = Math.ceil(0.57 * 2 ** 32);
  const ab = Math.ceil(0.76 * 2 ** 32);
  const abc = Math.ceil(0.95 * 2 ** 32);
  const k = 2 ** -32;
  let x = state | 0;
  for (let e = from; e < to; e++) {
    let u = 0;
    let v = 0;
    for (let bit = 0; bit < scale; bit++) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      const r = x >>> 0;
      const geA = ((r - a) * k + 1) | 0;
      const geAB = ((r - ab) * k + 1) | 0;
      const geABC = ((r - abc) * k + 1) | 0;
      u = (u << 1) | geAB;
      v = (v << 1) | (geA ^ geAB ^ geABC);
    }
    us[e] = u;
    vs[e] = v;
  }
  return x >>> 0;
}

/** The path 0 - 1 - … - (n-1) (deep BFS). */
export function pathGraph(n: number, options: GenerateOptions = {}): GraphInput {
  const us = Uint32Array.from({ length: Math.max(0, n - 1) }, (_, i) => i);
  const vs = us.map((u) => u + 1);
  return fromEdges(n, us, vs, weightsFor(us.length, options.weights, rng(options.seed ?? 7)), options.symmetric);
}

/** A star: centre 0 joined to every other vertex (high degree). */
export function starGraph(n: number, options: GenerateOptions = {}): GraphInput {
  const vs = Uint32Array.from({ length: Math.max(0, n - 1) }, (_, i) => i + 1);
  const us = new Uint32Array(vs.length);
  return fromEdges(n, us, vs, weightsFor(vs.length, options.weights, rng(options.seed ?? 9)), options.symmetric);
}
