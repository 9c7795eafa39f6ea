/**
 * All-pairs shortest paths by blocked Floyd–Warshall (Dulle 2016, PRAM algorithms on GPGPUs, §5.4's Floyd–Warshall,
 * in the blocked form of Venkataraman, Sahni and Mukhopadhyaya, 2003), with the k
 * loop on the host one block of APSP_BLOCK vertices at a time instead of one vertex:
 * n / 32 rounds of a few passes instead of n passes, for the same O(n^3) work. The
 * pass count is what a gather device pays most for (a WebGL2 fragment pass, a CPU
 * dispatch to the workers). Every pass is a gather (each invocation writes only
 * its own element), so every backend runs them; devices of fat serial workgroups
 * (the CPU) run the closure in one invocation and the rest phase by rows instead
 * (closeSerialKernel, restRowsKernel): fewer dispatches, contiguous inner loops.
 *
 * Round K (the block of vertices [K0, K0 + s)), on d holding the shortest paths
 * through vertices before K0:
 * 1. closure of the diagonal block: ceil(log2(s - 1)) min-plus squarings of d[K][K]
 *    (double-buffered s x s temporaries), which leave the paths through K as well;
 * 2. cross: the K rows and K columns (into a temporary): d[i][j] for i in K is the
 *    min over k in K of C[i][k] + d[k][j] (C the closure), and symmetrically for j in K;
 * 3. the rest, in place: d[i][j] = min(d[i][j], min over k in K of col[i][k] + row[k][j]),
 *    and the K rows and columns copied back from the temporary.
 * Every min folds k in ascending order with f32 sums, exactly as `apspReference`
 * does, so every backend agrees bit for bit.
 */
import {
  type Buffer,
  buffer,
  type Device,
  defineKernel,
  f32,
  InvalidArgumentError,
  min,
  select,
  u32,
  uniform,
  type Val,
} from '@trident/core';
import { cachedKernel, checkFits, gatherSize, scratch } from '../common.ts';
import { classFamily } from '../plan.ts';
import { checkGraph, checkSquare, type Graph } from './graph.ts';

const INF_BITS = 0x7f800000;

/** d[i][j] = the lightest stored edge i -> j, 0 on the diagonal, +inf otherwise. */
function initKernel(device: Device, weighted: boolean) {
  const wg = gatherSize(device.caps);
  return cachedKernel(`apsp_init:${weighted}:${wg}`, () =>
    defineKernel({
      name: 'apsp_init',
      workgroupSize: wg,
      params: {
        indptr: buffer('u32', 'read'),
        indices: buffer('u32', 'read'),
        weights: buffer('f32', 'read'),
        dist: buffer('f32', 'write'),
        n: uniform('u32'),
        total: uniform('u32'),
      },
      body: ({ indptr, indices, weights, dist, n, total }, k) => {
        const g = k.let(k.globalIndex, 'g');
        k.if(g.lt(total), () => {
          const i = k.let(g.div(n), 'i');
          const j = k.let(g.sub(i.mul(n)), 'j');
          // A linear scan of row i: O(n * m) in all, below the O(n^3) of the passes for any graph
          // apsp can hold, and it needs no sorted rows.
          const e = k.let(indptr.load(i), 'e');
          const end = k.let(indptr.load(i.add(1)), 'end');
          const best = k.let(u32(INF_BITS).bitcast('f32'), 'best');
          k.while(
            () => e.lt(end),
            () => {
              k.if(indices.load(e).eq(j), () => best.set(min(best, weighted ? weights.load(e) : f32(1))));
              e.set(e.add(1));
            },
          );
          dist.store(g, select(i.eq(j), f32(0), best));
        });
      },
    }),
  );
}

/** Vertices per block of the blocked Floyd–Warshall (the k loop's step on the host). */
export const APSP_BLOCK = 32;

/** Min-plus squarings that close an s x s block: paths of up to s - 1 edges. */
export function closureSquarings(s: number): number {
  return s <= 2 ? 0 : Math.ceil(Math.log2(s - 1));
}

/**
 * One min-plus squaring of an s x s block read at src[off + a * stride + b]:
 * dst[a * s + b] = min over k of (src[a][k] + src[k][b]), k ascending, from src[a][b].
 */
