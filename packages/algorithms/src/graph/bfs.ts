/**
 * Breadth-first search from one source: the depth of every vertex, following
 * stored edges (row u lists u's out-neighbours), 0 at the source, -1 where
 * unreachable. Level-synchronous, one host step per level (Dulle 2016's
 * meta-program: the level loop on the host, each level a kernel).
 *
 * Formulations (by caps; Dulle 2016 §4.2's two ways to hold an active set):
 * - 'frontier' (list method; needs 'atomic' and 'atomic-other' and 'scatter'): the
 *   frontier is a compact list; one invocation per frontier vertex walks its row
 *   and claims each unvisited neighbour with atomicMin on its level (the one that
 *   sees the old "unvisited" appends it to the next list through an atomic
 *   counter). O(n + m) work in all.
 * - 'frontier-balanced' (the same, for GPUs): the frontier's edges are numbered by
 *   a scan of its degrees and cut into equal chunks, so a hub's row (R-MAT graphs
 *   have rows of 10^5 edges) is spread over many invocations instead of one.
 * - 'direction-optimizing' (Beamer, Asanović and Patterson, SC 2012; symmetric
 *   graphs only): top-down levels as above ('frontier-balanced' on devices of many
 *   thin invocations) while the frontier is small, bottom-up levels while it is
 *   large: one invocation per unvisited vertex scans its row for a neighbour on
 *   the frontier and stops at the first. On small-world graphs (R-MAT) the middle
 *   levels reach most vertices, and bottom-up skips most of their edges.
 * - 'edges' (bitset method; gather + scatter, for devices whose atomics cannot
 *   return a value, such as WebGL2's blending; 'pull' below is their default now
 *   and draws no points): one invocation per edge marks
 *   next[v] = d + 1 where level[u] = d and v is unvisited (all writers write the
 *   same value), levels double-buffered. O(m) work per level.
 * - 'pull' (gather only: no atomics and no scatter, the default where atomics cannot
 *   return a value): one invocation per vertex; an unvisited vertex walks its
 *   in-neighbours (the row itself on a symmetric graph, else the transpose,
 *   Graph.inNeighbours) and stops at the first at `depth`; every vertex writes its
 *   own next level and a "reached now" flag, whose maximum (a gather reduction) is
 *   the host's stop test. O(m) work per level at most, and no points: on WebGL2 a
 *   level is one fragment pass plus the reduction's, where 'edges' draws a point
 *   per edge.
 * Either way the host reads one number per level (the next frontier's size, or a
 * "reached something" flag) to stop.
 */
import {
  type Buffer,
  type BufferHandle,
  buffer,
  type Device,
  defineKernel,
  InvalidArgumentError,
  type KernelBuilder,
  min,
  u32,
  uniform,
  type Val,
} from '@trident/core';
import { cachedKernel, checkChoice, gatherSize, gridStride, hasAll, strideWorkgroups, unsupported } from '../common.ts';
import { fewInvocations } from '../device-class.ts';
import { classFamily, type Formulation } from '../plan.ts';
import { reduce } from '../reduce/reduce.ts';
import { scan } from '../scan/scan.ts';
import { checkGraph, checkSquare, type Graph } from './graph.ts';
import { asI32, NONE } from './kernels.ts';

export type BfsFormulation = 'frontier' | 'frontier-balanced' | 'direction-optimizing' | 'edges' | 'pull';

const FORMULATIONS: readonly BfsFormulation[] = ['frontier', 'frontier-balanced', 'direction-optimizing', 'edges', 'pull'];

export interface BfsOptions {
  /** Force a formulation (tests and benchmarks); by default `bfsFormulation(device)`. */
  readonly formulation?: BfsFormulation;
}

/** Edges one invocation of the balanced expansion walks (one binary search per chunk). */
const CHUNK = 16;

/**
 * Direction switches (Beamer et al.'s alpha and beta, with edge counts estimated
 * from vertex counts at the average degree): go bottom-up when the frontier holds
 * more than 1/TO_BOTTOM_UP of the unvisited vertices, back top-down when a
 * shrinking frontier holds fewer than 1/TO_TOP_DOWN of all vertices.
 */
