/**
 * Minimum spanning forest by Borůvka (Dulle 2016, PRAM algorithms on GPGPUs, §5.7), every stored entry (u, v, w)
 * taken as an undirected edge. Edges are compared by (w, min(u, v), max(u, v)):
 * a total order, so each component's lightest outgoing edge is unique, two
 * components that pick each other pick the same edge, and the hooks form no
 * cycle other than those 2-cycles — the seed's "MST must be unique" is not needed
 * (ties give the minimum forest of that order, which is a minimum forest).
 *
 * Each round, with C the component (root id) of every vertex:
 * 1. four edge passes find each component's lightest outgoing edge by atomic min:
 *    the weight key's high 16 bits, its low 16 bits, the smaller end, the larger end
 *    (16-bit halves and vertex ids stay exact under WebGL2's min blending);
 * 2. an edge pass stores the component across that edge (target[c]);
 * 3. a vertex pass hooks each root c to target[c] — except the smaller of a mutual
 *    pair — and records c's edge in slot c (each vertex stops being a root once,
 *    so each slot is written at most once);
 * 4. pointer jumping until every vertex points at its new root.
 * Rounds end when no edge joins two components (at most ~log2 n rounds).
 *
 * Formulations of steps 1-2 (by caps; `options.formulation` forces one):
 * - 'edges' (above): one invocation per stored entry, two atomic mins each per stage;
 * - 'vertices' (symmetric graphs on devices without many thin invocations: WebGL2's
 *   blended points, the CPU, software GPUs; see mstFormulation):
 *   one gather pass in which each vertex walks its row for its own lightest edge to
 *   another component (the four fields and the component across it, as five
 *   outputs), then the four stages and the target as points per vertex, not per
 *   entry: about 5n points a round instead of 10m. A symmetric graph's rows hold
 *   every edge from both ends, so no edge is missed; other graphs take 'edges'.
 */
import {
  type Buffer,
  type BufferAccess,
  type BufferHandle,
  buffer,
  type Device,
  defineKernel,
  f32,
  InvalidArgumentError,
  type KernelBuilder,
  max,
  min,
  type ParamDecl,
  select,
  u32,
  uniform,
  type Val,
} from '@trident/core';
import { cachedKernel, checkChoice, f32ToKey, gatherSize } from '../common.ts';
import { classFamily, type Formulation } from '../plan.ts';
import { checkGraph, checkSquare, type Graph } from './graph.ts';
import { compressLabels, NONE } from './kernels.ts';
import { checkBlendable, needsAtomics } from './needs.ts';
import { forestOf, type MstForest } from './reference/mst.ts';

type U32Handle = BufferHandle<'u32', BufferAccess>;
type Handles = Record<string, U32Handle | BufferHandle<'f32', 'read'> | Val<'u32'>>;

/** The (key high, key low, smaller end, larger end) tuple of edge e, compared field by field. */
function edgeFields(k: KernelBuilder, h: Handles, e: Val<'u32'>, weighted: boolean) {
  const u = k.let((h.sources as U32Handle).load(e), 'u');
  const v = k.let((h.indices as U32Handle).load(e), 'v');
  const w = weighted ? (h.weights as BufferHandle<'f32', 'read'>).load(e) : f32(1);
  const key = k.let(f32ToKey(w), 'key');
  return { u, v, fields: [key.shr(16), key.and(0xffff), min(u, v), max(u, v)] as Val<'u32'>[] };
}

/**
 * Stage s (0..3) minimises field s of the tuple over each component's outgoing
 * edges, among the edges whose fields 0..s-1 equal the minima found before
 * (buffers f0..f{s-1}); stage 0 also raises `busy` when any edge joins two components.
 */
function edgeMinKernel(device: Device, stage: number, weighted: boolean) {
  const wg = gatherSize(device.caps);
  const params: Record<string, ParamDecl> = {
    sources: buffer('u32', 'read'),
    indices: buffer('u32', 'read'),
    ...(weighted ? { weights: buffer('f32', 'read') } : {}),
    comp: buffer('u32', 'read'),
    out: buffer('u32', 'atomic'),
    ...(stage === 0 ? { busy: buffer('u32', 'write') } : {}),
    edges: uniform('u32'),
  };
  for (let s = 0; s < stage; s++) params[`f${s}`] = buffer('u32', 'read');
  return cachedKernel(`mst_min:${stage}:${weighted}:${wg}`, () =>
    defineKernel({
      name: `mst_min_${stage}`,
      workgroupSize: wg,
      params,
      body: (handles, k) => {
        const h = handles as unknown as Handles;
        const e = k.let(k.globalIndex, 'e');
        k.if(e.lt(h.edges as Val<'u32'>), () => {
          const { u, v, fields } = edgeFields(k, h, e, weighted);
          const comp = h.comp as U32Handle;
          const cu = k.let(comp.load(u), 'cu');
          const cv = k.let(comp.load(v), 'cv');
          k.if(cu.ne(cv), () => {
            if (stage === 0) (h.busy as U32Handle).store(0, u32(1));
            for (const c of [cu, cv]) {
              let match = cu.ne(cv);
              for (let s = 0; s < stage; s++) match = match.and((h[`f${s}`] as U32Handle).load(c).eq(fields[s] as Val<'u32'>));
              k.if(match, () => (h.out as U32Handle).atomicMin(c, fields[stage] as Val<'u32'>));
            }
          });
        });
      },
    }),
  );
}