function squareKernel(device: Device) {
  const wg = gatherSize(device.caps);
  return cachedKernel(`apsp_square:${wg}`, () =>
    defineKernel({
      name: 'apsp_square',
      workgroupSize: wg,
      params: { src: buffer('f32', 'read'), dst: buffer('f32', 'write'), off: uniform('u32'), stride: uniform('u32'), s: uniform('u32') },
      body: ({ src, dst, off, stride, s }, k) => {
        const g = k.let(k.globalIndex, 'g');
        k.if(g.lt(s.mul(s)), () => {
          const a = k.let(g.div(s), 'a');
          const b = k.let(g.sub(a.mul(s)), 'b');
          const rowA = k.let(off.add(a.mul(stride)), 'rowA');
          const best = k.let(src.load(rowA.add(b)), 'best');
          k.for({ from: 0, to: s }, (kk) => {
            best.set(min(best, src.load(rowA.add(kk)).add(src.load(off.add(kk.mul(stride)).add(b)))));
          });
          dst.store(g, best);
        });
      },
    }),
  );
}

/**
 * All closureSquarings(s) squarings in one invocation, for devices of few fat
 * invocations that may store anywhere (see restByRows): one dispatch instead of
 * up to five, whose fixed cost is most of a CPU round's time at these sizes. The
 * same folds in the same order as squareKernel: the same bits. The closure ends in
 * `a` (`b` is the other temporary).
 */
function closeSerialKernel() {
  return cachedKernel('apsp_close_serial', () =>
    defineKernel({
      name: 'apsp_close_serial',
      workgroupSize: 1,
      params: {
        dist: buffer('f32', 'read'),
        a: buffer('f32', 'read_write'),
        b: buffer('f32', 'read_write'),
        n: uniform('u32'),
        k0: uniform('u32'),
        s: uniform('u32'),
        squarings: uniform('u32'),
      },
      body: ({ dist, a, b, n, k0, s, squarings }, k) => {
        k.if(k.globalIndex.eq(0), () => {
          const ss = k.let(s.mul(s), 'ss');
          k.for({ from: 0, to: ss }, (g) => {
            const r = k.let(g.div(s), 'r');
            a.store(
              g,
              dist.load(
                k0
                  .add(r)
                  .mul(n)
                  .add(k0)
                  .add(g.sub(r.mul(s))),
              ),
            );
          });
          k.for({ from: 0, to: squarings }, () => {
            k.for({ from: 0, to: ss }, (g) => {
              const r = k.let(g.div(s), 'r');
              const c = k.let(g.sub(r.mul(s)), 'c');
              const best = k.let(a.load(g), 'best');
              k.for({ from: 0, to: s }, (kk) => best.set(min(best, a.load(r.mul(s).add(kk)).add(a.load(kk.mul(s).add(c))))));
              b.store(g, best);
            });
            k.for({ from: 0, to: ss }, (g) => a.store(g, b.load(g)));
          });
        });
      },
    }),
  );
}

/**
 * The K rows and columns through the closure C (read at c[cOff + a * cStride + b]):
 * cross[a * n + j] (a < s) is row K0 + a, cross[s * n + i * s + b] is column K0 + b.
 */
function crossKernel(device: Device) {
  const wg = gatherSize(device.caps);
  return cachedKernel(`apsp_cross:${wg}`, () =>
    defineKernel({
      name: 'apsp_cross',
      workgroupSize: wg,
      params: {
        dist: buffer('f32', 'read'),
        c: buffer('f32', 'read'),
        cross: buffer('f32', 'write'),
        n: uniform('u32'),
        k0: uniform('u32'),
        s: uniform('u32'),
        cOff: uniform('u32'),
        cStride: uniform('u32'),
      },
      body: ({ dist, c, cross, n, k0, s, cOff, cStride }, k) => {
        const g = k.let(k.globalIndex, 'g');
        const half = k.let(s.mul(n), 'half');
        k.if(g.lt(half.mul(2)), () => {
          const isRow = k.let(g.lt(half), 'isRow');
          const h = k.let(select(isRow, g, g.sub(half)), 'h');
          // Row part: (a, j) = (h / n, h mod n); column part: (i, b) = (h / s, h mod s).
          const width = k.let(select(isRow, n, s), 'width');
          const p = k.let(h.div(width), 'p');
          const q = k.let(h.sub(p.mul(width)), 'q');
          // The row's or column's vertex outside the block, and its offset inside the block if it is in it.
          const other = k.let(select(isRow, q, p), 'other');
          const inBlock = k.let(other.ge(k0).and(other.lt(k0.add(s))), 'inBlock');
          const a = k.let(select(isRow, p, other.sub(k0)), 'a');
          const b = k.let(select(isRow, other.sub(k0), q), 'b');
          const i = k.let(select(isRow, k0.add(p), p), 'i');
          const j = k.let(select(isRow, q, k0.add(q)), 'j');
          const best = k.let(dist.load(i.mul(n).add(j)), 'best');
          k.if(
            inBlock,
            () => best.set(c.load(cOff.add(a.mul(cStride)).add(b))),
            () =>
              k.if(
                isRow,
                () => {
                  const cRow = k.let(cOff.add(a.mul(cStride)), 'cRow');
                  k.for({ from: 0, to: s }, (kk) => {
                    best.set(min(best, c.load(cRow.add(kk)).add(dist.load(k0.add(kk).mul(n).add(j)))));
                  });
                },
                () => {
                  const dRow = k.let(i.mul(n).add(k0), 'dRow');
                  k.for({ from: 0, to: s }, (kk) => {
                    best.set(min(best, dist.load(dRow.add(kk)).add(c.load(cOff.add(kk.mul(cStride)).add(b)))));
                  });
                },
              ),
          );
          cross.store(g, best);
        });
      },
    }),
  );
}

