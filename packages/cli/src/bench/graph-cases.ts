/**
 * Benchmark cases of the graph algorithms: BFS and connected
 * components in GTEPS (stored edges, i.e. both directions of each undirected
 * edge, traversed per second: m / time), MST and APSP in ms. The size n is the
 * number of stored edges (vertices for APSP). Graphs are undirected (symmetric):
 * uniform random with average degree 8 ('random'), and R-MAT with edge factor 8
 * ('rmat', skewed degrees) or 16 ('rmat ef16': Graph500's shape, the GPU machine's suite's
 * largest graphs; bench/suite-cases.ts).
 *
 * Beside Trident, in Node and in the same run: graphology (graphology-traversal's
 * bfsFromNode, graphology-components' connectedComponents, graphology-shortest-path's
 * dijkstra.singleSource from every vertex for APSP; it has no MST) and Trident's
 * own sequential references. Graph construction is untimed for everyone.
 */

import {
  apsp,
  apspReference,
  bfs,
  bfsReference,
  components,
  componentsReference,
  createGraph,
  type Graph as DeviceGraph,
  floydWarshallReference,
  type GraphInput,
  mst,
  mstReference,
  randomGraph,
  rmatGraph,
} from '@trident/algorithms';
import graphology, { type MultiUndirectedGraph } from 'graphology';
import { connectedComponents } from 'graphology-components';
import { dijkstra } from 'graphology-shortest-path';
import { bfsFromNode } from 'graphology-traversal';
import { type Device, LimitExceededError } from 'trident';
import { type BenchCase, type PreparedRun, sameArray } from './bench-case.ts';

/**
 * graphology's default export is its Graph class, with the other classes hung on it
 * (`Graph.MultiUndirectedGraph`) in both its CommonJS and ES builds. Its typings declare
 * ES exports, which the monorepo's bundler resolution reads as the class but the build's
 * NodeNext as the whole CommonJS module; the cast names what both builds hold. (Not
 * `createRequire`: this module is also bundled into the CLI's browser page.)
 */
const GraphologyGraph = (graphology as unknown as { MultiUndirectedGraph: typeof MultiUndirectedGraph }).MultiUndirectedGraph;
type Graph = MultiUndirectedGraph;

/** The graphs: uniform random of average degree 8, R-MAT of edge factor 8 or 16 (the case's variant says which). */
export type Shape = 'random' | 'rmat' | 'rmat ef16';

const EDGE_FACTOR: Readonly<Record<Exclude<Shape, 'random'>, number>> = { rmat: 8, 'rmat ef16': 16 };

/**
 * How the cases build their R-MAT graphs on the host, and who hears how long the host's phases
 * took. The local bench and the browser page build them on the calling thread; the GPU machine's
 * suite on worker threads, the same graphs (bench/rmat-threads.ts), and prints the phases.
 */
export interface GraphHost {
  /** The graph rmatGraph(scale, edgeFactor, { symmetric: true, seed }) gives. */
  rmat(scale: number, edgeFactor: number, seed: number): GraphInput;
  /** A host phase of a step (`upload`, `reference`) and how long it took. */
  phase?(step: string, what: string, ms: number): void;
}

/** The calling thread's rmatGraph, phases unreported. */
export const SEQUENTIAL_HOST: GraphHost = { rmat: (scale, edgeFactor, seed) => rmatGraph(scale, edgeFactor, { symmetric: true, seed }) };

/** R-MAT's scale for about `stored` stored entries (2 * edgeFactor * 2^scale). */
const rmatScale = (shape: Exclude<Shape, 'random'>, stored: number): number =>
  Math.max(4, Math.round(Math.log2(stored / (2 * EDGE_FACTOR[shape]))));

/** An undirected graph with about `stored` stored entries (2 per edge). */
function makeGraph(shape: Shape, stored: number, host: GraphHost, weights?: 'random'): GraphInput {
  if (shape !== 'random') return host.rmat(rmatScale(shape, stored), EDGE_FACTOR[shape], 2026);
  const o = { symmetric: true, seed: 2026, ...(weights ? { weights } : {}) };
  return randomGraph(Math.max(2, Math.round(stored / 16)), Math.round(stored / 2), o);
}

