/**
 * R-MAT graphs built on worker threads, for the suite's largest graph steps (2^30 stored edges:
 * an edge list of 2^29 pairs, 25 random draws an edge, then a CSR of 4 GiB). The graph is the one
 * `rmatGraph(scale, edgeFactor, { symmetric, seed })` of @trident/algorithms builds, entry for
 * entry, whatever the number of threads:
 *
 * - generation: each thread writes one range of the edge list, starting from the xorshift32
 *   state the sequential generator has at that edge. xorshift32 is linear over GF(2), so the
 *   state k draws ahead is a 32 x 32 bit matrix (the step's k-th power, by squaring) times the
 *   seed: no thread needs the draws before its range.
 * - CSR: a counting sort by source, split by rows. Each thread owns a range of rows, reads the
 *   whole edge list and counts (then places) only the entries of its rows, in edge order, as the
 *   sequential fromEdges places them; the rows of the placing pass are split so that each thread
 *   places about as many entries (R-MAT's low ids hold most of them).
 *
 * Node only (worker_threads): the browser page's graph cases keep the sequential generator. The
 * calling thread waits on Atomics while the workers run, so the suite's synchronous case setup
 * can use it. The workers write shared memory; the graph returned is a copy in ordinary memory. The workers run the source of the functions below that do the work (self-contained:
 * they read nothing outside their arguments and each other); test/cli-suite-graphs.node.test.ts holds the result equal to
 * rmatGraph's for one and several threads.
 */
import { availableParallelism } from 'node:os';
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import type { GraphInput } from '@trident/algorithms';

/** Edge pairs a thread is worth starting for (below this the calling thread does the work). */
const EDGES_PER_THREAD = 2 ** 20;

export interface RmatThreadsOptions {
  readonly seed?: number;
  readonly symmetric?: boolean;
  /** Threads to use (default: one per logical CPU, fewer for small graphs; 1 runs on the calling thread). */
  readonly threads?: number;
}

/** What building the graph cost on the host, by phase. */
export interface RmatBuildTimes {
  readonly threads: number;
  readonly generationMs: number;
  readonly csrMs: number;
}

/** One xorshift32 step (13, 17, 5), as the sequential generator draws. */
function xorshift(x: number): number {
  let y = x ^ (x << 13);
  y ^= y >>> 17;
  y ^= y << 5;
  return y >>> 0;
}

/** A 32 x 32 matrix over GF(2) as its 32 columns: column j is the image of bit j. */
type BitMatrix = Uint32Array;

function applyMatrix(m: BitMatrix, x: number): number {
  let out = 0;
  for (let j = 0; j < 32; j++) if ((x >>> j) & 1) out ^= m[j] as number;
  return out >>> 0;
}

/** The matrix of `a` after `b`. */
function compose(a: BitMatrix, b: BitMatrix): BitMatrix {
  return Uint32Array.from(b, (column) => applyMatrix(a, column));
}

/** The xorshift32 state `steps` draws after `state` (steps < 2^53), in O(log steps) matrix products. */
export function xorshiftJump(state: number, steps: number): number {
  let power: BitMatrix = Uint32Array.from({ length: 32 }, (_, j) => xorshift(2 ** j));
  let x = state >>> 0;
  for (let k = steps; k > 0; k = Math.floor(k / 2)) {
    if (k % 2 === 1) x = applyMatrix(power, x);
    power = compose(power, power);
  }
  return x;
}

// The three functions the workers run (their source is sent to each worker): self-contained. rmatRange
// repeats generate.ts's rmatEdges rather than sending that function's source: an imported function's
// callers name it as the bundler or test runner rewrote the import, which the worker's copy would not
// match; test/cli-suite-graphs.node.test.ts holds the two to the same graphs.

/** R-MAT edges [from, to) from xorshift32 state `state`: packages/algorithms/src/graph/generate.ts's rmatEdges, the same draws. */
function rmatRange(us: Uint32Array, vs: Uint32Array, from: number, to: number, scale: number, state: number): void {
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
      // 1 where r >= t, 0 where r < t, for integers below 2^32, without a branch.
      const geA = ((r - a) * k + 1) | 0;
      const geAB = ((r - ab) * k + 1) | 0;
      const geABC = ((r - abc) * k + 1) | 0;
      u = (u << 1) | geAB;
      v = (v << 1) | (geA ^ geAB ^ geABC);
    }
    us[e] = u;
    vs[e] = v;
  }
}

/** Adds the entries of rows [lo, hi) to indptr[row + 1] (the rows' counts; other threads own the other rows). */
function countRows(us: Uint32Array, vs: Uint32Array, indptr: Uint32Array, lo: number, hi: number, symmetric: boolean): void {
  const span = hi - lo;
  const m = us.length;
  for (let e = 0; e < m; e++) {
    const u = us[e] as number;
    if (u - lo < span && u >= lo) indptr[u + 1] = (indptr[u + 1] as number) + 1;
    if (symmetric) {
      const v = vs[e] as number;
      if (v - lo < span && v >= lo) indptr[v + 1] = (indptr[v + 1] as number) + 1;
    }
  }
}