const TO_BOTTOM_UP = 14;
const TO_TOP_DOWN = 24;

const BFS_SUMMARIES: Readonly<Record<BfsFormulation, string>> = {
  frontier: 'frontier list, one invocation per frontier vertex',
  'frontier-balanced': 'frontier list, edge-balanced expansion (binary search per edge chunk)',
  'direction-optimizing': 'direction-optimizing: top-down frontier list, bottom-up passes on large frontiers',
  edges: 'one invocation per edge per level',
  pull: 'pull passes: every unvisited vertex scans its in-neighbours',
};

/**
 * The formulation `bfs` uses on `device` (for `graph`, when given): with atomics that
 * return values, the frontier list — one invocation per frontier vertex where the
 * device runs few fat invocations (worker pools: a hub's row is one loop; software
 * GPUs), edge-balanced where it runs many thin ones (GPUs: a hub's row would
 * serialise one thread), direction-optimizing on symmetric graphs but for software
 * GPUs; otherwise the pull passes. Why: LEDGER.md bfs.formulation.
 */
export function bfsFormulation(device: Device, graph?: Graph, asked?: BfsFormulation): Formulation<BfsFormulation> {
  const family = classFamily(device, 'bfs');
  const name = asked ?? bfsFormulationName(device, graph);
  return { family, name, shape: undefined, summary: BFS_SUMMARIES[name] };
}

function bfsFormulationName(device: Device, graph: Graph | undefined): BfsFormulation {
  if (!hasAll(device, 'atomic', 'atomic-other', 'scatter')) return 'pull';
  if (fewInvocations(device.caps)) return 'frontier';
  if (graph?.symmetric) return 'direction-optimizing';
  return manyThinInvocations(device) ? 'frontier-balanced' : 'frontier';
}

function manyThinInvocations(device: Device): boolean {
  return device.caps.concurrency >= 1024;
}

interface ClaimTargets {
  readonly level: BufferHandle<'u32', 'atomic'>;
  readonly next: BufferHandle<'u32', 'write'>;
  readonly nextCount: BufferHandle<'u32', 'atomic'>;
}

/**
 * Top-down claim of neighbour v at depth + 1: the invocation whose atomicMin saw it
 * unvisited appends it to the next frontier. A plain check first: most neighbours
 * are already visited, and claiming costs an RMW.
 */
function claimNeighbour(k: KernelBuilder, { level, next, nextCount }: ClaimTargets, v: Val<'u32'>, depth: Val<'u32'>): void {
  k.if(level.load(v).eq(NONE), () => {
    const old = level.atomicMin(v, depth.add(1));
    k.if(old.eq(NONE), () => next.store(nextCount.atomicAdd(0, u32(1)), v));
  });
}

function expandKernel(device: Device) {
  const wg = gatherSize(device.caps);
  return cachedKernel(`bfs_expand:${wg}`, () =>
    defineKernel({
      name: 'bfs_expand',
      workgroupSize: wg,
      params: {
        frontier: buffer('u32', 'read'),
        indptr: buffer('u32', 'read'),
        indices: buffer('u32', 'read'),
        level: buffer('u32', 'atomic'),
        next: buffer('u32', 'write'),
        nextCount: buffer('u32', 'atomic'),
        count: uniform('u32'),
        depth: uniform('u32'),
      },
      body: ({ frontier, indptr, indices, level, next, nextCount, count, depth }, k) => {
        const i = k.let(k.globalIndex, 'i');
        k.if(i.lt(count), () => {
          const u = k.let(frontier.load(i), 'u');
          const end = k.let(indptr.load(u.add(1)), 'end');
          const e = k.let(indptr.load(u), 'e');
          k.while(
            () => e.lt(end),
            () => {
              const v = k.let(indices.load(e), 'v');
              claimNeighbour(k, { level, next, nextCount }, v, depth);
              e.set(e.add(1));
            },
          );
        });
      },
    }),
  );
}