/** Every other pair through the block, in place; the K rows and columns copied from `cross`. */
function restKernel(device: Device) {
  const wg = gatherSize(device.caps);
  return cachedKernel(`apsp_rest:${wg}`, () =>
    defineKernel({
      name: 'apsp_rest',
      workgroupSize: wg,
      params: {
        dist: buffer('f32', 'read_write'),
        cross: buffer('f32', 'read'),
        n: uniform('u32'),
        total: uniform('u32'),
        k0: uniform('u32'),
        s: uniform('u32'),
      },
      body: ({ dist, cross, n, total, k0, s }, k) => {
        const g = k.let(k.globalIndex, 'g');
        k.if(g.lt(total), () => {
          const i = k.let(g.div(n), 'i');
          const j = k.let(g.sub(i.mul(n)), 'j');
          const rowIn = k.let(i.ge(k0).and(i.lt(k0.add(s))), 'rowIn');
          const colIn = k.let(j.ge(k0).and(j.lt(k0.add(s))), 'colIn');
          const cols = k.let(s.mul(n), 'cols');
          const best = k.let(dist.load(g), 'best');
          k.if(
            rowIn,
            () => best.set(cross.load(i.sub(k0).mul(n).add(j))),
            () =>
              k.if(
                colIn,
                () => best.set(cross.load(cols.add(i.mul(s)).add(j.sub(k0)))),
                () => {
                  k.for({ from: 0, to: s }, (kk) => {
                    best.set(min(best, cross.load(cols.add(i.mul(s)).add(kk)).add(cross.load(kk.mul(n).add(j)))));
                  });
                },
              ),
          );
          dist.store(g, best);
        });
      },
    }),
  );
}

/**
 * The rest phase by rows, for devices of few fat invocations that may store
 * anywhere ('serial-workgroups' and 'scatter': the CPU's workers): one invocation
 * per row i walks k, then j innermost along contiguous rows (as a sequential
 * Floyd–Warshall does), instead of one invocation per pair with a k loop of index
 * arithmetic. Each pair still folds k in ascending order: the same bits.
 */
function restRowsKernel() {
  return cachedKernel('apsp_rest_rows', () =>
    defineKernel({
      name: 'apsp_rest_rows',
      workgroupSize: 1,
      params: {
        dist: buffer('f32', 'read_write'),
        cross: buffer('f32', 'read'),
        n: uniform('u32'),
        k0: uniform('u32'),
        s: uniform('u32'),
      },
      body: ({ dist, cross, n, k0, s }, k) => {
        const i = k.let(k.globalIndex, 'i');
        k.if(i.lt(n), () => {
          const row = k.let(i.mul(n), 'row');
          const cols = k.let(s.mul(n).add(i.mul(s)), 'cols');
          const end = k.let(k0.add(s), 'end');
          k.if(
            i.ge(k0).and(i.lt(end)),
            () => k.for({ from: 0, to: n }, (j) => dist.store(row.add(j), cross.load(i.sub(k0).mul(n).add(j)))),
            () => {
              k.for({ from: 0, to: s }, (kk) => {
                const dik = k.let(cross.load(cols.add(kk)), 'dik');
                // An unreachable k changes nothing on this row (inf + x is never below a length).
                k.if(dik.lt(u32(INF_BITS).bitcast('f32')), () => {
                  // The loops run over dist's own indices x = row + j (so the CPU's WebAssembly proves
                  // dist's accesses in bounds once per loop); row k of the block is at x + (kk * n - row).
                  const shift = k.let(kk.mul(n).sub(row), 'shift');
                  const relax = (x: Val<'u32'>) => {
                    const via = k.let(dik.add(cross.load(x.add(shift))), 'via');
                    k.if(via.lt(dist.load(x)), () => dist.store(x, via));
                  };
                  k.for({ from: row, to: row.add(k0) }, relax);
                  k.for({ from: row.add(end), to: row.add(n) }, relax);
                });
              });
              k.for({ from: 0, to: s }, (b) => dist.store(row.add(k0).add(b), cross.load(cols.add(b))));
            },
          );
        });
      },
    }),
  );
}