export type MstFormulation = 'edges' | 'vertices';

const FORMULATIONS: readonly MstFormulation[] = ['edges', 'vertices'];

export interface MstOptions {
  /** Force a formulation (tests and benchmarks); by default `mstFormulation(device, graph)`. */
  readonly formulation?: MstFormulation;
}

/**
 * 'vertices' for symmetric graphs on devices that do not run many thin invocations
 * at once — where atomics are blended points (WebGL2), fat serial workgroups (the
 * CPU) or software GPUs: a hub's long row is one loop there, and the vertex passes
 * need far fewer atomics. 'edges' otherwise: on GPUs of many thin invocations an
 * R-MAT hub's row would serialise one thread. Why: LEDGER.md mst.formulation.
 */
export function mstFormulation(device: Device, graph: Graph, asked?: MstFormulation): Formulation<MstFormulation> {
  const family = classFamily(device, 'mst');
  const fewFat = device.caps.features.has('atomics-via-blending') || family !== 'workgroup';
  const name = asked ?? (graph.symmetric && fewFat ? 'vertices' : 'edges');
  const summary =
    name === 'vertices' ? "Borůvka by vertex passes (each vertex's lightest edge)" : 'Borůvka by edge passes (atomic min per component)';
  return { family, name, shape: undefined, summary };
}

/**
 * Each vertex's lightest edge to another component, over its row: the four fields
 * (NONE where it has none) and the component across it.
 */
function candidateKernel(device: Device, weighted: boolean) {
  const wg = gatherSize(device.caps);
  return cachedKernel(`mst_candidate:${weighted}:${wg}`, () =>
    defineKernel({
      name: 'mst_candidate',
      workgroupSize: wg,
      params: {
        indptr: buffer('u32', 'read'),
        indices: buffer('u32', 'read'),
        ...(weighted ? { weights: buffer('f32', 'read') } : {}),
        comp: buffer('u32', 'read'),
        c0: buffer('u32', 'write'),
        c1: buffer('u32', 'write'),
        c2: buffer('u32', 'write'),
        c3: buffer('u32', 'write'),
        across: buffer('u32', 'write'),
        n: uniform('u32'),
      },
      body: (handles, k) => {
        const h = handles as unknown as Handles;
        const v = k.let(k.globalIndex, 'v');
        k.if(v.lt(h.n as Val<'u32'>), () => {
          const comp = h.comp as U32Handle;
          const cv = k.let(comp.load(v), 'cv');
          const best = [0, 1, 2, 3].map((i) => k.var('u32', NONE, `b${i}`));
          const other = k.var('u32', NONE, 'other');
          const e = k.let((h.indptr as U32Handle).load(v), 'e');
          const end = k.let((h.indptr as U32Handle).load(v.add(1)), 'end');
          k.while(
            () => e.lt(end),
            () => {
              const u = k.let((h.indices as U32Handle).load(e), 'u');
              const cu = k.let(comp.load(u), 'cu');
              const w = weighted ? (h.weights as BufferHandle<'f32', 'read'>).load(e) : f32(1);
              const key = k.let(f32ToKey(w), 'key');
              const fields = [key.shr(16), key.and(0xffff), min(u, v), max(u, v)].map((x, i) => k.let(x, `f${i}`));
              // (fields) < (best), lexicographically: the first field that differs decides.
              let less: Val<'bool'> = (fields[3] as Val<'u32'>).lt(best[3] as Val<'u32'>);
              for (let i = 2; i >= 0; i--) {
                const f = fields[i] as Val<'u32'>;
                const b = best[i] as Val<'u32'>;
                less = f.lt(b).or(f.eq(b).and(less));
              }
              k.if(cu.ne(cv).and(less), () => {
                for (const [i, b] of best.entries()) b.set(fields[i] as Val<'u32'>);
                other.set(cu);
              });
              e.set(e.add(1));
            },
          );
          for (const [i, b] of best.entries()) (h[`c${i}`] as U32Handle).store(v, b);
          (h.across as U32Handle).store(v, other);
        });
      },
    }),
  );
}