/** deg[i] = out-degree of frontier[i]. */
function degreeKernel(device: Device) {
  const wg = gatherSize(device.caps);
  return cachedKernel(`bfs_degree:${wg}`, () =>
    defineKernel({
      name: 'bfs_degree',
      workgroupSize: wg,
      params: { frontier: buffer('u32', 'read'), indptr: buffer('u32', 'read'), deg: buffer('u32', 'write'), count: uniform('u32') },
      body: ({ frontier, indptr, deg, count }, k) => {
        const i = k.let(k.globalIndex, 'i');
        k.if(i.lt(count), () => {
          const u = k.let(frontier.load(i), 'u');
          deg.store(i, indptr.load(u.add(1)).sub(indptr.load(u)));
        });
      },
    }),
  );
}

/**
 * Edge-balanced expansion: the frontier's edges, numbered through the inclusive
 * scan of its degrees (`ends`), are cut into chunks of CHUNK; a grid-stride loop
 * gives each invocation whole chunks, found by one binary search each.
 */
function balancedKernel(device: Device) {
  const wg = gatherSize(device.caps);
  return cachedKernel(`bfs_expand_balanced:${wg}`, () =>
    defineKernel({
      name: 'bfs_expand_balanced',
      workgroupSize: wg,
      params: {
        frontier: buffer('u32', 'read'),
        ends: buffer('u32', 'read'),
        indptr: buffer('u32', 'read'),
        indices: buffer('u32', 'read'),
        level: buffer('u32', 'atomic'),
        next: buffer('u32', 'write'),
        nextCount: buffer('u32', 'atomic'),
        count: uniform('u32'),
        depth: uniform('u32'),
        groups: uniform('u32'),
      },
      body: ({ frontier, ends, indptr, indices, level, next, nextCount, count, depth, groups }, k) => {
        const total = k.let(ends.load(count.sub(1)), 'total');
        const chunks = k.let(total.add(CHUNK - 1).div(CHUNK), 'chunks');
        const { i: q, stride } = gridStride(k, groups, chunks);
        k.while(
          () => q.lt(chunks),
          () => {
            const t = k.let(q.mul(CHUNK), 't');
            const stop = k.let(min(t.add(CHUNK), total), 'stop');
            // First frontier slot whose end lies beyond t.
            const lo = k.var('u32', 0, 'lo');
            const hi = k.let(count, 'hi');
            k.while(
              () => lo.lt(hi),
              () => {
                const mid = k.let(lo.add(hi).shr(1), 'mid');
                k.if(
                  ends.load(mid).le(t),
                  () => lo.set(mid.add(1)),
                  () => hi.set(mid),
                );
              },
            );
            const slot = k.let(lo, 'slot');
            k.while(
              () => t.lt(stop),
              () => {
                k.while(
                  () => ends.load(slot).le(t),
                  () => slot.set(slot.add(1)),
                );
                const u = k.let(frontier.load(slot), 'u');
                const end = k.let(ends.load(slot), 'end');
                const row = k.let(indptr.load(u.add(1)), 'row');
                // Edges of this slot inside the chunk: row - (end - t) onwards.
                const e = k.let(row.sub(end.sub(t)), 'e');
                const last = k.let(min(stop, end), 'last');
                k.while(
                  () => t.lt(last),
                  () => {
                    const v = k.let(indices.load(e), 'v');
                    claimNeighbour(k, { level, next, nextCount }, v, depth);
                    e.set(e.add(1));
                    t.set(t.add(1));
                  },
                );
              },
            );
            q.set(q.add(stride));
          },
        );
      },
    }),
  );
}

