/**
 * Maximum-cardinality bipartite matching by phases of parallel augmenting-path
 * search (the BFS-forest scheme of GPU matching codes, in the spirit of
 * Hopcroft–Karp). Seed 000 §5.5 parallelises Khosla's label method but only argues
 * its maximality; this scheme is maximum by Berge's theorem: a phase that finds
 * no augmenting path ends the search.
 *
 * One phase, left vertices L (rows), right vertices R (columns):
 * 1. BFS from every free left vertex at once, level by level, alternating:
 *    a left vertex at level d offers itself to every unvisited right neighbour
 *    (atomic min: each right vertex r takes the smallest offering id as parent[r],
 *    so the search is a forest, one tree per free root); a matched right vertex
 *    then brings its mate to level d + 1. Each vertex carries its tree's root.
 * 2. At the first level where a free right vertex is reached, each tree picks one
 *    such vertex (atomic min by root) and one invocation per tree flips the path
 *    back to its root. Trees are vertex-disjoint, so the flips never collide.
 * Every phase augments at least once; the host reads two flags per level.
 *
 * Needs 'atomic' (min) and 'scatter' (the flips): native atomics, or WebGL2's
 * min blending for ids below 2^24.
 */
import { type Buffer, buffer, type Device, defineKernel, select, u32, uniform } from '@trident/core';
import { cachedKernel, gatherSize } from '../common.ts';
import { checkGraph, type Graph } from './graph.ts';
import { asI32, NONE } from './kernels.ts';
import { checkBlendable, needsAtomics } from './needs.ts';

const initKernel = (device: Device) =>
  cachedKernel(`match_init:${gatherSize(device.caps)}`, () =>
    defineKernel({
      name: 'match_init',
      workgroupSize: gatherSize(device.caps),
      params: { mateL: buffer('u32', 'read'), levelL: buffer('u32', 'write'), rootL: buffer('u32', 'write'), nl: uniform('u32') },
      body: ({ mateL, levelL, rootL, nl }, k) => {
        const l = k.let(k.globalIndex, 'l');
        k.if(l.lt(nl), () => {
          levelL.store(l, select(mateL.load(l).eq(NONE), u32(0), u32(NONE)));
          rootL.store(l, l);
        });
      },
    }),
  );

const offerKernel = (device: Device) =>
  cachedKernel(`match_offer:${gatherSize(device.caps)}`, () =>
    defineKernel({
      name: 'match_offer',
      workgroupSize: gatherSize(device.caps),
      params: {
        sources: buffer('u32', 'read'),
        indices: buffer('u32', 'read'),
        levelL: buffer('u32', 'read'),
        levelR: buffer('u32', 'read'),
        parentR: buffer('u32', 'atomic'),
        edges: uniform('u32'),
        depth: uniform('u32'),
      },
      body: ({ sources, indices, levelL, levelR, parentR, edges, depth }, k) => {
        const e = k.let(k.globalIndex, 'e');
        k.if(e.lt(edges), () => {
          const l = k.let(sources.load(e), 'l');
          const r = k.let(indices.load(e), 'r');
          k.if(levelL.load(l).eq(depth).and(levelR.load(r).eq(NONE)), () => parentR.atomicMin(r, l));
        });
      },
    }),
  );

const rightKernel = (device: Device) =>
  cachedKernel(`match_right:${gatherSize(device.caps)}`, () =>
    defineKernel({
      name: 'match_right',
      workgroupSize: gatherSize(device.caps),
      params: {
        levelR: buffer('u32', 'read_write'),
        rootR: buffer('u32', 'read_write'),
        parentR: buffer('u32', 'read'),
        rootL: buffer('u32', 'read'),
        mateR: buffer('u32', 'read'),
        flags: buffer('u32', 'write'),
        nr: uniform('u32'),
        depth: uniform('u32'),
      },
      body: ({ levelR, rootR, parentR, rootL, mateR, flags, nr, depth }, k) => {
        const r = k.let(k.globalIndex, 'r');
        k.if(r.lt(nr), () => {
          const p = k.let(parentR.load(r), 'p');
          const fresh = k.let(levelR.load(r).eq(NONE).and(p.ne(NONE)), 'fresh');
          levelR.store(r, select(fresh, depth, levelR.load(r)));
          rootR.store(r, select(fresh, rootL.load(p), rootR.load(r)));
          // flags[0]: a free right vertex was reached (an augmenting path ends here); flags[1]: the search goes on.
          k.if(fresh, () =>
            k.if(
              mateR.load(r).eq(NONE),
              () => flags.store(0, u32(1)),
              () => flags.store(1, u32(1)),
            ),
          );
        });
      },
    }),
  );

const leftKernel = (device: Device) =>
  cachedKernel(`match_left:${gatherSize(device.caps)}`, () =>
    defineKernel({
      name: 'match_left',
      workgroupSize: gatherSize(device.caps),
      params: {
        mateL: buffer('u32', 'read'),
        levelL: buffer('u32', 'read_write'),
        rootL: buffer('u32', 'read_write'),
        levelR: buffer('u32', 'read'),
        rootR: buffer('u32', 'read'),
        nl: uniform('u32'),
        depth: uniform('u32'),
      },
      body: ({ mateL, levelL, rootL, levelR, rootR, nl, depth }, k) => {
        const l = k.let(k.globalIndex, 'l');
        k.if(l.lt(nl), () => {
          const m = k.let(mateL.load(l), 'm');
          const fresh = k.let(levelL.load(l).eq(NONE).and(m.ne(NONE)).and(levelR.load(m).eq(depth)), 'fresh');
          levelL.store(l, select(fresh, depth.add(1), levelL.load(l)));
          rootL.store(l, select(fresh, rootR.load(m), rootL.load(l)));
        });
      },
    }),
  );