/** The stored size makeGraph gives for n (the GTEPS numerator). */
export const storedOf = (shape: Shape, n: number): number =>
  shape === 'random' ? 2 * Math.round(n / 2) : 2 * EDGE_FACTOR[shape] * 2 ** rmatScale(shape, n);

/** The vertices makeGraph gives for n. */
const rowsOf = (shape: Shape, n: number): number => (shape === 'random' ? Math.max(2, Math.round(n / 16)) : 2 ** rmatScale(shape, n));

/**
 * Refuses a graph the device cannot hold before the host spends minutes building it: its
 * largest array against maxBufferElements (as createGraph would, after), and the row offsets,
 * entries and a result per vertex together against maxTotalBufferBytes where the device says.
 */
function checkGraphFits(device: Device, shape: Shape, n: number): void {
  const rows = rowsOf(shape, n);
  const stored = storedOf(shape, n);
  const { maxBufferElements, maxTotalBufferBytes } = device.caps.limits;
  const largest = Math.max(rows + 1, stored);
  if (largest > maxBufferElements) throw new LimitExceededError(device.backend, 'maxBufferElements', largest, maxBufferElements, 'graph');
  const bytes = 4 * (rows + 1 + stored + rows);
  if (maxTotalBufferBytes > 0 && bytes > maxTotalBufferBytes)
    throw new LimitExceededError(
      device.backend,
      'maxTotalBufferBytes',
      bytes,
      maxTotalBufferBytes,
      'graph (row offsets, entries and a result per vertex)',
    );
}

const cache = new Map<string, GraphInput>();
/** The graph of (shape, n): one alive at a time (the largest are gigabytes), whichever host built it (they build the same). */
function graphFor(shape: Shape, n: number, host: GraphHost, weights?: 'random'): GraphInput {
  const key = `${shape}:${n}:${weights ?? ''}`;
  let g = cache.get(key);
  if (!g) {
    cache.clear();
    g = makeGraph(shape, n, host, weights);
    cache.set(key, g);
  }
  return g;
}

/** The graph as graphology holds it: undirected, each stored pair once (u <= v), parallel edges and self-loops kept. */
function toGraphology(g: GraphInput, weighted: boolean): Graph {
  const out = new GraphologyGraph({ allowSelfLoops: true });
  for (let v = 0; v < g.rows; v++) out.addNode(v);
  for (let u = 0; u < g.rows; u++) {
    for (let e = g.indptr[u] as number; e < (g.indptr[u + 1] as number); e++) {
      const v = g.indices[e] as number;
      if (u < v || (u === v && e % 2 === 0)) out.addEdge(u, v, weighted ? { weight: g.weights?.[e] ?? 1 } : {});
    }
  }
  return out;
}

/** One run's result: its check, and the device buffer it returned (freed before the next run: a suite runs hundreds). */
interface GraphRunResult {
  readonly check: () => Promise<boolean>;
  readonly output?: { destroy(): void };
}

function deviceRun(device: Device, input: GraphInput, body: (g: DeviceGraph) => Promise<GraphRunResult>): PreparedRun {
  const g = createGraph(device, input);
  return runsOn(g, body, () => g.destroy());
}

function runsOn(g: DeviceGraph, body: (g: DeviceGraph) => Promise<GraphRunResult>, release: () => void): PreparedRun {
  let last: GraphRunResult | undefined;
  return {
    run: async () => {
      last?.output?.destroy();
      last = await body(g);
    },
    verify: async () => (last ? last.check() : false),
    dispose: () => {
      last?.output?.destroy();
      release();
    },
  };
}

/**
 * The graph of the last BFS or components step, kept on its device for the next step on the same
 * graph (the two cases of one size run one after the other): createGraph checks every entry and
 * copies it, a pass over the whole graph. Freed when another graph is needed; a destroyed device
 * has freed it already.
 */