function edgeStepKernel(device: Device) {
  const wg = gatherSize(device.caps);
  return cachedKernel(`bfs_edge_step:${wg}`, () =>
    defineKernel({
      name: 'bfs_edge_step',
      workgroupSize: wg,
      params: {
        sources: buffer('u32', 'read'),
        indices: buffer('u32', 'read'),
        level: buffer('u32', 'read'),
        next: buffer('u32', 'write'),
        reached: buffer('u32', 'write'),
        edges: uniform('u32'),
        depth: uniform('u32'),
      },
      body: ({ sources, indices, level, next, reached, edges, depth }, k) => {
        const e = k.let(k.globalIndex, 'e');
        k.if(e.lt(edges), () => {
          const v = k.let(indices.load(e), 'v');
          k.if(level.load(sources.load(e)).eq(depth).and(level.load(v).eq(NONE)), () => {
            next.store(v, depth.add(1));
            reached.store(0, u32(1));
          });
        });
      },
    }),
  );
}

/**
 * One pull level: next[v] = depth + 1 where v is unvisited and one of its
 * in-neighbours is at `depth` (the walk stops at the first), level[v] otherwise;
 * fresh[v] = 1 where v was reached now. Gather only: each invocation writes its own elements.
 */
function pullStepKernel(device: Device) {
  const wg = gatherSize(device.caps);
  return cachedKernel(`bfs_pull_step:${wg}`, () =>
    defineKernel({
      name: 'bfs_pull_step',
      workgroupSize: wg,
      params: {
        inPtr: buffer('u32', 'read'),
        inIdx: buffer('u32', 'read'),
        level: buffer('u32', 'read'),
        next: buffer('u32', 'write'),
        fresh: buffer('u32', 'write'),
        n: uniform('u32'),
        depth: uniform('u32'),
      },
      body: ({ inPtr, inIdx, level, next, fresh, n, depth }, k) => {
        const v = k.let(k.globalIndex, 'v');
        k.if(v.lt(n), () => {
          const out = k.let(level.load(v), 'out');
          const found = k.var('u32', 0, 'found');
          k.if(out.eq(NONE), () => {
            const e = k.let(inPtr.load(v), 'e');
            const end = k.let(inPtr.load(v.add(1)), 'end');
            k.while(
              () => e.lt(end),
              () => {
                k.if(
                  level.load(inIdx.load(e)).eq(depth),
                  () => {
                    found.set(1);
                    e.set(end);
                  },
                  () => e.set(e.add(1)),
                );
              },
            );
            k.if(found.ne(0), () => out.set(depth.add(1)));
          });
          next.store(v, out);
          fresh.store(v, found);
        });
      },
    }),
  );
}

/**
 * One bottom-up level: every unvisited vertex v looks for a neighbour at `depth`
 * in its row (= its in-neighbours, the graph being symmetric) and stops at the
 * first; a found one sets level[v] = depth + 1 and appends v to the next frontier.
 * Levels written in this pass are depth + 1, never equal to `depth`, so the plain
 * (non-atomic) reads of other vertices' levels see the same frontier either way.
 *
 * `aggregate` (devices of many thin invocations): the vertices a workgroup finds
 * take their places in the next frontier through one atomic add per workgroup (a
 * workgroup-local count, then one global add) instead of one per vertex, which on
 * a GPU would serialise millions of adds on one counter in the levels that reach
 * most of the graph. Not on devices of few fat workgroups, where the barriers
 * would be phase-split for nothing.
 */
function bottomUpKernel(device: Device, aggregate: boolean) {
  const wg = gatherSize(device.caps);
  const name = aggregate ? 'bfs_bottom_up_wg' : 'bfs_bottom_up';
  return cachedKernel(`${name}:${wg}`, () =>
    defineKernel({
      name,
      workgroupSize: wg,
      params: {
        indptr: buffer('u32', 'read'),
        indices: buffer('u32', 'read'),
        level: buffer('u32', 'read_write'),
        next: buffer('u32', 'write'),
        nextCount: buffer('u32', 'atomic'),
        n: uniform('u32'),
        depth: uniform('u32'),
      },
      body: ({ indptr, indices, level, next, nextCount, n, depth }, k) => {
        const v = k.let(k.globalIndex, 'v');
        const found = k.var('u32', 0, 'found');
        k.if(v.lt(n), () => {
          k.if(level.load(v).eq(NONE), () => {
            const e = k.var('u32', indptr.load(v), 'e');
            const end = k.let(indptr.load(v.add(1)), 'end');
            k.while(
              () => e.lt(end),
              () => {
                k.if(level.load(indices.load(e)).eq(depth), () => {
                  level.store(v, depth.add(1));
                  if (aggregate) found.set(1);
                  else next.store(nextCount.atomicAdd(0, u32(1)), v);
                  k.break();
                });
                e.set(e.add(1));
              },
            );
          });
        });
        if (!aggregate) return;
        // slots[0]: vertices found by this workgroup; slots[1]: their first place in `next`.
        const slots = k.workgroupArray('u32', 2, { atomic: true });
        const place = k.var('u32', 0, 'place');
        k.if(found.eq(1), () => place.set(slots.atomicAdd(0, 1)));
        k.barrier();
        k.if(k.localIndex.eq(0), () => {
          const total = k.let(slots.load(0), 'total');
          k.if(total.gt(0), () => slots.store(1, nextCount.atomicAdd(0, total)));
        });
        k.barrier();
        k.if(found.eq(1), () => next.store(slots.load(1).add(place), v));
      },
    }),
  );
}