/** True where the closure runs in one invocation and the rest phase by rows (closeSerialKernel, restRowsKernel). */
function restByRows(device: Device): boolean {
  return classFamily(device, 'apsp') === 'serial';
}

/**
 * Shortest-path lengths between all pairs of a square graph by edge weight,
 * following stored (directed) edges: an (n, n) row-major f32 buffer, 0 on the
 * diagonal, +Infinity where unreachable. Pattern-only graphs weigh 1 per edge;
 * of duplicate entries the lightest counts. Sums round to f32 in the blocked
 * order above, the same on every backend and in `apspReference`.
 *
 * Complexity: O(n^3) work (plus O(n * 32^2 * 5) for the closures) in about 7n / 32
 * passes, O(n^2) memory. Throws
 * InvalidArgumentError for a non-square graph or negative weights (negative
 * cycles would make lengths undefined), LimitExceededError when n^2 elements do
 * not fit one buffer of the device.
 */
export function apsp(device: Device, graph: Graph): Buffer<'f32'> {
  checkGraph(device, graph);
  checkSquare(graph);
  if (graph.minWeight < 0) throw new InvalidArgumentError('graph', `has a negative weight (${graph.minWeight}); apsp takes weights >= 0`);
  const n = graph.rows;
  const total = n * n;
  checkFits(device, total, 'apsp distance matrix (n^2 elements)');
  const dist = device.createBuffer('f32', total);
  if (total === 0) return dist;
  // Pattern-only graphs bind a placeholder (the kernel reads no weights then).
  const weights = graph.weights ?? scratch(device, 'graph-placeholder', 'f32', 1);
  device.dispatch(
    initKernel(device, graph.weights !== undefined),
    { invocations: total },
    {
      indptr: graph.indptr,
      indices: graph.indices,
      weights,
      dist,
      n,
      total,
    },
  );
  const blocks = [
    scratch(device, 'apsp.block0', 'f32', APSP_BLOCK * APSP_BLOCK),
    scratch(device, 'apsp.block1', 'f32', APSP_BLOCK * APSP_BLOCK),
  ];
  const cross = scratch(device, 'apsp.cross', 'f32', 2 * Math.min(n, APSP_BLOCK) * n);
  const byRows = restByRows(device);
  for (let k0 = 0; k0 < n; k0 += APSP_BLOCK) {
    const s = Math.min(APSP_BLOCK, n - k0);
    // The closure starts from the diagonal block in place and ends in a temporary (or in place when s <= 2).
    let c: { buffer: Buffer<'f32'>; off: number; stride: number } = { buffer: dist, off: k0 * n + k0, stride: n };
    const squarings = closureSquarings(s);
    if (squarings > 0 && byRows) {
      const [a, b] = blocks as [Buffer<'f32'>, Buffer<'f32'>];
      device.dispatch(closeSerialKernel(), { invocations: 1 }, { dist, a, b, n, k0, s, squarings });
      c = { buffer: a, off: 0, stride: s };
    }
    for (let r = 0; r < (byRows ? 0 : squarings); r++) {
      const dst = blocks[r % 2] as Buffer<'f32'>;
      device.dispatch(squareKernel(device), { invocations: s * s }, { src: c.buffer, dst, off: c.off, stride: c.stride, s });
      c = { buffer: dst, off: 0, stride: s };
    }
    device.dispatch(
      crossKernel(device),
      { invocations: 2 * s * n },
      { dist, c: c.buffer, cross, n, k0, s, cOff: c.off, cStride: c.stride },
    );
    if (byRows) device.dispatch(restRowsKernel(), { invocations: n }, { dist, cross, n, k0, s });
    else device.dispatch(restKernel(device), { invocations: total }, { dist, cross, n, total, k0, s });
  }
  return dist;
}
