/**
 * Kernels shared by the graph algorithms. All are gather kernels (invocation i
 * writes element i of each output), so every backend runs them.
 */
import { type Buffer, buffer, type Device, defineKernel, u32, uniform } from '@trident/core';
import { cachedKernel, gatherSize } from '../common.ts';

/** "No vertex / not reached": the largest u32, which reads as -1 in the i32 outputs. */
export const NONE = 0xffffffff;

/** rows[e] = the u with indptr[u] <= e < indptr[u+1]: upper bound of e in indptr, minus one. */
export function edgeSourcesKernel(device: Device) {
  const wg = gatherSize(device.caps);
  return cachedKernel(`graph_edge_sources:${wg}`, () =>
    defineKernel({
      name: 'graph_edge_sources',
      workgroupSize: wg,
      params: { indptr: buffer('u32', 'read'), out: buffer('u32', 'write'), rows: uniform('u32'), edges: uniform('u32') },
      body: ({ indptr, out, rows, edges }, k) => {
        const e = k.let(k.globalIndex, 'e');
        k.if(e.lt(edges), () => {
          const lo = k.var('u32', 0, 'lo');
          const hi = k.let(rows.add(1), 'hi');
          k.while(
            () => lo.lt(hi),
            () => {
              const mid = k.let(lo.add(hi).shr(1), 'mid');
              k.if(
                indptr.load(mid).le(e),
                () => lo.set(mid.add(1)),
                () => hi.set(mid),
              );
            },
          );
          out.store(e, lo.sub(1));
        });
      },
    }),
  );
}

/** out[i] = in[i] reinterpreted as i32 (NONE becomes -1). */
export function toI32Kernel(device: Device) {
  const wg = gatherSize(device.caps);
  return cachedKernel(`graph_to_i32:${wg}`, () =>
    defineKernel({
      name: 'graph_to_i32',
      workgroupSize: wg,
      params: { src: buffer('u32', 'read'), out: buffer('i32', 'write'), n: uniform('u32') },
      body: ({ src, out, n }, k) => {
        const i = k.let(k.globalIndex, 'i');
        k.if(i.lt(n), () => out.store(i, src.load(i).bitcast('i32')));
      },
    }),
  );
}

/**
 * Pointer jumping, double-buffered: next[v] = parent[parent[v]]; `changed[0]` is
 * set to 1 (a scatter store, every writer writes the same value) where a label moved.
 */
export function jumpKernel(device: Device) {
  const wg = gatherSize(device.caps);
  return cachedKernel(`graph_jump:${wg}`, () =>
    defineKernel({
      name: 'graph_jump',
      workgroupSize: wg,
      params: { parent: buffer('u32', 'read'), next: buffer('u32', 'write'), changed: buffer('u32', 'write'), n: uniform('u32') },
      body: ({ parent, next, changed, n }, k) => {
        const v = k.let(k.globalIndex, 'v');
        k.if(v.lt(n), () => {
          const p = k.let(parent.load(v), 'p');
          const pp = k.let(parent.load(p), 'pp');
          next.store(v, pp);
          k.if(pp.ne(p), () => changed.store(0, u32(1)));
        });
      },
    }),
  );
}

/** Converts a u32 buffer of ids / levels (NONE = -1) into a new i32 buffer. */
export function asI32(device: Device, src: Buffer<'u32'>, n: number): Buffer<'i32'> {
  const out = device.createBuffer('i32', n);
  if (n > 0) device.dispatch(toI32Kernel(device), { invocations: n }, { src, out, n });
  return out;
}

/**
 * Compresses `labels` (a forest of parent pointers, roots pointing at themselves)
 * until every vertex points at its root: jumps in pairs (labels -> tmp -> labels),
 * reading the change flag of the second jump after each pair.
 */
export async function compressLabels(
  device: Device,
  labels: Buffer<'u32'>,
  tmp: Buffer<'u32'>,
  flag: Buffer<'u32'>,
  n: number,
): Promise<void> {
  if (n === 0) return;
  const k = jumpKernel(device);
  for (;;) {
    flag.fill(0);
    device.dispatch(k, { invocations: n }, { parent: labels, next: tmp, changed: flag, n });
    device.dispatch(k, { invocations: n }, { parent: tmp, next: labels, changed: flag, n });
    const [f] = await flag.read({ length: 1 });
    if (f === 0) return;
  }
}
