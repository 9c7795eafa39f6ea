/**
 * Weakly connected components by hooking and pointer jumping (Dulle 2016, PRAM algorithms on GPGPUs, §5.6,
 * after Shiloach–Vishkin): every vertex ends labelled with the smallest vertex id
 * of its component, edge direction ignored.
 *
 * Each round, on labels L (L[v] <= v, L[v] in v's component):
 * 1. hook, one invocation per stored edge (u, v): where L[u] != L[v], the larger
 *    label x gets atomicMin(L'[x], smaller) — roots hook under smaller roots. L' is
 *    a copy of L (double buffering, Dulle 2016 §4.2), so reads never see the round's
 *    own writes and every backend computes the same thing. The same invocation
 *    raises a "not done" flag where the edge's labels differ or are not yet roots.
 * 2. one pointer jump L[v] = L'[v] = L'[L'[v]] (a gather, in place on L').
 * The host reads the flag after each round; a round whose hook saw every edge
 * agree on a root label ends it, and then each label is its component's minimum.
 *
 * Needs 'atomic' (add/min/max) and 'scatter': native atomics, or WebGL2's min
 * blending, exact for ids below 2^24 (larger graphs are refused there).
 *
 * 'pull' (gather only; the default except on GPUs of many thin invocations with
 * native atomics, see componentsFormulation): each round, every vertex takes the
 * smallest label among its own, its out-neighbours' and its in-neighbours' (Graph.inNeighbours; a
 * symmetric graph's rows are both), then that label's label (one jump on the old
 * labels); a second pass jumps once more and flags the vertices whose label moved
 * in the round, and a gather max of the flags is the host's stop test. Labels only
 * fall and stay ids of the vertex's component; when none moves, every edge's ends
 * agree and every label is its own label, so each is its component's minimum.
 * O(m + n) work a round, O(diameter) rounds at most (the jumps shorten them).
 */
import { type Buffer, buffer, type Device, defineKernel, max, min, select, u32, uniform } from '@trident/core';
import { cachedKernel, checkChoice, gatherSize, hasAll } from '../common.ts';
import { classFamily, type Formulation } from '../plan.ts';
import { reduce } from '../reduce/reduce.ts';
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

export type ComponentsFormulation = 'hooking' | 'pull';

const FORMULATIONS: readonly ComponentsFormulation[] = ['hooking', 'pull'];

export interface ComponentsOptions {
  /** Force a formulation (tests and benchmarks); by default `componentsFormulation(device)`. */
  readonly formulation?: ComponentsFormulation;
}

/**
 * 'hooking' on GPUs of many thin invocations with native atomics (an R-MAT hub's row
 * would serialise one thread of the pull); 'pull' elsewhere: where atomics return no
 * value (WebGL2's blended points, a point per edge), on the CPU's fat serial
 * workgroups and on software GPUs. Why: LEDGER.md components.formulation.
 */
export function componentsFormulation(device: Device, asked?: ComponentsFormulation): Formulation<ComponentsFormulation> {
  const family = classFamily(device, 'components');
  const name = asked ?? (hasAll(device, 'atomic', 'atomic-other', 'scatter') && family === 'workgroup' ? 'hooking' : 'pull');
  const summary =
    name === 'hooking' ? 'hooking with atomic min, then pointer jumping' : 'label propagation by pull passes, then pointer jumping';
  return { family, name, shape: undefined, summary };
}

/**
 * The pull round's first pass: next[v] = labels[min(labels[v], labels[u] for u in
 * v's out- and, with `both`, in-neighbours)].
 */
function pullMinKernel(device: Device) {
  const wg = gatherSize(device.caps);
  return cachedKernel(`cc_pull_min:${wg}`, () =>
    defineKernel({
      name: 'cc_pull_min',
      workgroupSize: wg,
      params: {
        indptr: buffer('u32', 'read'),
        indices: buffer('u32', 'read'),
        inPtr: buffer('u32', 'read'),
        inIdx: buffer('u32', 'read'),
        labels: buffer('u32', 'read'),
        next: buffer('u32', 'write'),
        n: uniform('u32'),
        both: uniform('u32'),
      },
      body: ({ indptr, indices, inPtr, inIdx, labels, next, n, both }, k) => {
        const v = k.let(k.globalIndex, 'v');
        k.if(v.lt(n), () => {
          const best = k.let(labels.load(v), 'best');
          const walk = (ptr: typeof indptr, idx: typeof indices) => {
            k.for({ from: ptr.load(v), to: ptr.load(v.add(1)) }, (e) => best.set(min(best, labels.load(idx.load(e)))));
          };
          walk(indptr, indices);
          k.if(both.ne(0), () => walk(inPtr, inIdx));
          next.store(v, labels.load(best));
        });
      },
    }),
  );
}

