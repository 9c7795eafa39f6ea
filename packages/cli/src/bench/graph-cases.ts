/**
 * Benchmark cases of the graph algorithms: BFS and connected
 * components in GTEPS (stored edges, i.e. both directions of each undirected
 * edge, traversed per second: m / time), MST and APSP in ms. The size n is the
 * number of stored edges (vertices for APSP). Graphs are undirected (symmetric):
 * uniform random with average degree 8 ('random'), and R-MAT with edge factor 8
 * ('rmat', skewed degrees).
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
import type { Device } from 'trident';
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

type Shape = 'random' | 'rmat';

/** An undirected graph with about `stored` stored entries (2 per edge). */
function makeGraph(shape: Shape, stored: number, weights?: 'random'): GraphInput {
  const o = { symmetric: true, seed: 2026, ...(weights ? { weights } : {}) };
  if (shape === 'rmat') {
    // 2 * 8 * 2^scale stored entries.
    const scale = Math.max(4, Math.round(Math.log2(stored / 16)));
    return rmatGraph(scale, 8, o);
  }
  return randomGraph(Math.max(2, Math.round(stored / 16)), Math.round(stored / 2), o);
}

/** The stored size makeGraph gives for n (the GTEPS numerator). */
const storedOf = (shape: Shape, n: number): number =>
  shape === 'rmat' ? 16 * 2 ** Math.max(4, Math.round(Math.log2(n / 16))) : 2 * Math.round(n / 2);

const cache = new Map<string, GraphInput>();
function graphFor(shape: Shape, n: number, weights?: 'random'): GraphInput {
  const key = `${shape}:${n}:${weights ?? ''}`;
  let g = cache.get(key);
  if (!g) {
    cache.clear(); // one graph alive at a time: the largest are hundreds of MB
    g = makeGraph(shape, n, weights);
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
  let last: GraphRunResult | undefined;
  return {
    run: async () => {
      last?.output?.destroy();
      last = await body(g);
    },
    verify: async () => (last ? last.check() : false),
    dispose: () => {
      last?.output?.destroy();
      g.destroy();
    },
  };
}

function bfsCase(shape: Shape): BenchCase {
  return {
    algorithm: 'bfs',
    variant: shape,
    dtype: 'i32',
    sizes: [3e3, 1e4, 3e4, 1e5],
    edges: (n) => storedOf(shape, n),
    setup(device, n) {
      const input = graphFor(shape, n);
      return deviceRun(device, input, async (g) => {
        const levels = await bfs(device, g, 0);
        return { output: levels, check: async () => sameArray(await levels.read(), bfsReference(input, 0)) };
      });
    },
    peers(n) {
      const input = graphFor(shape, n);
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
}

function componentsCase(shape: Shape): BenchCase {
  return {
    algorithm: 'components',
    variant: shape,
    dtype: 'i32',
    sizes: [3e3, 1e4, 3e4, 1e5],
    edges: (n) => storedOf(shape, n),
    setup(device, n) {
      const input = graphFor(shape, n);
      return deviceRun(device, input, async (g) => {
        const labels = await components(device, g);
        return { output: labels, check: async () => sameArray(await labels.read(), componentsReference(input)) };
      });
    },
    peers(n) {
      const input = graphFor(shape, n);
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
}

const mstCase: BenchCase = {
  algorithm: 'mst',
  variant: 'random',
  dtype: 'f32',
  sizes: [3e3, 1e4, 3e4, 1e5],
  setup(device, n) {
    const input = graphFor('random', n, 'random');
    return deviceRun(device, input, async (g) => {
      const forest = await mst(device, g);
      return { check: async () => sameArray(forest.edges, mstReference(input).edges) };
    });
  },
  peers(n) {
    const input = graphFor('random', n, 'random');
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
