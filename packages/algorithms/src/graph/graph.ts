/**
 * A sparse graph on a device, in CSR form (scipy.sparse's `csr_matrix` layout):
 * row u lists u's out-neighbours `indices[indptr[u] .. indptr[u+1])`, with
 * optional per-edge `weights`. Vertex ids are row / column indices; a bipartite
 * graph is an (nU, nV) biadjacency matrix with `rows = nU`, `columns = nV`.
 *
 * `createGraph` validates the host arrays (InvalidArgumentError naming the array
 * and the first bad entry) and uploads them as u32 / f32 buffers; rows need not
 * be sorted.
 * Self-loops and duplicate entries are kept: each algorithm says what they mean.
 */
import { type Buffer, type Device, InvalidArgumentError } from '@trident/core';
import { checkCount, checkFits } from '../common.ts';
import { edgeSourcesKernel } from './kernels.ts';

/** Host arrays of a CSR matrix. */
export interface GraphInput {
  /** Rows (vertices; left vertices of a bipartite graph). */
  readonly rows: number;
  /** Columns; defaults to `rows` (a square adjacency matrix). */
  readonly columns?: number;
  /** rows + 1 non-decreasing offsets, indptr[0] = 0, indptr[rows] = edge count. */
  readonly indptr: ArrayLike<number>;
  /** Column of each stored entry, in [0, columns). */
  readonly indices: ArrayLike<number>;
  /** Weight of each stored entry (any finite or infinite number, not NaN); absent means 1. */
  readonly weights?: ArrayLike<number>;
  /**
   * Declares the matrix symmetric (an undirected graph: an entry (v, u) with the
   * same weight for every entry (u, v), duplicates counted). createGraph checks the
   * declaration; algorithms may then read a row as a vertex's in-neighbours too
   * (bfs searches bottom-up on such graphs).
   */
  readonly symmetric?: boolean;
}

/** A vertex's in-neighbours, CSR on the device (see Graph.inNeighbours). */
export interface InNeighbours {
  readonly indptr: Buffer<'u32'>;
  readonly indices: Buffer<'u32'>;
}

/** Largest vertex count: ids and counts stay below 2^31 so they fit the i32 outputs. */
export const MAX_GRAPH_VERTICES = 2 ** 31 - 2;

export class Graph {
  readonly device: Device;
  readonly rows: number;
  readonly columns: number;
  readonly edges: number;
  /** rows + 1 offsets (u32). */
  readonly indptr: Buffer<'u32'>;
  /** edges columns (u32), in the order given. */
  readonly indices: Buffer<'u32'>;
  /** edges weights (f32), in the order of `indices`; undefined for a pattern-only graph (weight 1). */
  readonly weights: Buffer<'f32'> | undefined;
  /** The smallest weight (1 for a pattern-only graph, +Infinity for a graph without edges). */
  readonly minWeight: number;
  /** The input was declared symmetric (and checked): rows double as in-neighbour lists. */
  readonly symmetric: boolean;
  #sources: Buffer<'u32'> | undefined;
  #transposed: Promise<InNeighbours> | undefined;

  constructor(
    device: Device,
    rows: number,
    columns: number,
    indptr: Uint32Array,
    indices: Uint32Array,
    weights: Float32Array | undefined,
    symmetric = false,
  ) {
    this.device = device;
    this.symmetric = symmetric;
    this.rows = rows;
    this.columns = columns;
    this.edges = indices.length;
    this.indptr = device.createBuffer('u32', indptr);
    this.indices = device.createBuffer('u32', indices.length > 0 ? indices : new Uint32Array(1));
    this.weights = weights ? device.createBuffer('f32', weights.length > 0 ? weights : new Float32Array(1)) : undefined;
    let minWeight = weights ? Number.POSITIVE_INFINITY : 1;
    if (weights) for (const w of weights) if (w < minWeight) minWeight = w;
    this.minWeight = this.edges === 0 ? Number.POSITIVE_INFINITY : minWeight;
  }

  get square(): boolean {
    return this.rows === this.columns;
  }

  /**
   * The source row of every edge (COO row indices), computed on the device once
   * by a binary search of `indptr` per edge (a gather kernel) and kept.
   */
  sources(): Buffer<'u32'> {
    if (!this.#sources || this.#sources.destroyed) {
      const out = this.device.createBuffer('u32', Math.max(1, this.edges));
      if (this.edges > 0) {
        this.device.dispatch(
          edgeSourcesKernel(this.device),
          { invocations: this.edges },
          { indptr: this.indptr, out, rows: this.rows, edges: this.edges },
        );
      }
      this.#sources = out;
    }
    return this.#sources;
  }