/**
 * Stage s of the per-vertex minima: each vertex whose candidate matches its
 * component's fields 0..s-1 takes part in the atomic min of field s (stage 0 also
 * raises `busy` where a vertex has a candidate at all).
 */
function vertexMinKernel(device: Device, stage: number) {
  const wg = gatherSize(device.caps);
  const params: Record<string, ParamDecl> = {
    comp: buffer('u32', 'read'),
    out: buffer('u32', 'atomic'),
    ...(stage === 0 ? { busy: buffer('u32', 'write') } : {}),
    n: uniform('u32'),
  };
  for (let s = 0; s <= stage; s++) params[`c${s}`] = buffer('u32', 'read');
  for (let s = 0; s < stage; s++) params[`f${s}`] = buffer('u32', 'read');
  return cachedKernel(`mst_vmin:${stage}:${wg}`, () =>
    defineKernel({
      name: `mst_vertex_min_${stage}`,
      workgroupSize: wg,
      params,
      body: (handles, k) => {
        const h = handles as unknown as Handles;
        const v = k.let(k.globalIndex, 'v');
        k.if(v.lt(h.n as Val<'u32'>), () => {
          const c0 = k.let((h.c0 as U32Handle).load(v), 'c0');
          k.if(c0.ne(NONE), () => {
            if (stage === 0) (h.busy as U32Handle).store(0, u32(1));
            const c = k.let((h.comp as U32Handle).load(v), 'c');
            let match: Val<'bool'> = c0.ne(NONE);
            for (let s = 0; s < stage; s++) match = match.and((h[`f${s}`] as U32Handle).load(c).eq((h[`c${s}`] as U32Handle).load(v)));
            k.if(match, () => (h.out as U32Handle).atomicMin(c, (h[`c${stage}`] as U32Handle).load(v)));
          });
        });
      },
    }),
  );
}

/** target[c] = the component across c's chosen edge, stored by the vertex whose candidate it is. */
function vertexTargetKernel(device: Device) {
  const wg = gatherSize(device.caps);
  return cachedKernel(`mst_vtarget:${wg}`, () =>
    defineKernel({
      name: 'mst_vertex_target',
      workgroupSize: wg,
      params: {
        comp: buffer('u32', 'read'),
        c2: buffer('u32', 'read'),
        c3: buffer('u32', 'read'),
        across: buffer('u32', 'read'),
        f2: buffer('u32', 'read'),
        f3: buffer('u32', 'read'),
        target: buffer('u32', 'write'),
        n: uniform('u32'),
      },
      body: ({ comp, c2, c3, across, f2, f3, target, n }, k) => {
        const v = k.let(k.globalIndex, 'v');
        k.if(v.lt(n), () => {
          const lo = k.let(c2.load(v), 'lo');
          const c = k.let(comp.load(v), 'c');
          // The chosen edge has exactly one end in c: that end's candidate is the edge.
          k.if(
            lo
              .ne(NONE)
              .and(f2.load(c).eq(lo))
              .and(f3.load(c).eq(c3.load(v))),
            () => target.store(c, across.load(v)),
          );
        });
      },
    }),
  );
}

/**
 * target[c] = the component across c's chosen edge. The vertex pair (smaller end,
 * larger end) identifies the edge's two components, so matching it suffices
 * (heavier duplicates of the pair lead to the same component).
 */
function targetKernel(device: Device) {
  const wg = gatherSize(device.caps);
  return cachedKernel(`mst_target:${wg}`, () =>
    defineKernel({
      name: 'mst_target',
      workgroupSize: wg,
      params: {
        sources: buffer('u32', 'read'),
        indices: buffer('u32', 'read'),
        comp: buffer('u32', 'read'),
        f2: buffer('u32', 'read'),
        f3: buffer('u32', 'read'),
        target: buffer('u32', 'write'),
        edges: uniform('u32'),
      },
      body: ({ sources, indices, comp, f2, f3, target, edges }, k) => {
        const e = k.let(k.globalIndex, 'e');
        k.if(e.lt(edges), () => {
          const u = k.let(sources.load(e), 'u');
          const v = k.let(indices.load(e), 'v');
          const cu = k.let(comp.load(u), 'cu');
          const cv = k.let(comp.load(v), 'cv');
          const lo = k.let(min(u, v), 'lo');
          const hi = k.let(max(u, v), 'hi');
          k.if(cu.ne(cv), () => {
            k.if(f2.load(cu).eq(lo).and(f3.load(cu).eq(hi)), () => target.store(cu, cv));
            k.if(f2.load(cv).eq(lo).and(f3.load(cv).eq(hi)), () => target.store(cv, cu));
          });
        });
      },
    }),
  );
}

