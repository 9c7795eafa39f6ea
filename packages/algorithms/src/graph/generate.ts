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

/** CSR from an edge list (u, v) with optional weights, rows in source order, optionally symmetrised. */
export function fromEdges(
  rows: number,
  us: ArrayLike<number>,
  vs: ArrayLike<number>,
  ws?: ArrayLike<number>,
  symmetric = false,
  columns = rows,
): GraphInput {
  const m = us.length * (symmetric ? 2 : 1);
  const indptr = new Uint32Array(rows + 1);
  const add = (u: number) => {
    indptr[u + 1] = (indptr[u + 1] as number) + 1;
  };
  for (let e = 0; e < us.length; e++) {
    add(us[e] as number);
    if (symmetric) add(vs[e] as number);
  }
  for (let u = 0; u < rows; u++) indptr[u + 1] = (indptr[u + 1] as number) + (indptr[u] as number);
  const fill = indptr.slice(0, rows);
  const indices = new Uint32Array(m);
  const weights = ws ? new Float32Array(m) : undefined;
  const put = (u: number, v: number, w: number) => {
    const at = fill[u] as number;
    fill[u] = at + 1;
    indices[at] = v;
    if (weights) weights[at] = w;
  };
  for (let e = 0; e < us.length; e++) {
    const w = ws ? (ws[e] as number) : 1;
    put(us[e] as number, vs[e] as number, w);
    if (symmetric) put(vs[e] as number, us[e] as number, w);
  }
  const shape = { rows, columns, indptr, indices, ...(symmetric ? { symmetric } : {}) };
  return weights ? { ...shape, weights } : shape;
}

function weightsFor(m: number, kind: GenerateOptions['weights'], next: () => number): Float32Array | undefined {
  if (kind === undefined) return undefined;
  return Float32Array.from({ length: m }, () => (kind === 'integer' ? 1 + Math.floor(next() * 4) : 1 + next() * 99));
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
  // Quadrants a | b / c | d with a = 0.57, b = c = 0.19, d = 0.05, as u32 thresholds;
  // the xorshift32 state lives in a local (this loop draws scale numbers per edge).
  const A = 0.57 * 2 ** 32;
  const AB = 0.76 * 2 ** 32;
  const ABC = 0.95 * 2 ** 32;
  let x = (options.seed ?? 4242) >>> 0 || 1;
  // Powers of two by table: `2 ** bit` in the inner loop tripled the time of large graphs.
  const power = Float64Array.from({ length: scale }, (_, i) => 2 ** i);
  for (let e = 0; e < m; e++) {
    let u = 0;
    let v = 0;
    for (let bit = scale - 1; bit >= 0; bit--) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      const r = x >>> 0;
      if (r >= A) {
        const b = power[bit] as number;
        if (r < AB) v += b;
        else if (r < ABC) u += b;
        else {
          u += b;
          v += b;
        }
      }
    }
    us[e] = u;
    vs[e] = v;
  }
  return fromEdges(n, us, vs, weightsFor(m, options.weights, rng(x)), options.symmetric);
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
