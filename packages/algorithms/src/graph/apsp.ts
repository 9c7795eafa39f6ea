/**
 * All-pairs shortest paths by Floyd–Warshall (seed 000 §5.4): the k loop on the
 * host, one n x n gather pass per k, in place — row k and column k do not change
 * in pass k (d[k][k] = 0 with no negative weights), so no double buffer is needed.
 */
import { type Buffer, buffer, type Device, defineKernel, f32, InvalidArgumentError, min, select, u32, uniform } from '@trident/core';
import { cachedKernel, checkFits, gatherSize, scratch } from '../common.ts';
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

function relaxKernel(device: Device) {
  const wg = gatherSize(device.caps);
  return cachedKernel(`apsp_relax:${wg}`, () =>
    defineKernel({
      name: 'apsp_relax',
      workgroupSize: wg,
      params: { dist: buffer('f32', 'read_write'), n: uniform('u32'), total: uniform('u32'), k: uniform('u32') },
      body: ({ dist, n, total, k: kk }, k) => {
        const g = k.let(k.globalIndex, 'g');
        k.if(g.lt(total), () => {
          const i = k.let(g.div(n), 'i');
          const j = k.let(g.sub(i.mul(n)), 'j');
          const via = k.let(dist.load(i.mul(n).add(kk)).add(dist.load(kk.mul(n).add(j))), 'via');
          dist.store(g, min(dist.load(g), via));
        });
      },
    }),
  );
}

/**
 * Shortest-path lengths between all pairs of a square graph by edge weight,
 * following stored (directed) edges: an (n, n) row-major f32 buffer, 0 on the
 * diagonal, +Infinity where unreachable. Pattern-only graphs weigh 1 per edge;
 * of duplicate entries the lightest counts. Sums round to f32 in the order of
 * the k loop (as `apspReference`).
 *
 * Complexity: O(n^3) work in n + 1 passes, O(n^2) memory. Throws
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
  const relax = relaxKernel(device);
  for (let k = 0; k < n; k++) device.dispatch(relax, { invocations: total }, { dist, n, total, k });
  return dist;
}