/** Places the entries of rows [lo, hi) in edge order (the reverse of edge e right after e itself), as fromEdges does. */
function fillRows(
  us: Uint32Array,
  vs: Uint32Array,
  indptr: Uint32Array,
  indices: Uint32Array,
  lo: number,
  hi: number,
  symmetric: boolean,
): void {
  const span = hi - lo;
  const next = indptr.slice(lo, hi);
  const m = us.length;
  for (let e = 0; e < m; e++) {
    const u = us[e] as number;
    const v = vs[e] as number;
    if (u - lo < span && u >= lo) {
      const at = next[u - lo] as number;
      next[u - lo] = at + 1;
      indices[at] = v;
    }
    if (symmetric && v - lo < span && v >= lo) {
      const at = next[v - lo] as number;
      next[v - lo] = at + 1;
      indices[at] = u;
    }
  }
}

export type Task =
  | { readonly kind: 'generate'; readonly from: number; readonly to: number; readonly scale: number; readonly state: number }
  | { readonly kind: 'count'; readonly lo: number; readonly hi: number; readonly symmetric: boolean }
  | { readonly kind: 'fill'; readonly lo: number; readonly hi: number; readonly symmetric: boolean };

export interface RmatArrays {
  readonly us: Uint32Array;
  readonly vs: Uint32Array;
  readonly indptr: Uint32Array;
  readonly indices: Uint32Array;
}

/** Runs one task (also in the workers, by its source: it calls the three functions above by name). */
function runTask(task: Task, a: RmatArrays): void {
  if (task.kind === 'generate') rmatRange(a.us, a.vs, task.from, task.to, task.scale, task.state);
  else if (task.kind === 'count') countRows(a.us, a.vs, a.indptr, task.lo, task.hi, task.symmetric);
  else fillRows(a.us, a.vs, a.indptr, a.indices, task.lo, task.hi, task.symmetric);
}

/**
 * The workers' program: run one task on the shared arrays, post an error if it failed, then
 * count itself done on `done[0]` and wake the waiting thread. CommonJS, as an eval worker runs.
 */
const WORKER_SOURCE = `'use strict';
const { workerData } = require('node:worker_threads');
const rmatRange = ${rmatRange.toString()};
const countRows = ${countRows.toString()};
const fillRows = ${fillRows.toString()};
const runTask = ${runTask.toString()};
const { task, buffers, done, port } = workerData;
const arrays = {};
for (const name of Object.keys(buffers)) arrays[name] = new Uint32Array(buffers[name]);
try {
  runTask(task, arrays);
} catch (err) {
  port.postMessage(String(err && err.stack ? err.stack : err));
} finally {
  port.close();
  Atomics.add(done, 0, 1);
  Atomics.notify(done, 0);
}
`;

/**
 * The shared memory behind each array, for a worker to view whole. A typed array sent to a worker
 * arrives with its length cut to 32 bits of bytes (V8's serializer): one of 2^30 u32 (4 GiB, the
 * CSR of scale 25 at edge factor 16) arrives empty, and every write to it is silently dropped.
 */
function sharedBuffers(arrays: RmatArrays): Record<keyof RmatArrays, SharedArrayBuffer> {
  const buffer = (a: Uint32Array): SharedArrayBuffer => {
    if (!(a.buffer instanceof SharedArrayBuffer) || a.byteOffset !== 0 || a.byteLength !== a.buffer.byteLength)
      throw new Error('rmat-threads: a worker array must view a whole SharedArrayBuffer');
    return a.buffer;
  };
  return { us: buffer(arrays.us), vs: buffer(arrays.vs), indptr: buffer(arrays.indptr), indices: buffer(arrays.indices) };
}

/** Runs the tasks, one worker each, and blocks until all finished; a task's error is rethrown here. */
export function runOnWorkers(tasks: readonly Task[], arrays: RmatArrays): void {
  const buffers = sharedBuffers(arrays);
  const done = new Int32Array(new SharedArrayBuffer(4));
  const ports: MessagePort[] = [];
  for (const task of tasks) {
    const { port1, port2 } = new MessageChannel();
    ports.push(port1);
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { task, buffers, done, port: port2 }, transferList: [port2] });
    // The worker ends by itself once its task is done; nothing here should keep the process alive for it.
    worker.unref();
  }
  for (let finished = Atomics.load(done, 0); finished < tasks.length; finished = Atomics.load(done, 0)) Atomics.wait(done, 0, finished);
  const errors: string[] = [];
  for (const port of ports) {
    for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) errors.push(String(m.message));
    port.close();
  }
  if (errors.length > 0) throw new Error(`R-MAT worker failed: ${errors[0]}`);
}

/** Splits [0, total) into `parts` contiguous ranges of nearly equal size. */
function evenSplit(total: number, parts: number): Array<[number, number]> {
  return Array.from({ length: parts }, (_, i) => [Math.floor((total * i) / parts), Math.floor((total * (i + 1)) / parts)]);
}

