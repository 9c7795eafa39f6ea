/**
 * Minimum spanning forest by Borůvka (seed 000 §5.7), every stored entry (u, v, w)
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
 */
import {
  type Buffer,
  type BufferAccess,
  type BufferHandle,
  buffer,
  type Device,
  defineKernel,
  f32,
  type KernelBuilder,
  max,
  min,
  type ParamDecl,
  select,
  u32,
  uniform,
  type Val,
} from '@trident/core';
import { cachedKernel, f32ToKey, gatherSize } from '../common.ts';
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
 * Complexity: O(m) work per round in 5 edge passes, O(n log n) pointer jumping,
 * O(log n) rounds. Throws InvalidArgumentError for a non-square graph,
 * UnsupportedFeatureError without atomics, LimitExceededError for n > 2^24 on
 * blending devices.
 */
export async function mst(device: Device, graph: Graph): Promise<MstForest> {
  checkGraph(device, graph);
  checkSquare(graph);
  needsAtomics(device, 'mst');
  const n = graph.rows;
  checkBlendable(device, n, 'mst');
  if (n === 0 || graph.edges === 0) return forestOf([]);
  const m = graph.edges;
  const weighted = graph.weights !== undefined;
  const sources = graph.sources();
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
