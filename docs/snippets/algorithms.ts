/**
 * The algorithm-suite snippets of docs/kernels.md (see kernels.ts for how they are
 * checked). Every function takes the device first; inputs are never modified.
 */
import {
  apsp,
  bfs,
  bitonicSort,
  compact,
  components,
  createGraph,
  fromEdges,
  histogram,
  matching,
  mergeSort,
  mst,
  nbody,
  quickSort,
  radixSort,
  reduce,
  reduceInto,
  scan,
  sort,
  zcopy,
  zfill,
} from '@trident/algorithms';
import type { Device } from 'trident';

// #region primitives
export async function demoPrimitives(device: Device) {
  const x = device.createBuffer('u32', [5, 3, 9, 1]);
  const sum: number = await reduce(device, x, { op: 'sum' }); // 18; also 'min', 'max'
  const maxBuf = reduceInto(device, x, { op: 'max' }); // no readback: element 0 will hold 9
  const inclusive = scan(device, x); // Buffer: [5, 8, 17, 18]
  const exclusive = scan(device, x, { exclusive: true }); // Buffer: [0, 5, 8, 17]
  const counts = histogram(device, x, { bins: 8 }); // Buffer of 8 counts; values >= bins are not counted
  const copy = zcopy(device, x); // a new buffer with the same elements
  zfill(device, copy, 7); // every element 7
  const { count, output } = await compact(device, x, device.createBuffer('u32', [1, 0, 1, 0])); // keep where flag != 0
  return {
    sum, // 18
    max: (await maxBuf.read())[0], // 9
    inclusive: await inclusive.read(), // Uint32Array [5, 8, 17, 18]
    exclusive: await exclusive.read(), // Uint32Array [0, 5, 8, 17]
    counts: await counts.read(), // Uint32Array [0, 1, 0, 1, 0, 1, 0, 0]
    filled: await copy.read(), // Uint32Array [7, 7, 7, 7]
    count, // 2
    kept: await output.read(), // Uint32Array [5, 9]: exactly `count` elements, in input order
  };
}
// #endregion primitives

// #region sorts
export async function demoSorts(device: Device) {
  const keys = device.createBuffer('f32', [2.5, -1, 0, 2.5, -7]);
  const values = device.createBuffer('u32', [0, 1, 2, 3, 4]);
  // sort: radix sort on hardware GPUs and the CPU backend, merge sort (merge path) on software GPUs and gather-only devices.
  const sorted = sort(device, keys, { values }); // { keys: Buffer<'f32'>, values?: Buffer<'u32'> }
  // The named sorts share the signature and the result; all are stable (equal keys keep their order).
  const byBitonic = bitonicSort(device, keys); // gather passes only: every backend
  const byMerge = mergeSort(device, keys); // every backend (merge path on software GPUs and gather-only devices)
  const byQuick = await quickSort(device, keys); // async: the host drives the partitioning
  // Radix sort everywhere: workgroup passes, or on software GPUs and gather-only devices (WebGL2) a gather formulation.
  const byRadix = radixSort(device, keys, { values });
  return {
    keys: await sorted.keys.read(), // Float32Array [-7, -1, 0, 2.5, 2.5]
    values: await sorted.values?.read(), // Uint32Array [4, 1, 2, 0, 3]
    same: [byBitonic, byMerge, byQuick, byRadix].map((r) => r.keys), // each sorted like `keys`
  };
}
// #endregion sorts

// #region nbody
export async function demoNbody(device: Device) {
  // Bodies as (x, y, z, mass) per body: n = 2 here.
  const bodies = device.createBuffer('f32', [0, 0, 0, 1, 1, 0, 0, 1]);
  const result = nbody(device, bodies, { steps: 10, dt: 0.01, softening2: 1e-6 }); // leapfrog steps
  // { bodies: Buffer<'f32'> (x, y, z, mass), velocities: Buffer<'f32'> (vx, vy, vz, w) }: 4 floats per body
  const [after, velocities] = [await result.bodies.read(), await result.velocities.read()];
  return { after, velocities }; // the two bodies move toward each other along x; velocities opposite
}
// #endregion nbody

// #region graphs
export async function demoGraphs(device: Device) {
  // CSR host arrays (scipy's csr_matrix layout): row u lists u's neighbours.
  // fromEdges builds them from an edge list; symmetric = true stores both directions.
  const input = fromEdges(5, [0, 1, 2, 3], [1, 2, 0, 4], [1, 2, 5, 1], true); // triangle 0-1-2, edge 3-4
  const graph = createGraph(device, input); // { rows, columns, edges, indptr, indices, weights } on the device
  const levels = await bfs(device, graph, 0); // Buffer<'i32'>: hops from vertex 0, -1 unreachable
  const labels = await components(device, graph); // Buffer<'i32'>: the smallest vertex id of each component
  const forest = await mst(device, graph); // host arrays: { edges: Int32Array (k x 2), weights: Float32Array, totalWeight }
  const dist = apsp(device, graph); // Buffer<'f32'>: n x n row-major shortest-path lengths, Infinity unreachable
  // A bipartite graph: rows are left vertices, columns right vertices.
  const bip = createGraph(device, fromEdges(2, [0, 0, 1], [0, 1, 0], undefined, false, 2));
  const mate = await matching(device, bip); // Buffer<'i32'>: the right vertex matched to each left one, or -1
  return {
    levels: await levels.read(), // Int32Array [0, 1, 1, -1, -1]
    labels: await labels.read(), // Int32Array [0, 0, 0, 3, 3]
    mst: forest, // edges Int32Array [0, 1, 1, 2, 3, 4], weights Float32Array [1, 2, 1], totalWeight 4
    dist: await dist.read(), // dist[0 * 5 + 2] = 3 (0 -> 1 -> 2 beats the direct 5)
    matched: (await mate.read()).filter((r) => r >= 0).length, // 2
  };
}
// #endregion graphs