/** The first row of each of `parts` ranges holding about equal shares of a total, given its prefix sums over rows. */
function balancedStarts(prefix: (row: number) => number, rows: number, parts: number): number[] {
  const total = prefix(rows);
  const starts = [0];
  for (let i = 1; i < parts; i++) {
    const want = (total * i) / parts;
    let lo = starts[i - 1] as number;
    let hi = rows;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if (prefix(mid) < want) lo = mid + 1;
      else hi = mid;
    }
    starts.push(lo);
  }
  return starts;
}

const toRanges = (starts: readonly number[], rows: number): Array<[number, number]> => starts.map((s, i) => [s, starts[i + 1] ?? rows]);

/** Row ranges holding about equal numbers of entries, by the offsets. */
function entrySplit(indptr: Uint32Array, rows: number, parts: number): Array<[number, number]> {
  return toRanges(
    balancedStarts((row) => indptr[row] as number, rows, parts),
    rows,
  );
}

/**
 * Row ranges holding about equal numbers of entries before they are counted: estimated from a
 * strided sample of the edges, in buckets of 2^shift rows (R-MAT's lowest ids hold most entries,
 * so equal row ranges would leave one thread most of the counting).
 */
function sampledSplit(us: Uint32Array, vs: Uint32Array, scale: number, parts: number, symmetric: boolean): Array<[number, number]> {
  const rows = 2 ** scale;
  if (parts === 1) return [[0, rows]];
  const shift = Math.max(0, scale - 16);
  const buckets = new Float64Array(rows / 2 ** shift + 1);
  const m = us.length;
  const stride = Math.max(1, Math.floor(m / 2 ** 20));
  const add = (row: number): void => {
    const b = Math.floor(row / 2 ** shift) + 1;
    buckets[b] = (buckets[b] as number) + 1;
  };
  for (let e = 0; e < m; e += stride) {
    add(us[e] as number);
    if (symmetric) add(vs[e] as number);
  }
  for (let b = 1; b < buckets.length; b++) buckets[b] = (buckets[b] as number) + (buckets[b - 1] as number);
  const starts = balancedStarts((bucket) => buckets[bucket] as number, buckets.length - 1, parts);
  return toRanges(
    starts.map((b) => b * 2 ** shift),
    rows,
  );
}

/** The default thread count for m edge pairs: one per logical CPU, fewer where the graph is small. */
export function defaultThreads(edges: number): number {
  return Math.max(1, Math.min(availableParallelism(), Math.ceil(edges / EDGES_PER_THREAD)));
}

/**
 * The graph `rmatGraph(scale, edgeFactor, { symmetric, seed })` gives (unweighted), built on
 * `threads` worker threads (1: on this thread), and what each host phase took.
 */
export function rmatGraphThreads(
  scale: number,
  edgeFactor: number,
  options: RmatThreadsOptions = {},
): { graph: GraphInput; times: RmatBuildTimes } {
  const n = 2 ** scale;
  const m = edgeFactor * n;
  const symmetric = options.symmetric === true;
  const threads = Math.max(1, Math.floor(options.threads ?? defaultThreads(m)));
  const seed = (options.seed ?? 4242) >>> 0 || 1;
  // Shared memory where workers write the arrays in place.
  const alloc = (length: number): Uint32Array =>
    threads === 1 ? new Uint32Array(length) : new Uint32Array(new SharedArrayBuffer(4 * length));
  const t0 = performance.now();
  const edges = { us: alloc(m), vs: alloc(m), indptr: alloc(n + 1), indices: alloc(0) };
  const run = (tasks: readonly Task[], arrays: RmatArrays): void => {
    if (threads === 1) for (const t of tasks) runTask(t, arrays);
    else runOnWorkers(tasks, arrays);
  };
  run(
    evenSplit(m, threads).map(([from, to]) => ({ kind: 'generate', from, to, scale, state: xorshiftJump(seed, from * scale) })),
    edges,
  );
  const t1 = performance.now();
  run(
    sampledSplit(edges.us, edges.vs, scale, threads, symmetric).map(([lo, hi]) => ({ kind: 'count', lo, hi, symmetric })),
    edges,
  );
  const { indptr } = edges;
  for (let u = 0; u < n; u++) indptr[u + 1] = (indptr[u + 1] as number) + (indptr[u] as number);
  const arrays = { ...edges, indices: alloc(m * (symmetric ? 2 : 1)) };
  run(
    entrySplit(indptr, n, threads).map(([lo, hi]) => ({ kind: 'fill', lo, hi, symmetric })),
    arrays,
  );
  // The graph in memory of its own: Dawn's queue.writeBuffer crashes the process (a segmentation
  // fault) on a view of a SharedArrayBuffer, and createGraph uploads typed arrays as they are.
  const own = (a: Uint32Array): Uint32Array => (a.buffer instanceof SharedArrayBuffer ? a.slice() : a);
  const graph: GraphInput = { rows: n, columns: n, indptr: own(indptr), indices: own(arrays.indices), ...(symmetric ? { symmetric } : {}) };
  const t2 = performance.now();
  return { graph, times: { threads, generationMs: t1 - t0, csrMs: t2 - t1 } };
}