/**
 * BFS depths from `source` over the stored (directed) edges of a square graph.
 * Returns an (n,) i32 buffer: 0 at `source`, the number of edges on a shortest
 * path elsewhere, -1 where unreachable. Self-loops and duplicate edges change nothing.
 *
 * Complexity: 'frontier' O(n + m) work and one host round trip per level;
 * 'direction-optimizing' at most that, and O(n) per bottom-up level plus the
 * edges scanned until a parent is found; 'edges' O(m) work per level; 'pull' at most O(m)
 * per level (unvisited vertices' in-edges until a parent). A long path (depth D) costs D round trips.
 * Throws InvalidArgumentError for a non-square graph, a source out of range, or
 * 'direction-optimizing' asked for on a graph not declared symmetric.
 */
export async function bfs(device: Device, graph: Graph, source: number, options: BfsOptions = {}): Promise<Buffer<'i32'>> {
  checkGraph(device, graph);
  checkSquare(graph);
  const n = graph.rows;
  if (typeof source !== 'number' || !Number.isInteger(source) || source < 0 || source >= n)
    throw new InvalidArgumentError('source', `must be a vertex in [0, ${n}), got ${String(source)}`);
  const formulation = bfsFormulation(device, graph, options.formulation).name;
  checkChoice('options.formulation', formulation, FORMULATIONS);
  if (formulation === 'direction-optimizing' && !graph.symmetric)
    throw new InvalidArgumentError(
      'options.formulation',
      "'direction-optimizing' reads rows as in-neighbour lists: the graph must be declared symmetric (createGraph's `symmetric`)",
    );
  if (formulation !== 'edges' && formulation !== 'pull' && !hasAll(device, 'atomic', 'atomic-other', 'scatter'))
    throw unsupported(device, 'atomic-other', 'bfs', `the '${formulation}' formulation claims vertices with atomics that return values`);
  const level = device.createBuffer('u32', n);
  level.fill(NONE);
  level.fill(0, { offset: source, length: 1 });
  try {
    if (formulation === 'edges') await edgeBfs(device, graph, level);
    else if (formulation === 'pull') await pullBfs(device, graph, level);
    else {
      const balanced = formulation === 'frontier-balanced' || (formulation === 'direction-optimizing' && manyThinInvocations(device));
      await frontierBfs(device, graph, level, source, balanced, formulation === 'direction-optimizing');
    }
    return asI32(device, level, n);
  } finally {
    level.destroy();
  }
}