  /**
   * Each vertex's in-neighbours in CSR form (row v lists the u with a stored entry
   * (u, v), duplicates and self-loops kept): the graph's own arrays when it is
   * declared symmetric, otherwise the transpose, built once on the host from a
   * read-back of the arrays (a counting sort by column, O(n + m)) and kept.
   * For the gather ("pull") formulations, which read a vertex's in-edges instead
   * of scattering along its out-edges.
   */
  inNeighbours(): Promise<InNeighbours> {
    if (this.symmetric) return Promise.resolve({ indptr: this.indptr, indices: this.indices });
    this.#transposed ??= this.#transpose();
    return this.#transposed;
  }

  async #transpose(): Promise<InNeighbours> {
    const n = this.columns;
    const [indptr, indices] = await Promise.all([this.indptr.read(), this.indices.read()]);
    const inPtr = new Uint32Array(n + 1);
    for (let e = 0; e < this.edges; e++) (inPtr[(indices[e] as number) + 1] as number)++;
    for (let v = 0; v < n; v++) inPtr[v + 1] = (inPtr[v + 1] as number) + (inPtr[v] as number);
    const next = inPtr.slice(0, n);
    const inIdx = new Uint32Array(Math.max(1, this.edges));
    for (let u = 0; u < this.rows; u++) {
      for (let e = indptr[u] as number; e < (indptr[u + 1] as number); e++) {
        const v = indices[e] as number;
        inIdx[next[v] as number] = u;
        next[v] = (next[v] as number) + 1;
      }
    }
    return { indptr: this.device.createBuffer('u32', inPtr), indices: this.device.createBuffer('u32', inIdx) };
  }

  /** Frees the graph's buffers. */
  destroy(): void {
    for (const b of [this.indptr, this.indices, this.weights, this.#sources]) if (b && !b.destroyed) b.destroy();
    const transposed = this.#transposed;
    this.#transposed = undefined;
    if (transposed && !this.symmetric)
      void transposed.then(
        (t) => {
          for (const b of [t.indptr, t.indices]) if (!b.destroyed) b.destroy();
        },
        () => undefined,
      );
  }
}

/** Checks that `graph` is a live Graph of `device`. */
export function checkGraph(device: Device, graph: unknown, name = 'graph'): asserts graph is Graph {
  if (!(graph instanceof Graph)) throw new InvalidArgumentError(name, 'is not a Graph (make one with createGraph)');
  if (graph.device !== device) throw new InvalidArgumentError(name, 'belongs to another device');
  if (graph.indptr.destroyed || graph.indices.destroyed) throw new InvalidArgumentError(name, 'was destroyed');
}

/** Checks that `graph` is square (vertices = rows = columns). */
export function checkSquare(graph: Graph, name = 'graph'): void {
  if (!graph.square) throw new InvalidArgumentError(name, `must be square (an adjacency matrix), got ${graph.rows} x ${graph.columns}`);
}

function integerArray(name: string, a: unknown): ArrayLike<number> {
  if (a === null || typeof a !== 'object' || typeof (a as ArrayLike<number>).length !== 'number')
    throw new InvalidArgumentError(name, 'must be an array of numbers');
  return a as ArrayLike<number>;
}

/**
 * Makes a Graph on `device` from host CSR arrays. Throws InvalidArgumentError on a
 * malformed matrix (wrong lengths, decreasing `indptr`, a column out of range, a
 * NaN weight) and LimitExceededError when the buffers do not fit the device.
 */
export function createGraph(device: Device, input: GraphInput): Graph {
  if (input === null || typeof input !== 'object') throw new InvalidArgumentError('input', 'must be an object');
  const rows = input.rows;
  const columns = input.columns ?? rows;
  checkCount('rows', rows);
  checkCount('columns', columns);
  if (rows > MAX_GRAPH_VERTICES) throw new InvalidArgumentError('rows', `must be at most ${MAX_GRAPH_VERTICES}, got ${rows}`);
  if (columns > MAX_GRAPH_VERTICES) throw new InvalidArgumentError('columns', `must be at most ${MAX_GRAPH_VERTICES}, got ${columns}`);
  const indptr = integerArray('indptr', input.indptr);
  const indices = integerArray('indices', input.indices);
  if (indptr.length !== rows + 1)
    throw new InvalidArgumentError('indptr', `must have rows + 1 = ${rows + 1} entries, got ${indptr.length}`);
  const m = indices.length;
  if (indptr[0] !== 0) throw new InvalidArgumentError('indptr', `must start at 0, got ${String(indptr[0])}`);
  for (let u = 0; u < rows; u++) {
    const a = indptr[u] as number;
    const b = indptr[u + 1] as number;
    if (!Number.isInteger(b) || b < a)
      throw new InvalidArgumentError('indptr', `entry ${u + 1} (${String(b)}) is not an integer >= entry ${u} (${a})`);
  }
  if (indptr[rows] !== m) throw new InvalidArgumentError('indptr', `must end at the number of indices (${m}), got ${String(indptr[rows])}`);
  for (let e = 0; e < m; e++) {
    const c = indices[e] as number;
    if (!Number.isInteger(c) || c < 0 || c >= columns)
      throw new InvalidArgumentError('indices', `entry ${e} (${String(c)}) is not a column in [0, ${columns})`);
  }
  let weights: Float32Array | undefined;
  if (input.weights !== undefined) {
    const w = integerArray('weights', input.weights);
    if (w.length !== m) throw new InvalidArgumentError('weights', `must have one entry per index (${m}), got ${w.length}`);
    // -0 becomes +0: weights compare numerically (MST ties are broken by vertex ids, not by the sign of zero).
    weights = Float32Array.from(w, (x) => (x === 0 ? 0 : x));
    const nan = weights.findIndex((x) => Number.isNaN(x));
    if (nan >= 0) throw new InvalidArgumentError('weights', `entry ${nan} is NaN`);
  }
  const symmetric = input.symmetric ?? false;
  if (typeof symmetric !== 'boolean') throw new InvalidArgumentError('symmetric', `must be a boolean, got ${String(symmetric)}`);
  if (symmetric) {
    if (rows !== columns) throw new InvalidArgumentError('symmetric', `a ${rows} x ${columns} matrix cannot be symmetric`);
    if (!isSymmetric(indptr, indices, weights))
      throw new InvalidArgumentError('symmetric', 'was declared, but the entries differ from those of the transpose');
  }
  checkFits(device, Math.max(rows + 1, m), 'graph');
  // Typed inputs are uploaded as they are (createBuffer copies); others are converted once.
  const asU32 = (a: ArrayLike<number>) => (a instanceof Uint32Array ? a : Uint32Array.from(a));
  return new Graph(device, rows, columns, asU32(indptr), asU32(indices), weights, symmetric);
}

/**
 * Whether the multiset of entries (u, v, w) equals that of (v, u, w): compares
 * order-independent fingerprints (sums of a strong 32-bit hash of each entry, two
 * independent lanes) of the entries and of their transposes. O(m) with no
 * allocation; a non-symmetric matrix passes only by a 64-bit hash collision.
 */
function isSymmetric(indptr: ArrayLike<number>, indices: ArrayLike<number>, weights: Float32Array | undefined): boolean {
  const bits = weights ? new Uint32Array(weights.buffer, weights.byteOffset, weights.length) : undefined;
  let fwd1 = 0;
  let fwd2 = 0;
  let rev1 = 0;
  let rev2 = 0;
  for (let u = 0; u + 1 < indptr.length; u++) {
    for (let e = indptr[u] as number, end = indptr[u + 1] as number; e < end; e++) {
      const v = indices[e] as number;
      const w = bits ? (bits[e] as number) : 0;
      fwd1 = (fwd1 + entryHash(u, v, w, 0x9e3779b1)) | 0;
      fwd2 = (fwd2 + entryHash(u, v, w, 0x85ebca77)) | 0;
      rev1 = (rev1 + entryHash(v, u, w, 0x9e3779b1)) | 0;
      rev2 = (rev2 + entryHash(v, u, w, 0x85ebca77)) | 0;
    }
  }
  return fwd1 === rev1 && fwd2 === rev2;
}

/** A 32-bit hash of an ordered entry (row, column, weight bits), seeded per lane. */
function entryHash(row: number, column: number, weightBits: number, seed: number): number {
  let x = Math.imul(row ^ seed, 0xcc9e2d51);
  x = Math.imul(x ^ (x >>> 15) ^ column, 0x1b873593);
  x = Math.imul(x ^ (x >>> 13) ^ weightBits, 0xc2b2ae35);
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  return x ^ (x >>> 16);
}