let uploaded: { device: Device; key: string; graph: DeviceGraph } | undefined;

function sharedDeviceGraph(device: Device, key: string, input: GraphInput, step: string, host: GraphHost): DeviceGraph {
  if (uploaded && uploaded.device === device && uploaded.key === key && !uploaded.graph.indices.destroyed) return uploaded.graph;
  uploaded?.graph.destroy();
  uploaded = undefined;
  const t = performance.now();
  const graph = createGraph(device, input);
  host.phase?.(step, 'upload (createGraph: checks and copy)', performance.now() - t);
  uploaded = { device, key, graph };
  return graph;
}

const stepName = (c: Pick<BenchCase, 'algorithm' | 'variant'>, n: number): string =>
  `${c.algorithm}:${c.variant} n=${Number.isInteger(Math.log2(n)) ? `2^${Math.log2(n)}` : n}`;

/**
 * The result read back and compared with the sequential reference, the read and the reference
 * each reported to the host as a phase.
 */
async function checked(
  step: string,
  host: GraphHost,
  result: { read(): Promise<Int32Array> },
  reference: () => Int32Array,
): Promise<boolean> {
  let t = performance.now();
  const got = await result.read();
  host.phase?.(step, 'read-back', performance.now() - t);
  t = performance.now();
  const want = reference();
  host.phase?.(step, 'reference', performance.now() - t);
  return sameArray(got, want);
}

/** BFS from vertex 0 (GTEPS: stored edges over the median time). */
export function bfsCase(shape: Shape, host: GraphHost = SEQUENTIAL_HOST): BenchCase {
  const c: BenchCase = {
    algorithm: 'bfs',
    variant: shape,
    dtype: 'i32',
    sizes: [3e3, 1e4, 3e4, 1e5],
    edges: (n) => storedOf(shape, n),
    setup(device, n) {
      checkGraphFits(device, shape, n);
      const input = graphFor(shape, n, host);
      const step = stepName(c, n);
      const g = sharedDeviceGraph(device, `${shape}:${n}`, input, step, host);
      return runsOn(
        g,
        async (graph) => {
          const levels = await bfs(device, graph, 0);
          return { output: levels, check: () => checked(step, host, levels, () => bfsReference(input, 0)) };
        },
        () => undefined,
      );
    },
    peers(n) {
      const input = graphFor(shape, n, host);
      const want = () => bfsReference(input, 0);
      let graph: Graph | undefined;
      let got: Int32Array | undefined;
      let ref: Int32Array | undefined;
      return [
        {
          implementation: 'graphology',
          prepare: () => {
            graph = toGraphology(input, false);
          },
          run: () => {
            const levels = new Int32Array(input.rows).fill(-1);
            bfsFromNode(graph as Graph, '0', (node, _attr, depth) => {
              levels[Number(node)] = depth;
            });
            got = levels;
          },
          verify: () => got !== undefined && sameArray(got, want()),
        },
        {
          implementation: 'reference',
          prepare: () => undefined,
          run: () => {
            ref = bfsReference(input, 0);
          },
          verify: () => ref !== undefined && sameArray(ref, want()),
        },
      ];
    },
  };
  return c;
}