async function frontierBfs(
  device: Device,
  graph: Graph,
  level: Buffer<'u32'>,
  source: number,
  balanced: boolean,
  switchDirections: boolean,
): Promise<void> {
  const n = graph.rows;
  const kernel = expandKernel(device);
  const wg = gatherSize(device.caps);
  let cur = device.createBuffer('u32', n);
  let nxt = device.createBuffer('u32', n);
  const counter = device.createBuffer('u32', 1);
  const temps: Buffer<'u32'>[] = [];
  try {
    cur.fill(source, { length: 1 });
    let count = 1;
    let visited = 1;
    let bottomUp = false;
    for (let depth = 0, previous = 0; count > 0; depth++) {
      counter.fill(0);
      if (switchDirections) {
        const growing = count > previous;
        if (!bottomUp && growing && count * TO_BOTTOM_UP > n - visited) bottomUp = true;
        else if (bottomUp && !growing && count * TO_TOP_DOWN < n) bottomUp = false;
      }
      previous = count;
      const args = { frontier: cur, indptr: graph.indptr, indices: graph.indices, level, next: nxt, nextCount: counter, count, depth };
      if (bottomUp) {
        const bu = { indptr: graph.indptr, indices: graph.indices, level, next: nxt, nextCount: counter, n, depth };
        // Workgroup-aggregated appends where workgroups are many and cheap; one add per vertex on
        // devices of few fat workgroups (a CPU worker would phase-split the barriers).
        const aggregate = balanced && device.caps.features.has('workgroup');
        device.dispatch(bottomUpKernel(device, aggregate), { invocations: n }, bu);
      } else if (balanced) {
        const deg = device.createBuffer('u32', count);
        device.dispatch(degreeKernel(device), { invocations: count }, { frontier: cur, indptr: graph.indptr, deg, count });
        const ends = scan(device, deg);
        // Enough groups for the largest frontier's chunks, at most a few waves of the device.
        const groups = strideWorkgroups(device.caps, Math.ceil(graph.edges / CHUNK), wg, 1, 4);
        device.dispatch(balancedKernel(device), { invocations: groups * wg }, { ...args, ends, groups });
        temps.push(deg, ends);
      } else {
        device.dispatch(kernel, { invocations: count }, args);
      }
      count = (await counter.read())[0] as number;
      visited += count;
      // Freed once the read has run the level's work.
      for (const b of temps.splice(0)) b.destroy();
      [cur, nxt] = [nxt, cur];
    }
  } finally {
    cur.destroy();
    nxt.destroy();
    counter.destroy();
  }
}

async function pullBfs(device: Device, graph: Graph, level: Buffer<'u32'>): Promise<void> {
  const n = graph.rows;
  if (graph.edges === 0) return;
  const { indptr: inPtr, indices: inIdx } = await graph.inNeighbours();
  let cur = level;
  let nxt = device.createBuffer('u32', n);
  const fresh = device.createBuffer('u32', n);
  try {
    // The stop test runs after every second level: a level past the last costs one
    // pass, a test a reduction and a read-back (LEDGER.md bfs.pullStopTest). A level that reaches nothing is followed by one that reaches
    // nothing, so testing the later one's flags suffices.
    for (let depth = 0; ; depth++) {
      device.dispatch(pullStepKernel(device), { invocations: n }, { inPtr, inIdx, level: cur, next: nxt, fresh, n, depth });
      [cur, nxt] = [nxt, cur];
      if (depth % 2 === 1 && (await reduce(device, fresh, { op: 'max' })) === 0) break;
    }
    if (cur !== level) device.copyBuffer(cur, level);
  } finally {
    (cur === level ? nxt : cur).destroy();
    fresh.destroy();
  }
}

async function edgeBfs(device: Device, graph: Graph, level: Buffer<'u32'>): Promise<void> {
  const n = graph.rows;
  const m = graph.edges;
  if (m === 0) return;
  const kernel = edgeStepKernel(device);
  const sources = graph.sources();
  let cur = level;
  let nxt = device.createBuffer('u32', n);
  const reached = device.createBuffer('u32', 1);
  try {
    for (let depth = 0; ; depth++) {
      device.copyBuffer(cur, nxt);
      reached.fill(0);
      device.dispatch(kernel, { invocations: m }, { sources, indices: graph.indices, level: cur, next: nxt, reached, edges: m, depth });
      [cur, nxt] = [nxt, cur];
      if ((await reached.read())[0] === 0) break;
    }
    if (cur !== level) device.copyBuffer(cur, level);
  } finally {
    (cur === level ? nxt : cur).destroy();
    reached.destroy();
  }
}
