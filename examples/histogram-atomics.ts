/**
 * A histogram with atomics: count how many values fall in each of `bins` bins.
 *
 * `histogramGlobal` adds one to the value's bin with a buffer atomic. Atomic add is
 * the 'atomic' kernel class, which every backend runs: webgpu natively, cpu with
 * `Atomics`, webgl2 by blending into a float texture (exact while a count stays
 * below `caps.limits.maxExactAtomicCount`, 2^24).
 *
 * `histogramShared` first counts into a workgroup's own copy of the bins (an atomic
 * workgroup array: fast, uncontended by other workgroups), waits at a barrier, then
 * adds each non-zero bin to the buffer once. That is the 'workgroup' class: webgpu
 * and cpu. `histogram` picks by `device.caps.features`, never by backend name.
 */
import { buffer, type Device, defineKernel, uniform } from 'trident';

export const histogramGlobal = defineKernel({
  name: 'histogram_global',
  workgroupSize: 64,
  params: { values: buffer('u32', 'read'), counts: buffer('u32', 'atomic'), bins: uniform('u32') },
  body: ({ values, counts, bins }, k) => {
    const i = k.let(k.globalIndex);
    k.if(i.lt(values.length), () => {
      const v = k.let(values.load(i));
      // Values past the last bin are not counted.
      k.if(v.lt(bins), () => counts.atomicAdd(v, 1));
    });
  },
});

/** Bins the shared kernel keeps in workgroup memory. */
export const SHARED_BINS = 64;

export const histogramShared = defineKernel({
  name: 'histogram_shared',
  workgroupSize: 64,
  params: { values: buffer('u32', 'read'), counts: buffer('u32', 'atomic'), bins: uniform('u32') },
  body: ({ values, counts, bins }, k) => {
    const local = k.workgroupArray('u32', SHARED_BINS, { atomic: true });
    const i = k.let(k.globalIndex);
    k.if(i.lt(values.length), () => {
      const v = k.let(values.load(i));
      k.if(v.lt(bins), () => local.atomicAdd(v, 1));
    });
    // Outside every branch: all invocations of the workgroup reach it.
    k.workgroupBarrier();
    // Invocation b publishes bin b (the workgroup has as many invocations as there are bins).
    const b = k.let(k.localIndex);
    const count = k.let(local.load(b));
    k.if(b.lt(bins).and(count.gt(0)), () => counts.atomicAdd(b, count));
  },
});

export async function histogram(device: Device, values: Uint32Array, bins: number): Promise<{ counts: Uint32Array; kernel: string }> {
  const input = device.createBuffer('u32', values);
  const counts = device.createBuffer('u32', bins); // new buffers start at zero
  const shared = device.caps.features.has('workgroup') && bins <= SHARED_BINS;
  const kernel = shared ? histogramShared : histogramGlobal;
  device.dispatch(kernel, { invocations: values.length }, { values: input, counts, bins });
  const result = await counts.read();
  input.destroy();
  counts.destroy();
  return { counts: result, kernel: kernel.name };
}

export function histogramReference(values: Uint32Array, bins: number): Uint32Array {
  const counts = new Uint32Array(bins);
  for (const v of values) if (v < bins) counts[v] = (counts[v] ?? 0) + 1;
  return counts;
}

export async function runHistogram(device: Device, n = 5000, bins = 40) {
  // Skewed values (many small ones), some past the last bin.
  const values = Uint32Array.from({ length: n }, (_, i) => Math.floor(((Math.imul(i, 2654435761) >>> 0) / 2 ** 32) ** 2 * (bins + 4)));
  const { counts, kernel } = await histogram(device, values, bins);
  const want = histogramReference(values, bins);
  return { ok: counts.every((c, b) => c === want[b]), kernel, counted: counts.reduce((s, c) => s + c, 0) };
}