/** Connected components, each vertex labelled with its component's smallest id (GTEPS as BFS). */
export function componentsCase(shape: Shape, host: GraphHost = SEQUENTIAL_HOST): BenchCase {
  const c: BenchCase = {
    algorithm: 'components',
    variant: shape,
    dtype: 'i32',
    sizes: [3e3, 1e4, 3e4, 1e5],
    edges: (n) => storedOf(shape, n),
    setup(device, n) {
      checkGraphFits(device, shape, n);
      const input = graphFor(shape, n, host);
      const step = stepName(c, n);
      const g = sharedDeviceGraph(device, `${shape}:${n}`, input, step, host);
      return runsOn(
        g,
        async (graph) => {
          const labels = await components(device, graph);
          return { output: labels, check: () => checked(step, host, labels, () => componentsReference(input)) };
        },
        () => undefined,
      );
    },
    peers(n) {
      const input = graphFor(shape, n, host);
      let graph: Graph | undefined;
      let parts: string[][] | undefined;
      let ref: Int32Array | undefined;
      return [
        {
          implementation: 'graphology',
          prepare: () => {
            graph = toGraphology(input, false);
          },
          run: () => {
            parts = connectedComponents(graph as Graph);
          },
          verify: () => {
            // The same partition: each part's smallest id labels all its members in the reference.
            const want = componentsReference(input);
            if (!parts) return false;
            let members = 0;
            for (const p of parts) {
              const ids = p.map(Number);
              const label = ids.reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY);
              if (!ids.every((v) => want[v] === label)) return false;
              members += ids.length;
            }
            return members === input.rows;
          },
        },
        {
          implementation: 'reference',
          prepare: () => undefined,
          run: () => {
            ref = componentsReference(input);
          },
          verify: () => ref !== undefined,
        },
      ];
    },
  };
  return c;
}

const mstCase: BenchCase = {
  algorithm: 'mst',
  variant: 'random',
  dtype: 'f32',
  sizes: [3e3, 1e4, 3e4, 1e5],
  setup(device, n) {
    const input = graphFor('random', n, SEQUENTIAL_HOST, 'random');
    return deviceRun(device, input, async (g) => {
      const forest = await mst(device, g);
      return { check: async () => sameArray(forest.edges, mstReference(input).edges) };
    });
  },
  peers(n) {
    const input = graphFor('random', n, SEQUENTIAL_HOST, 'random');
    let done = false;
    return [
      {
        implementation: 'reference',
        prepare: () => undefined,
        run: () => {
          mstReference(input);
          done = true;
        },
        verify: () => done,
      },
    ];
  },
};

const apspCase: BenchCase = {
  algorithm: 'apsp',
  variant: 'random',
  dtype: 'f32',
  // Vertices (n^2 outputs, n^3 work); 4 stored entries per vertex.
  sizes: [32, 64, 128, 256],
  // Floyd–Warshall's nominal work: one add and one min per (k, i, j).
  flops: (n) => 2 * n ** 3,
  setup(device, n) {
    const input = randomGraph(n, 2 * n, { symmetric: true, weights: 'random', seed: 2026 });
    return deviceRun(device, input, async (g) => {
      const dist = apsp(device, g);
      await device.flush();
      return { output: dist, check: async () => sameArray(await dist.read(), apspReference(input)) };
    });
  },
  peers(n) {
    const input = randomGraph(n, 2 * n, { symmetric: true, weights: 'random', seed: 2026 });
    let graph: Graph | undefined;
    let reached = -1;
    let ref: Float32Array | undefined;
    return [
      {
        implementation: 'graphology',
        prepare: () => {
          graph = toGraphology(input, true);
        },
        run: () => {
          reached = 0;
          for (let s = 0; s < n; s++) reached += Object.keys(dijkstra.singleSource(graph as Graph, String(s), 'weight')).length;
        },
        // Paths, not lengths, come back: check that every pair the reference reaches has one.
        verify: () => reached === apspReference(input).filter(Number.isFinite).length,
      },
      {
        // The plain sequential Floyd–Warshall (faster in JavaScript than the blocked order
        // apspReference mirrors for bit-exact checks); its lengths agree up to f32 rounding.
        implementation: 'reference',
        prepare: () => undefined,
        run: () => {
          ref = floydWarshallReference(input);
        },
        verify: () => ref !== undefined && closeTo(ref, apspReference(input)),
      },
    ];
  },
};

/** Equal infinities and finite lengths within f32 rounding of sums in another order. */
function closeTo(a: Float32Array, b: Float32Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i] || Math.abs(x - (b[i] as number)) <= 1e-5 * Math.abs(x));
}

export const GRAPH_CASES: readonly BenchCase[] = [
  bfsCase('random'),
  bfsCase('rmat'),
  componentsCase('random'),
  componentsCase('rmat'),
  mstCase,
  apspCase,
];
