/**
 * Weakly connected components by hooking and pointer jumping (seed 000 §5.6,
 * after Shiloach–Vishkin): every vertex ends labelled with the smallest vertex id
 * of its component, edge direction ignored.
 *
 * Each round, on labels L (L[v] <= v, L[v] in v's component):
 * 1. hook, one invocation per stored edge (u, v): where L[u] != L[v], the larger
 *    label x gets atomicMin(L'[x], smaller) — roots hook under smaller roots. L' is
 *    a copy of L (double buffering, seed 000 §4.2), so reads never see the round's
 *    own writes and every backend computes the same thing. The same invocation
 *    raises a "not done" flag where the edge's labels differ or are not yet roots.
 * 2. one pointer jump L[v] = L'[v] = L'[L'[v]] (a gather, in place on L').
 * The host reads the flag after each round; a round whose hook saw every edge
 * agree on a root label ends it, and then each label is its component's minimum.
 *
 * Needs 'atomic' (add/min/max) and 'scatter': native atomics, or WebGL2's min
 * blending, exact for ids below 2^24 (larger graphs are refused there).
 */
import { type Buffer, buffer, type Device, defineKernel, max, min, u32, uniform } from '@trident/core';
import { cachedKernel, gatherSize } from '../common.ts';
import { checkGraph, checkSquare, type Graph } from './graph.ts';
import { asI32 } from './kernels.ts';
import { checkBlendable, needsAtomics } from './needs.ts';

function initKernel(device: Device) {
  const wg = gatherSize(device.caps);
  return cachedKernel(`cc_init:${wg}`, () =>
    defineKernel({
      name: 'cc_init',
      workgroupSize: wg,
      params: { a: buffer('u32', 'write'), b: buffer('u32', 'write'), n: uniform('u32') },
      body: ({ a, b, n }, k) => {
        const v = k.let(k.globalIndex, 'v');
        k.if(v.lt(n), () => {
          a.store(v, v);
          b.store(v, v);
        });
      },
    }),
  );
}

function hookKernel(device: Device) {
  const wg = gatherSize(device.caps);
  return cachedKernel(`cc_hook:${wg}`, () =>
    defineKernel({
      name: 'cc_hook',
      workgroupSize: wg,
      params: {
        sources: buffer('u32', 'read'),
        indices: buffer('u32', 'read'),
        labels: buffer('u32', 'read'),
        hooked: buffer('u32', 'atomic'),
        busy: buffer('u32', 'write'),
        edges: uniform('u32'),
      },
      body: ({ sources, indices, labels, hooked, busy, edges }, k) => {
        const e = k.let(k.globalIndex, 'e');
        k.if(e.lt(edges), () => {
          const lu = k.let(labels.load(sources.load(e)), 'lu');
          const lv = k.let(labels.load(indices.load(e)), 'lv');
          k.if(lu.ne(lv), () => {
            hooked.atomicMin(max(lu, lv), min(lu, lv));
            busy.store(0, u32(1));
          });
          // Labels that are not roots yet: the next jump still has work.
          k.if(labels.load(lu).ne(lu).or(labels.load(lv).ne(lv)), () => busy.store(0, u32(1)));
        });
      },
    }),
  );
}

function jumpBothKernel(device: Device) {
  const wg = gatherSize(device.caps);
  return cachedKernel(`cc_jump:${wg}`, () =>
    defineKernel({
      name: 'cc_jump',
      workgroupSize: wg,
      params: { hooked: buffer('u32', 'read_write'), labels: buffer('u32', 'write'), n: uniform('u32') },
      body: ({ hooked, labels, n }, k) => {
        const v = k.let(k.globalIndex, 'v');
        k.if(v.lt(n), () => {
          // In place: a racing read sees an older or newer label, both valid (in v's component, <= v).
          const p = k.let(hooked.load(hooked.load(v)), 'p');
          labels.store(v, p);
          hooked.store(v, p);
        });
      },
    }),
  );
}

/**
 * Weakly connected component labels of a square graph: an (n,) i32 buffer, each
 * vertex labelled with the smallest vertex id of its component (isolated vertices
 * label themselves). Edge direction, self-loops and duplicates do not matter.
 *
 * Complexity: O(m + n) work per round, one host round trip per round; rounds grow
 * with the hooking depth, O(log n) on typical graphs.
 * Throws InvalidArgumentError for a non-square graph, UnsupportedFeatureError on a
 * device without atomics or scatter, LimitExceededError for n > 2^24 on blending devices.
 */
export async function components(device: Device, graph: Graph): Promise<Buffer<'i32'>> {
  checkGraph(device, graph);
  checkSquare(graph);
  needsAtomics(device, 'components');
  const n = graph.rows;
  checkBlendable(device, n, 'components');
  const labels = device.createBuffer('u32', Math.max(1, n));
  const hooked = device.createBuffer('u32', Math.max(1, n));
  const busy = device.createBuffer('u32', 1);
  try {
    if (n > 0) device.dispatch(initKernel(device), { invocations: n }, { a: labels, b: hooked, n });
    const m = graph.edges;
    if (m > 0) {
      const sources = graph.sources();
      for (;;) {
        busy.fill(0);
        device.dispatch(hookKernel(device), { invocations: m }, { sources, indices: graph.indices, labels, hooked, busy, edges: m });
        device.dispatch(jumpBothKernel(device), { invocations: n }, { hooked, labels, n });
        if ((await busy.read())[0] === 0) break;
      }
    }
    return asI32(device, labels, n);
  } finally {
    labels.destroy();
    hooked.destroy();
    busy.destroy();
  }
}