/** Whether root c hooks this round: it has a target, and is not the smaller of a mutual pair. */
function hooks(target: BufferHandle<'u32', 'read'>, c: Val<'u32'>, t: Val<'u32'>): Val<'bool'> {
  return t.ne(NONE).and(target.load(t).ne(c).or(c.gt(t)));
}

/** Slot c records root c's edge when c hooks (each vertex hooks at most once over all rounds). */
function recordKernel(device: Device) {
  const wg = gatherSize(device.caps);
  return cachedKernel(`mst_record:${wg}`, () =>
    defineKernel({
      name: 'mst_record',
      workgroupSize: wg,
      params: {
        target: buffer('u32', 'read'),
        f0: buffer('u32', 'read'),
        f1: buffer('u32', 'read'),
        f2: buffer('u32', 'read'),
        f3: buffer('u32', 'read'),
        key: buffer('u32', 'read_write'),
        lo: buffer('u32', 'read_write'),
        hi: buffer('u32', 'read_write'),
        n: uniform('u32'),
      },
      body: ({ target, f0, f1, f2, f3, key, lo, hi, n }, k) => {
        const c = k.let(k.globalIndex, 'c');
        k.if(c.lt(n), () => {
          const t = k.let(target.load(c), 't');
          const h = k.let(hooks(target, c, t), 'hooks');
          key.store(c, select(h, f0.load(c).shl(16).or(f1.load(c)), key.load(c)));
          lo.store(c, select(h, f2.load(c), lo.load(c)));
          hi.store(c, select(h, f3.load(c), hi.load(c)));
        });
      },
    }),
  );
}

/** comp[c] = target[c] where root c hooks (other vertices keep their root). */
function hookKernel(device: Device) {
  const wg = gatherSize(device.caps);
  return cachedKernel(`mst_hook:${wg}`, () =>
    defineKernel({
      name: 'mst_hook',
      workgroupSize: wg,
      params: { comp: buffer('u32', 'read_write'), target: buffer('u32', 'read'), n: uniform('u32') },
      body: ({ comp, target, n }, k) => {
        const c = k.let(k.globalIndex, 'c');
        k.if(c.lt(n), () => {
          const t = k.let(target.load(c), 't');
          comp.store(c, select(hooks(target, c, t), t, comp.load(c)));
        });
      },
    }),
  );
}

function initKernel(device: Device) {
  const wg = gatherSize(device.caps);
  return cachedKernel(`mst_init:${wg}`, () =>
    defineKernel({
      name: 'mst_init',
      workgroupSize: wg,
      params: { comp: buffer('u32', 'write'), n: uniform('u32') },
      body: ({ comp, n }, k) => {
        const v = k.let(k.globalIndex, 'v');
        k.if(v.lt(n), () => comp.store(v, v));
      },
    }),
  );
}

/**
 * A minimum spanning forest of a square graph whose stored entries are taken as
 * undirected weighted edges (a symmetric matrix stores each edge twice; either
 * copy, or both, will do). Pattern-only graphs weigh 1 per edge. Self-loops are
 * ignored; of duplicate entries the lightest counts.
 *
 * Returns the forest read back to the host (at most n - 1 edges): `edges` as k
 * rows (u, v) with u < v in ascending order, their f32 `weights`, and the float64
 * `totalWeight`. Ties are broken by (smaller end, larger end), so the result is
 * deterministic and equals `mstReference`.
 *
 * Complexity: O(m) work per round in 5 edge passes ('edges') or one vertex pass
 * walking the rows and 5 vertex passes ('vertices'), O(n log n) pointer jumping,
 * O(log n) rounds. Throws InvalidArgumentError for a non-square graph,
 * UnsupportedFeatureError without atomics, LimitExceededError for n > 2^24 on
 * blending devices; InvalidArgumentError for 'vertices' forced on a graph not
 * known to be symmetric.
 */
