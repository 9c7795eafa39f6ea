/**
 * The device side of the graph commands of `trident run` (bfs, components, mst,
 * apsp, matching). The job carries the CSR arrays as inputs ('indptr', 'indices',
 * optional 'weights') and the matrix shape as params ('rows', 'columns').
 */
import { apsp, bfs, components, createGraph, type Graph, type GraphInput, matching, mst } from '@trident/algorithms';
import { type Device, InvalidArgumentError } from 'trident';
import type { HostArray, JobOutputs, JobSpec } from './execute.ts';

function graphOf(device: Device, spec: JobSpec): Graph {
  const { indptr, indices, weights } = spec.inputs;
  if (!indptr || !indices) throw new Error('graph job without indptr / indices');
  const input: GraphInput = {
    rows: spec.params.rows as number,
    columns: spec.params.columns as number,
    indptr: indptr.data,
    indices: indices.data,
    ...(weights ? { weights: weights.data } : {}),
  };
  // A .npz does not say whether the matrix is symmetric; createGraph's O(m) check
  // finds out, and a symmetric graph lets bfs search bottom-up.
  if (input.rows === input.columns) {
    try {
      return createGraph(device, { ...input, symmetric: true });
    } catch (e) {
      if (!(e instanceof InvalidArgumentError && e.argument === 'symmetric')) throw e;
    }
  }
  return createGraph(device, input);
}

const host = (data: Int32Array | Float32Array | Float64Array, shape: readonly number[] = [data.length]): HostArray => ({
  dtype: data instanceof Int32Array ? 'i32' : data instanceof Float64Array ? 'f64' : 'f32',
  shape,
  data,
});

type Executor = (device: Device, spec: JobSpec) => Promise<JobOutputs>;

async function withGraph(device: Device, spec: JobSpec, body: (g: Graph) => Promise<JobOutputs>): Promise<JobOutputs> {
  const g = graphOf(device, spec);
  try {
    return await body(g);
  } finally {
    g.destroy();
  }
}

export const GRAPH_EXECUTORS: Record<string, Executor> = {
  bfs: (device, spec) =>
    withGraph(device, spec, async (g) => ({ out: host(await (await bfs(device, g, spec.params.source as number)).read()) })),
  components: (device, spec) => withGraph(device, spec, async (g) => ({ out: host(await (await components(device, g)).read()) })),
  mst: (device, spec) =>
    withGraph(device, spec, async (g) => {
      const f = await mst(device, g);
      return { out: host(f.edges, [f.weights.length, 2]), 'out-weight': host(Float64Array.of(f.totalWeight)) };
    }),
  apsp: (device, spec) => withGraph(device, spec, async (g) => ({ out: host(await apsp(device, g).read(), [g.rows, g.rows]) })),
  matching: (device, spec) => withGraph(device, spec, async (g) => ({ out: host(await (await matching(device, g)).read()) })),
};
