/**
 * `trident run bfs|components|mst|apsp|matching --graph g.npz ...`: the graph
 * commands (docs/cli.md's contract). The `.npz` (scipy.sparse.save_npz) is read and
 * checked host-side (npz.ts) before a device exists; a malformed file is an
 * InputError: one line naming the file, exit 2, nothing written.
 */
import { InputError, UsageError } from '../errors.ts';
import { readSparseGraph, readSparseHeader, type SparseGraph } from '../npz.ts';
import type { AlgorithmCli, PreparedJob, RunValues } from './algorithms.ts';
import type { DeclaredBuffer } from './device-fit.ts';
import { HostBudget } from './host-budget.ts';

function graphFile(values: RunValues): string {
  const v = values.graph;
  if (v === undefined || v === '') throw new UsageError('--graph is required');
  return v;
}

function outFile(values: RunValues): string {
  const v = values.out;
  if (v === undefined || v === '') throw new UsageError('--out is required');
  return v;
}

function square(file: string, g: SparseGraph): void {
  if (g.rows !== g.columns) throw new InputError(file, `shape (${g.rows}, ${g.columns}) is not square: an adjacency matrix is (n, n)`);
}

/** Weighted algorithms read a duplicate as scipy does (the sum of the copies) only after sum_duplicates(): refuse it. */
function noDuplicates(file: string, g: SparseGraph): void {
  if (g.duplicate) {
    const [r, c] = g.duplicate;
    throw new InputError(file, `entry (${r}, ${c}) is stored more than once; call sum_duplicates() before save_npz`);
  }
}

/**
 * What the graph's device buffers will need, from format.npy and shape.npy only:
 * the row offsets (rows + 1 entries), a result of one entry per vertex (levels,
 * labels, distances or the tree's parents: every graph command makes one) and, for
 * apsp, the n x n distances.
 */
function declareGraph(values: RunValues, budget: HostBudget, options: { square: boolean; distances?: boolean }): DeclaredBuffer[] {
  const file = graphFile(values);
  outFile(values);
  const h = readSparseHeader(file, budget);
  if (options.square && h.rows !== h.columns)
    throw new InputError(file, `shape (${h.rows}, ${h.columns}) is not square: an adjacency matrix is (n, n)`);
  const declared = [
    { what: `${file} (${h.rows} vertices)`, elements: h.rows + 1 },
    { what: `${file}: a result per vertex`, elements: h.rows },
  ];
  if (options.distances) declared.push({ what: `${file}: apsp's ${h.rows} x ${h.rows} distance matrix`, elements: h.rows * h.rows });
  return declared;
}

/** --source as a vertex id: its form is checked before the graph is read, its range (< n) after. */
function sourceVertex(values: RunValues): number {
  const text = values.source;
  if (text === undefined) throw new UsageError('--source is required');
  if (!/^\d+$/.test(text)) throw new UsageError(`--source: expected a vertex id (an integer >= 0), got '${text}'`);
  return Number(text);
}

function job(algorithm: string, g: SparseGraph, params: Record<string, number>, outputs: Record<string, string>): PreparedJob {
  return {
    spec: {
      algorithm,
      params: { rows: g.rows, columns: g.columns, ...params },
      inputs: {
        indptr: { dtype: 'u32', shape: [g.indptr.length], data: g.indptr },
        indices: { dtype: 'u32', shape: [g.indices.length], data: g.indices },
        ...(g.weights ? { weights: { dtype: 'f32', shape: [g.weights.length], data: g.weights } } : {}),
      },
    },
    outputs,
  };
}

export const GRAPH_ALGORITHMS: Record<string, AlgorithmCli> = {
  bfs: {
    usage: 'bfs --graph g.npz --source S --out levels.npy   ((n,) int32 depth from S along stored edges, -1 if unreachable)',
    flags: ['graph', 'source', 'out'],
    declare(values, budget = new HostBudget()) {
      sourceVertex(values);
      return declareGraph(values, budget, { square: true });
    },
    prepare(values, budget = new HostBudget()) {
      const file = graphFile(values);
      const source = sourceVertex(values);
      const g = readSparseGraph(file, budget);
      square(file, g);
      if (!(source < g.rows)) throw new UsageError(`--source: expected a vertex in [0, ${g.rows}), got '${values.source}'`);
      return job('bfs', g, { source }, { out: outFile(values) });
    },
  },
  components: {
    usage: 'components --graph g.npz --out labels.npy   ((n,) int32 smallest vertex id of each weakly connected component)',
    flags: ['graph', 'out'],
    declare: (values, budget = new HostBudget()) => declareGraph(values, budget, { square: true }),
    prepare(values, budget = new HostBudget()) {
      const file = graphFile(values);
      const g = readSparseGraph(file, budget);
      square(file, g);
      return job('components', g, {}, { out: outFile(values) });
    },
  },
  mst: {
    usage:
      'mst --graph g.npz --out forest.npy [--out-weight w.npy]   (minimum spanning forest: (k, 2) int32 edges u < v, sorted; w: float64 total)',
    flags: ['graph', 'out', 'out-weight'],
    declare: (values, budget = new HostBudget()) => declareGraph(values, budget, { square: true }),
    prepare(values, budget = new HostBudget()) {
      const file = graphFile(values);
      const g = readSparseGraph(file, budget);
      square(file, g);
      noDuplicates(file, g);
      const outputs: Record<string, string> = { out: outFile(values) };
      if (values['out-weight'] !== undefined) outputs['out-weight'] = values['out-weight'];
      return job('mst', g, {}, outputs);
    },
  },
  apsp: {
    usage: 'apsp --graph g.npz --out dist.npy   ((n, n) float32 shortest-path lengths along stored edges, +inf if unreachable)',
    flags: ['graph', 'out'],
    declare: (values, budget = new HostBudget()) => declareGraph(values, budget, { square: true, distances: true }),
    prepare(values, budget = new HostBudget()) {
      const file = graphFile(values);
      const g = readSparseGraph(file, budget);
      square(file, g);
      noDuplicates(file, g);
      const neg = g.weights?.findIndex((w) => w < 0) ?? -1;
      if (neg >= 0) throw new InputError(file, `data.npy: entry ${neg} is negative (${g.weights?.[neg]}); apsp takes weights >= 0`);
      return job('apsp', g, {}, { out: outFile(values) });
    },
  },
  matching: {
    usage:
      'matching --graph b.npz --out match.npy   (b: (nU, nV) biadjacency; (nU,) int32 right vertex of each left vertex or -1, maximum cardinality)',
    flags: ['graph', 'out'],
    declare: (values, budget = new HostBudget()) => declareGraph(values, budget, { square: false }),
    prepare(values, budget = new HostBudget()) {
      const file = graphFile(values);
      const g = readSparseGraph(file, budget);
      return job('matching', g, {}, { out: outFile(values) });
    },
  },
};