export async function mst(device: Device, graph: Graph, options: MstOptions = {}): Promise<MstForest> {
  checkGraph(device, graph);
  checkSquare(graph);
  needsAtomics(device, 'mst');
  const formulation = mstFormulation(device, graph, options.formulation).name;
  checkChoice('options.formulation', formulation, FORMULATIONS);
  if (formulation === 'vertices' && !graph.symmetric)
    throw new InvalidArgumentError('options.formulation', "'vertices' walks each vertex's row only: it needs a symmetric graph");
  const n = graph.rows;
  checkBlendable(device, n, 'mst');
  if (n === 0 || graph.edges === 0) return forestOf([]);
  const m = graph.edges;
  const weighted = graph.weights !== undefined;
  // Each stored entry's row, for the edge passes (the vertex passes walk the rows instead).
  const sources = formulation === 'edges' ? graph.sources() : graph.indices;
  const own: Buffer<'u32'>[] = [];
  const make = (length: number, value?: number): Buffer<'u32'> => {
    const b = device.createBuffer('u32', length);
    if (value !== undefined) b.fill(value);
    own.push(b);
    return b;
  };
  const comp = make(n);
  const tmp = make(n);
  const busy = make(1);
  const f = [make(n), make(n), make(n), make(n)] as const;
  const target = make(n);
  // The 'vertices' formulation's per-vertex candidates: four fields and the component across.
  const cand = formulation === 'vertices' ? [make(n), make(n), make(n), make(n), make(n)] : [];
  const key = make(n, NONE);
  const lo = make(n, NONE);
  const hi = make(n, NONE);
  try {
    device.dispatch(initKernel(device), { invocations: n }, { comp, n });
    const edgeArgs = { sources, indices: graph.indices, ...(graph.weights ? { weights: graph.weights } : {}), comp, edges: m };
    for (;;) {
      for (const b of f) b.fill(NONE);
      target.fill(NONE);
      busy.fill(0);
      if (formulation === 'vertices') {
        const [c0, c1, c2, c3, across] = cand as [Buffer<'u32'>, Buffer<'u32'>, Buffer<'u32'>, Buffer<'u32'>, Buffer<'u32'>];
        device.dispatch(candidateKernel(device, weighted), { invocations: n }, {
          indptr: graph.indptr,
          indices: graph.indices,
          ...(graph.weights ? { weights: graph.weights } : {}),
          comp,
          c0,
          c1,
          c2,
          c3,
          across,
          n,
        } as never);
        for (let stage = 0; stage < 4; stage++) {
          const args: Record<string, Buffer | number> = { comp, out: f[stage] as Buffer<'u32'>, n };
          if (stage === 0) args.busy = busy;
          for (let s = 0; s <= stage; s++) args[`c${s}`] = cand[s] as Buffer<'u32'>;
          for (let s = 0; s < stage; s++) args[`f${s}`] = f[s] as Buffer<'u32'>;
          device.dispatch(vertexMinKernel(device, stage), { invocations: n }, args as never);
        }
        if ((await busy.read())[0] === 0) break;
        device.dispatch(vertexTargetKernel(device), { invocations: n }, { comp, c2, c3, across, f2: f[2], f3: f[3], target, n });
      } else {
        for (let stage = 0; stage < 4; stage++) {
          const args: Record<string, Buffer | number> = { ...edgeArgs, out: f[stage] as Buffer<'u32'> };
          if (stage === 0) args.busy = busy;
          for (let s = 0; s < stage; s++) args[`f${s}`] = f[s] as Buffer<'u32'>;
          device.dispatch(edgeMinKernel(device, stage, weighted), { invocations: m }, args as never);
        }
        if ((await busy.read())[0] === 0) break;
        device.dispatch(
          targetKernel(device),
          { invocations: m },
          { sources, indices: graph.indices, comp, f2: f[2], f3: f[3], target, edges: m },
        );
      }
      device.dispatch(recordKernel(device), { invocations: n }, { target, f0: f[0], f1: f[1], f2: f[2], f3: f[3], key, lo, hi, n });
      device.dispatch(hookKernel(device), { invocations: n }, { comp, target, n });
      await compressLabels(device, comp, tmp, busy, n);
    }
    const [keys, los, his] = await Promise.all([key.read(), lo.read(), hi.read()]);
    const triples: Array<[number, number, number]> = [];
    const bits = new Uint32Array(1);
    const asF32 = new Float32Array(bits.buffer);
    for (let c = 0; c < n; c++) {
      if (los[c] === NONE) continue;
      bits[0] = keyToF32Host(keys[c] as number);
      triples.push([los[c] as number, his[c] as number, asF32[0] as number]);
    }
    return forestOf(triples);
  } finally {
    for (const b of own) b.destroy();
  }
}

/** Host inverse of f32ToKey: the f32 bits of an order key. */
function keyToF32Host(key: number): number {
  return (key & 0x80000000 ? key ^ 0x80000000 : ~key) >>> 0;
}