const pickKernel = (device: Device) =>
  cachedKernel(`match_pick:${gatherSize(device.caps)}`, () =>
    defineKernel({
      name: 'match_pick',
      workgroupSize: gatherSize(device.caps),
      params: {
        levelR: buffer('u32', 'read'),
        mateR: buffer('u32', 'read'),
        rootR: buffer('u32', 'read'),
        pick: buffer('u32', 'atomic'),
        nr: uniform('u32'),
      },
      body: ({ levelR, mateR, rootR, pick, nr }, k) => {
        const r = k.let(k.globalIndex, 'r');
        k.if(r.lt(nr), () => {
          k.if(levelR.load(r).ne(NONE).and(mateR.load(r).eq(NONE)), () => pick.atomicMin(rootR.load(r), r));
        });
      },
    }),
  );

const augmentKernel = (device: Device) =>
  cachedKernel(`match_augment:${gatherSize(device.caps)}`, () =>
    defineKernel({
      name: 'match_augment',
      workgroupSize: gatherSize(device.caps),
      params: {
        pick: buffer('u32', 'read'),
        parentR: buffer('u32', 'read'),
        mateL: buffer('u32', 'read_write'),
        mateR: buffer('u32', 'write'),
        nl: uniform('u32'),
      },
      body: ({ pick, parentR, mateL, mateR, nl }, k) => {
        const root = k.let(k.globalIndex, 'root');
        k.if(root.lt(nl), () => {
          const r = k.let(pick.load(root), 'r');
          // Walk back: r's parent p takes r; p's old mate (the right vertex p was reached through) is next.
          k.while(
            () => r.ne(NONE),
            () => {
              const p = k.let(parentR.load(r), 'p');
              const next = k.let(mateL.load(p), 'next');
              mateL.store(p, r);
              mateR.store(r, p);
              r.set(next);
            },
          );
        });
      },
    }),
  );

/**
 * A maximum-cardinality matching of the bipartite graph whose (nU, nV)
 * biadjacency matrix is `graph` (rows = left vertices, columns = right vertices).
 * Returns an (nU,) i32 buffer: the right vertex matched to each left vertex, or -1.
 * The cardinality equals scipy's `maximum_bipartite_matching` (which matching is
 * found may differ). Weights, duplicates and the order of entries are ignored.
 *
 * Complexity: per phase O(m + nU + nV) work per BFS level and two host reads per
 * level; phases ≤ the matching size, usually far fewer (each phase augments one
 * path per BFS tree that reaches a free right vertex).
 * Throws UnsupportedFeatureError without atomics or scatter, LimitExceededError for
 * more than 2^24 vertices on a side on blending devices.
 */
export async function matching(device: Device, graph: Graph): Promise<Buffer<'i32'>> {
  checkGraph(device, graph);
  needsAtomics(device, 'matching');
  const nl = graph.rows;
  const nr = graph.columns;
  checkBlendable(device, Math.max(nl, nr), 'matching');
  const own: Buffer<'u32'>[] = [];
  const make = (length: number, value?: number): Buffer<'u32'> => {
    const b = device.createBuffer('u32', Math.max(1, length));
    if (value !== undefined) b.fill(value);
    own.push(b);
    return b;
  };
  const mateL = make(nl, NONE);
  try {
    const m = graph.edges;
    if (m > 0 && nl > 0 && nr > 0) {
      const mateR = make(nr, NONE);
      const levelL = make(nl);
      const rootL = make(nl);
      const levelR = make(nr);
      const rootR = make(nr);
      const parentR = make(nr);
      const pick = make(nl);
      const flags = make(2);
      const sources = graph.sources();
      for (let searching = true; searching; ) {
        levelR.fill(NONE);
        parentR.fill(NONE);
        pick.fill(NONE);
        device.dispatch(initKernel(device), { invocations: nl }, { mateL, levelL, rootL, nl });
        for (let depth = 0; ; depth++) {
          flags.fill(0);
          device.dispatch(
            offerKernel(device),
            { invocations: m },
            { sources, indices: graph.indices, levelL, levelR, parentR, edges: m, depth },
          );
          device.dispatch(rightKernel(device), { invocations: nr }, { levelR, rootR, parentR, rootL, mateR, flags, nr, depth });
          device.dispatch(leftKernel(device), { invocations: nl }, { mateL, levelL, rootL, levelR, rootR, nl, depth });
          const [found, more] = await flags.read();
          if (found) {
            device.dispatch(pickKernel(device), { invocations: nr }, { levelR, mateR, rootR, pick, nr });
            device.dispatch(augmentKernel(device), { invocations: nl }, { pick, parentR, mateL, mateR, nl });
            break;
          }
          if (!more) {
            searching = false;
            break;
          }
        }
      }
    }
    return asI32(device, mateL, nl);
  } finally {
    for (const b of own) b.destroy();
  }
}