/** The pull round's second pass: out[v] = mid[mid[v]], moved[v] = 1 where out[v] != before[v]. */
function pullJumpKernel(device: Device) {
  const wg = gatherSize(device.caps);
  return cachedKernel(`cc_pull_jump:${wg}`, () =>
    defineKernel({
      name: 'cc_pull_jump',
      workgroupSize: wg,
      params: {
        mid: buffer('u32', 'read'),
        before: buffer('u32', 'read'),
        out: buffer('u32', 'write'),
        moved: buffer('u32', 'write'),
        n: uniform('u32'),
      },
      body: ({ mid, before, out, moved, n }, k) => {
        const v = k.let(k.globalIndex, 'v');
        k.if(v.lt(n), () => {
          const p = k.let(mid.load(mid.load(v)), 'p');
          out.store(v, p);
          moved.store(v, select(p.ne(before.load(v)), u32(1), u32(0)));
        });
      },
    }),
  );
}

/** The pull rounds from labels `a` (`b` the other buffer of the pair): returns the one holding the result. */
async function pullComponents(device: Device, graph: Graph, a: Buffer<'u32'>, b: Buffer<'u32'>): Promise<Buffer<'u32'>> {
  const n = graph.rows;
  const { indptr: inPtr, indices: inIdx } = await graph.inNeighbours();
  const mid = device.createBuffer('u32', n);
  const moved = device.createBuffer('u32', n);
  let cur = a;
  let out = b;
  try {
    const args = { indptr: graph.indptr, indices: graph.indices, inPtr, inIdx, n, both: graph.symmetric ? 0 : 1 };
    for (let round = 0; ; round++) {
      device.dispatch(pullMinKernel(device), { invocations: n }, { ...args, labels: cur, next: mid });
      device.dispatch(pullJumpKernel(device), { invocations: n }, { mid, before: cur, out, moved, n });
      [cur, out] = [out, cur];
      // Tested after every second round (as bfs's pull levels): a round after the fixed
      // point moves nothing, so the later round's flags decide.
      if (round % 2 === 1 && (await reduce(device, moved, { op: 'max' })) === 0) return cur;
    }
  } finally {
    mid.destroy();
    moved.destroy();
  }
}

/**
 * Weakly connected component labels of a square graph: an (n,) i32 buffer, each
 * vertex labelled with the smallest vertex id of its component (isolated vertices
 * label themselves). Edge direction, self-loops and duplicates do not matter.
 *
 * Complexity: O(m + n) work per round, one host round trip per round; rounds grow
 * with the hooking depth, O(log n) on typical graphs ('hooking'), or at most with
 * the diameter ('pull').
 * Throws InvalidArgumentError for a non-square graph or an unknown formulation;
 * 'hooking' throws UnsupportedFeatureError on a device without atomics or scatter
 * and LimitExceededError for n > 2^24 on blending devices ('pull' needs neither).
 */
export async function components(device: Device, graph: Graph, options: ComponentsOptions = {}): Promise<Buffer<'i32'>> {
  checkGraph(device, graph);
  checkSquare(graph);
  const formulation = componentsFormulation(device, options.formulation).name;
  checkChoice('options.formulation', formulation, FORMULATIONS);
  const n = graph.rows;
  if (formulation === 'pull') {
    const a = device.createBuffer('u32', Math.max(1, n));
    const b = device.createBuffer('u32', Math.max(1, n));
    try {
      if (n > 0) device.dispatch(initKernel(device), { invocations: n }, { a, b, n });
      return asI32(device, graph.edges > 0 ? await pullComponents(device, graph, a, b) : a, n);
    } finally {
      a.destroy();
      b.destroy();
    }
  }
  needsAtomics(device, 'components');
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
