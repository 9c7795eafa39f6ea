/**
 * A kernel over a graph in CSR form (compressed sparse rows, scipy's `csr_matrix`
 * layout): vertex v's neighbours are `indices[indptr[v] .. indptr[v + 1])`, with a
 * weight per edge. `spmv` computes y = A · x, i.e. for each vertex the weighted sum
 * of its neighbours' values: the step at the heart of PageRank, label propagation and
 * Jacobi-type graph solvers.
 *
 * One invocation per vertex loops over its row; rows have different lengths, so the
 * loop bounds differ per invocation (no barrier may sit inside: there is none). It
 * stores only its own y[v], a gather kernel: every backend runs it. Graphs with a
 * few very long rows balance better with one invocation per edge and an atomic add
 * (see `@trident/algorithms`' graph algorithms for both).
 */
import { buffer, type Device, defineKernel, uniform } from 'trident';

export const spmvKernel = defineKernel({
  name: 'csr_spmv',
  workgroupSize: 64,
  params: {
    indptr: buffer('u32', 'read'),
    indices: buffer('u32', 'read'),
    weights: buffer('f32', 'read'),
    x: buffer('f32', 'read'),
    y: buffer('f32', 'write'),
    rows: uniform('u32'),
  },
  body: ({ indptr, indices, weights, x, y, rows }, k) => {
    const v = k.let(k.globalIndex);
    k.if(v.lt(rows), () => {
      const sum = k.var('f32', 0);
      k.for({ from: indptr.load(v), to: indptr.load(v.add(1)) }, (e) => {
        sum.set(sum.add(weights.load(e).mul(x.load(indices.load(e)))));
      });
      y.store(v, sum);
    });
  },
});

/** A graph in host arrays. */
export interface Csr {
  readonly rows: number;
  readonly indptr: Uint32Array;
  readonly indices: Uint32Array;
  readonly weights: Float32Array;
}

/** A ring of `n` vertices with chords: vertex v links to v ± 1 and to (v * 7) % n, weights 1..3. */
export function ringWithChords(n: number): Csr {
  const rows: number[][] = Array.from({ length: n }, (_, v) => [(v + 1) % n, (v + n - 1) % n, (v * 7) % n]);
  const indptr = new Uint32Array(n + 1);
  rows.forEach((r, v) => {
    indptr[v + 1] = (indptr[v] ?? 0) + r.length;
  });
  const indices = Uint32Array.from(rows.flat());
  const weights = Float32Array.from(indices, (_, e) => 1 + (e % 3));
  return { rows: n, indptr, indices, weights };
}

export async function spmv(device: Device, graph: Csr, x: Float32Array): Promise<Float32Array> {
  const bufs = {
    indptr: device.createBuffer('u32', graph.indptr),
    indices: device.createBuffer('u32', graph.indices),
    weights: device.createBuffer('f32', graph.weights),
    x: device.createBuffer('f32', x),
    y: device.createBuffer('f32', graph.rows),
  };
  device.dispatch(spmvKernel, { invocations: graph.rows }, { ...bufs, rows: graph.rows });
  const y = await bufs.y.read();
  for (const b of Object.values(bufs)) b.destroy();
  return y;
}

export function spmvReference(graph: Csr, x: Float32Array): Float32Array {
  const y = new Float32Array(graph.rows);
  for (let v = 0; v < graph.rows; v++) {
    let s = 0;
    for (let e = graph.indptr[v] ?? 0; e < (graph.indptr[v + 1] ?? 0); e++) s += (graph.weights[e] ?? 0) * (x[graph.indices[e] ?? 0] ?? 0);
    y[v] = s;
  }
  return y;
}

/** Integer weights and values: the sums are exact in f32. */
export async function runCsr(device: Device, n = 300) {
  const graph = ringWithChords(n);
  const x = Float32Array.from({ length: n }, (_, v) => v % 10);
  const y = await spmv(device, graph, x);
  const want = spmvReference(graph, x);
  return { ok: y.every((v, i) => v === want[i]), edges: graph.indices.length, total: y.reduce((s, v) => s + v, 0) };
}
