/**
 * histogram (after Wenke 2013, parallel algorithms with OpenCL): counts of u32 values in `bins` bins.
 *
 * Shared formulation (devices with 'workgroup', when `bins` u32 counters fit
 * `limits.maxComputeWorkgroupStorageSize`; Wenke 2013's "reducing conflicts I + II",
 * and what CUB's shared-memory histogram does): a kernel with a grid sized from
 * `caps.concurrency` reads the input in tiles of consecutive elements, tile t to
 * workgroup t % workgroups (vec4 loads when n divides by 4, several loads in
 * flight per invocation), and counts into sub-histograms in workgroup memory with
 * workgroup atomics. Each workgroup keeps `copies` sub-histograms, interleaved by
 * bin (counter b * copies + c), and invocation l counts into copy l % copies: with
 * a copy per subgroup lane (as many as the workgroup memory budget allows, see
 * `sharedPlan`), lanes of one subgroup rarely hit one counter together, so a run
 * of equal values (maximum contention) costs no more than random ones; on a CPU
 * worker (subgroups of 1) one copy. Then each workgroup sums its copies bin by
 * bin and adds every non-zero bin into the output with one global atomic add (the
 * output is zeroed first), so nothing else is written and no second pass runs.
 *
 * Global formulation (devices with 'workgroup', bins too many for workgroup
 * memory): each workgroup counts its grid-stride share into its own
 * sub-histogram in a global temporary with atomic adds, then one gather pass sums
 * the sub-histograms bin by bin (variant C: a reduction per bin, no atomics, not
 * data-dependent); when bins × workgroups would be too large, fewer workgroups
 * are used, down to one histogram updated by global atomics (variant A).
 *
 * Packed-counting formulation (gather-only devices, bins <= PACKED_MAX_BINS;
 * histogram-gather.ts): fragments count chunks of 252 elements into 8-bit
 * counters packed four to a word, then gather passes sum the bytes; no points and
 * no blending, so it needs no atomics.
 *
 * Chunked formulation (devices with 'serial-workgroups' and 'scatter': a CPU's
 * few, fat, serial workgroups; histogram-chunked.ts): one contiguous chunk per
 * worker counts into its own sub-histogram in one sequential loop (plain loads and
 * stores), then one invocation per bin adds the chunks' counts. Where bins
 * outnumber the values (`CHUNKED_HISTOGRAM`), the chunks count into the output
 * with global atomics instead.
 *
 * Blended-atomics formulation (gather-only devices with 'atomic', more bins):
 * atomic adds are exact only up to `limits.maxExactAtomicCount`, so the input is
 * processed in chunks of at most that many elements (no bin can pass it in one
 * chunk); each chunk's histogram is added into the running total by a gather pass.
 */
import {
  type Buffer,
  buffer,
  type Device,
  type DeviceCaps,
  defineKernel,
  InvalidArgumentError,
  LimitExceededError,
  select,
  u32,
  uniform,
  type Val,
} from '@trident/core';
import {
  blockSize,
  cachedKernel,
  checkBuffer,
  checkCount,
  dispatchGroups,
  floorPow2,
  gatherSize,
  gridStride,
  hasAll,
  scratch,
  strideWorkgroups,
  unsupported,
} from '../common.ts';
import { chooseFamily, type Formulation } from '../plan.ts';
import { chunkPlan } from '../reduce/reduce.ts';
import { chunkedHistogramFits, recordAtomicChunkHistogram, recordChunkedHistogram } from './histogram-chunked.ts';
import { PACKED_MAX_BINS, recordPackedHistogram } from './histogram-gather.ts';
import * as TUNING from './tuning.ts';

/** Largest sub-histogram temporary, in elements (16 MiB). */
const MAX_SUB_ELEMENTS = 2 ** 22;

export interface HistogramOptions {
  /** Number of bins, an integer >= 1. Values >= bins are ignored (counted in no bin). */
  readonly bins: number;
  /** Where to write the counts (u32, length `bins`); a new buffer otherwise. */
  readonly output?: Buffer<'u32'>;
}

// ---------- shared formulation ----------

/** How the shared formulation runs. `sharedPlan` derives it from caps; the H100 check tries others. */
export interface SharedHistogramPlan {
  /** Invocations per workgroup. */
  readonly workgroupSize: number;
  /** Sub-histograms per workgroup, a power of two: invocation l counts into copy l % copies. */
  readonly copies: number;
  /** Vector loads each invocation issues before counting them (loads in flight). */
  readonly unroll: number;
  /** Workgroups of the grid-stride loop. */
  readonly workgroups: number;
  /**
   * Each workgroup reads tiles of workgroupSize * unroll consecutive elements (tile
   * t goes to workgroup t % workgroups); otherwise the `unroll` loads of an
   * invocation lie one grid stride apart.
   */
  readonly tiled: boolean;
}

const { maxCopies: MAX_COPIES, unroll: SHARED_UNROLL, waves: SHARED_WAVES } = TUNING.SHARED.value;

/**
 * The shared formulation's plan for `work` elements of the (vec4 or scalar) view,
 * or undefined when even one sub-histogram of `bins` counters does not fit the
 * device's workgroup memory:
 * - workgroups as large as the device allows, up to 1024;
 * - copies: one per subgroup lane (maxSubgroupSize; 1 where subgroups are width-1
 *   or absent), at most MAX_COPIES, and at most half of the workgroup memory that
 *   a largest workgroup's share per invocation allows
 *   (maxComputeWorkgroupStorageSize / maxComputeInvocationsPerWorkgroup): resident
 *   invocations need their workgroup memory too;
 * - tiles of consecutive elements per workgroup, SHARED_WAVES waves of workgroups,
 *   SHARED_UNROLL loads in flight (tuning.ts).
 */
export function sharedPlan(caps: DeviceCaps, work: number, bins: number): SharedHistogramPlan | undefined {
  const counters = Math.floor(caps.limits.maxComputeWorkgroupStorageSize / 4);
  if (bins > counters) return undefined;
  const workgroupSize = blockSize(caps, 0, 1024);
  const lanes = Math.max(1, caps.limits.maxSubgroupSize);
  const budget = Math.floor((counters * workgroupSize) / caps.limits.maxComputeInvocationsPerWorkgroup / 2);
  const copies = floorPow2(Math.max(1, Math.min(lanes, MAX_COPIES, Math.floor(budget / bins))));
  const byWork = Math.max(1, Math.ceil(work / (workgroupSize * SHARED_UNROLL)));
  const waves = Math.ceil((SHARED_WAVES * caps.concurrency) / workgroupSize);
  const workgroups = Math.min(byWork, Math.max(strideWorkgroups(caps, work, workgroupSize, SHARED_UNROLL), waves));
  return { workgroupSize, copies, unroll: SHARED_UNROLL, workgroups, tiled: true };
}

/**
 * Counts values into workgroup-memory sub-histograms (see the module header) and
 * adds each workgroup's non-zero bins into `out` (which must hold zeros) with
 * global atomics. `bins` and `copies` size the workgroup array, so they are
 * compile-time constants of the kernel.
 */
function sharedKernel(width: 1 | 4, bins: number, plan: SharedHistogramPlan) {
  const { workgroupSize: wg, copies, unroll, tiled } = plan;
  return cachedKernel(`hist-shared:${width}:${bins}:${wg}:${copies}:${unroll}:${tiled}`, () =>
    defineKernel({
      name: `histogram_shared_v${width}_c${copies}${tiled ? '_tiled' : ''}`,
      workgroupSize: wg,
      params: {
        values: buffer('u32', 'read', { vector: width }),
        out: buffer('u32', 'atomic'),
        n: uniform('u32'),
        groups: uniform('u32'),
      },
      body: ({ values, out, n, groups }, k) => {
        const hist = k.workgroupArray('u32', bins * copies, { atomic: true });
        const shift = Math.log2(copies);
        const copy = k.let(k.localIndex.and(copies - 1), 'copy');
        // v < bins first: v * copies could wrap into range.
        const count = (v: Val<'u32'>) => k.if(v.lt(bins), () => void hist.atomicAdd(shift ? v.shl(shift).add(copy) : v, 1));
        const countAll = (x: Val<'u32' | 'vec4<u32>'>) => {
          if (width === 1) {
            count(x as Val<'u32'>);
            return;
          }
          const v = x as Val<'vec4<u32>'>;
          count(v.x);
          count(v.y);
          count(v.z);
          count(v.w);
        };
        // i: this invocation's next element; `inner` apart within an iteration, `outer` between
        // iterations. Workgroups a folded grid adds start at n (see gridStride).
        const { i, stride } = gridStride(k, groups, n);
        if (tiled) i.set(select(k.workgroupIndex.lt(groups), k.workgroupIndex.mul(wg * unroll).add(k.localIndex), n));
        const inner = tiled ? k.let(u32(wg), 'inner') : stride;
        const outer = k.let(stride.mul(unroll), 'outer');
        // Main loop: `unroll` loads in flight, then their counts; no bounds checks.
        const last = k.let(inner.mul(unroll - 1), 'last');
        k.while(
          () => i.add(last).lt(n),
          () => {
            const xs: Array<Val<'u32' | 'vec4<u32>'>> = [];
            for (let u = 0; u < unroll; u++) xs.push(values.load(u === 0 ? i : i.add(inner.mul(u))));
            for (const x of xs) countAll(x);
            i.set(i.add(outer));
          },
        );
        // The rest: tiled, what is left of this invocation's last tile; else a plain grid stride.
        k.while(
          () => i.lt(n),
          () => {
            countAll(values.load(i));
            i.set(i.add(inner));
          },
        );
        k.barrier();
        // Merge: bin b sums its copies starting at copy b % copies, so the invocations
        // of a subgroup read different banks; one global atomic per non-zero bin.
        k.for({ from: k.localIndex, to: bins, step: wg }, (b) => {
          const sum = k.var('u32', 0, 'sum');
          const row = k.let(b.shl(shift), 'row');
          k.for({ from: 0, to: copies, type: 'u32' }, (c) => sum.set(sum.add(hist.load(row.add(c.add(b).and(copies - 1))))));
          k.if(sum.gt(0), () => void out.atomicAdd(b, sum));
        });
      },
    }),
  );
}

/**
 * Records the shared formulation: zeroes `output` and dispatches the counting
 * kernel over `plan.workgroups` workgroups. Exported for the H100 check, which
 * tries plans other than `sharedPlan`'s; `histogram` is the public entry.
 */
export function recordSharedHistogram(
  device: Device,
  values: Buffer<'u32'>,
  output: Buffer<'u32'>,
  bins: number,
  plan: SharedHistogramPlan,
): void {
  output.fill(0);
  // Past one binding, one pass per segment (each binds one binding, not one per segment),
  // all counting into `output`; each segment runs `plan` (its workgroups stride over less).
  for (const piece of device.segments(values)) {
    const width: 1 | 4 = piece.length % 4 === 0 ? 4 : 1;
    dispatchGroups(device, sharedKernel(width, bins, plan), plan.workgroups, {
      values: piece,
      out: output,
      n: piece.length / width,
      groups: plan.workgroups,
    });
  }
}

// ---------- global and blended formulations ----------

/**
 * Counts values into hist[base + v] with atomic adds, skipping v >= bins.
 * strided: grid-stride over [0, n) (base = workgroupIndex * bins when privatized);
 * otherwise one element per invocation at offset + globalIndex (gather devices).
 */
function countKernel(width: 1 | 4, wg: number, strided: boolean, privatized: boolean) {
  return cachedKernel(`hist-count:${width}:${wg}:${strided}:${privatized}`, () =>
    defineKernel({
      name: `histogram_count_v${width}${strided ? '_stride' : ''}${privatized ? '_private' : ''}`,
      workgroupSize: wg,
      params: {
        values: buffer('u32', 'read', { vector: width }),
        hist: buffer('u32', 'atomic'),
        n: uniform('u32'),
        offset: uniform('u32'),
        bins: uniform('u32'),
        groups: uniform('u32'),
      },
      body: ({ values, hist, n, offset, bins, groups }, k) => {
        const base = k.let(privatized ? k.workgroupIndex.mul(bins) : k.var('u32', 0), 'base');
        const count = (v: Val<'u32'>) => k.if(v.lt(bins), () => void hist.atomicAdd(base.add(v), 1));
        const each = (i: Val<'u32'>) => {
          if (width === 1) {
            count(values.load(i) as Val<'u32'>);
            return;
          }
          const v = k.let(values.load(i) as Val<'vec4<u32>'>, 'v');
          count(v.x);
          count(v.y);
          count(v.z);
          count(v.w);
        };
        if (!strided) {
          const i = k.let(k.globalIndex, 'i');
          k.if(i.lt(n), () => each(i.add(offset)));
          return;
        }
        const { i, stride } = gridStride(k, groups, n);
        k.while(
          () => i.lt(n),
          () => {
            each(i);
            i.set(i.add(stride));
          },
        );
      },
    }),
  );
}

/** out[b] = Σ_g sub[g * bins + b] for g < parts (gather: one invocation per bin). */
function mergeKernel(wg: number) {
  return cachedKernel(`hist-merge:${wg}`, () =>
    defineKernel({
      name: 'histogram_merge',
      workgroupSize: wg,
      params: { sub: buffer('u32', 'read'), out: buffer('u32', 'write'), bins: uniform('u32'), parts: uniform('u32') },
      body: ({ sub, out, bins, parts }, k) => {
        const b = k.let(k.globalIndex, 'b');
        k.if(b.lt(bins), () => {
          const sum = k.var('u32', 0, 'sum');
          k.for({ from: 0, to: parts }, (g) => sum.set(sum.add(sub.load(g.mul(bins).add(b)))));
          out.store(b, sum);
        });
      },
    }),
  );
}

/** dst[b] = a[b] + c[b] (gather). */
function addKernel(wg: number) {
  return cachedKernel(`hist-add:${wg}`, () =>
    defineKernel({
      name: 'histogram_add',
      workgroupSize: wg,
      params: { a: buffer('u32', 'read'), c: buffer('u32', 'read'), dst: buffer('u32', 'write'), bins: uniform('u32') },
      body: ({ a, c, dst, bins }, k) => {
        const b = k.let(k.globalIndex, 'b');
        k.if(b.lt(bins), () => dst.store(b, a.load(b).add(c.load(b))));
      },
    }),
  );
}

/**
 * Counts how many elements of `values` (u32) fall in each of `bins` bins: bin v
 * counts the elements equal to v. **Values >= bins are ignored**: they are counted
 * in no bin, so the counts sum to the number of in-range values. Records the work
 * and returns the u32 counts (`options.output`, or a new buffer of length `bins`).
 *
 * Counts are exact (bit-identical to the sequential reference) on every device;
 * on blended-atomics devices the chunking keeps every partial count below
 * `limits.maxExactAtomicCount`. Empty input gives all-zero counts.
 *
 * Complexity: one read of the input and O(n + bins · W) work. On serial-workgroup
 * devices W is the number of chunks (`caps.concurrency`), or 1 past the chunked
 * threshold (global atomics). Elsewhere, where `bins` counters
 * fit the workgroup memory (the shared formulation), W is workgroups × copies
 * (see `sharedPlan`), the sub-histograms never leave workgroup memory and at most
 * bins × workgroups global atomic adds merge them; otherwise W is the number of
 * global sub-histograms (at most 2^22 / bins). Throws InvalidArgumentError for a non-u32
 * or foreign input, bins not an integer >= 1, or a bad output; LimitExceededError
 * when `bins` exceeds the device's buffer limit; UnsupportedFeatureError ('atomic')
 * on a gather-only device without atomics.
 */
export function histogram(device: Device, values: Buffer<'u32'>, options: HistogramOptions): Buffer<'u32'> {
  checkBuffer(device, values, 'values', ['u32']);
  if (options === null || typeof options !== 'object') throw new InvalidArgumentError('options', 'must be an object with bins');
  checkCount('options.bins', options.bins, 1);
  const bins = options.bins;
  if (bins > device.caps.limits.maxBufferElements) {
    throw new LimitExceededError(device.info.adapter, 'maxBufferElements', bins, device.caps.limits.maxBufferElements, 'histogram bins');
  }
  const out = options.output;
  if (out !== undefined) {
    checkBuffer(device, out, 'options.output', ['u32']);
    if (out.length !== bins) throw new InvalidArgumentError('options.output', `length ${out.length} differs from bins ${bins}`);
    if ((out as Buffer) === values) throw new InvalidArgumentError('options.output', 'must not be the values buffer');
  }
  const formulation = histogramFormulation(device, { bins, length: values.length });
  const output = out ?? device.createBuffer('u32', bins);
  const n = values.length;
  if (n === 0) {
    output.fill(0);
    return output;
  }
  const width: 1 | 4 = n % 4 === 0 ? 4 : 1;
  switch (formulation.name) {
    case 'chunked':
      recordChunkedHistogram(device, values, output, bins);
      return output;
    case 'chunked-atomic':
      recordAtomicChunkHistogram(device, values, output, bins);
      return output;
    case 'shared':
      recordSharedHistogram(device, values, output, bins, formulation.shape as SharedHistogramPlan);
      return output;
    case 'global':
      recordGlobalHistogram(device, values, output, bins, width);
      return output;
    case 'packed':
      recordPackedHistogram(device, values, output, bins);
      return output;
    case 'blended':
      recordBlendedHistogram(device, values, output, bins);
      return output;
  }
}

export type HistogramFormulationName = 'chunked' | 'chunked-atomic' | 'shared' | 'global' | 'packed' | 'blended';

const HISTOGRAM_SUMMARIES: Readonly<Record<HistogramFormulationName, string>> = {
  chunked: 'per-worker chunk sub-histograms + per-bin merge',
  'chunked-atomic': 'per-worker chunks counting into one histogram with global atomics (bins outnumber the values)',
  shared: 'workgroup sub-histograms in shared memory, one global atomic per non-zero bin',
  global: 'per-workgroup sub-histograms in global memory + per-bin merge (bins too many for shared memory)',
  packed: 'packed 8-bit counting in gather passes (no atomics)',
  blended: 'blended atomics, chunked below the exact count',
};

/**
 * The formulation `histogram` runs on `device` for `length` values into `bins` bins
 * (the report asks with 2^24 values and 256 bins). Throws UnsupportedFeatureError
 * ('atomic') where counting would need atomics the device lacks.
 */
export function histogramFormulation(
  device: Device,
  { bins, length = 2 ** 24 }: { readonly bins: number; readonly length?: number },
): Formulation<HistogramFormulationName, SharedHistogramPlan | undefined> {
  const family = chooseFamily(device, 'histogram', { families: ['serial', 'workgroup', 'gather'] });
  const make = (
    name: HistogramFormulationName,
    shape?: SharedHistogramPlan,
  ): Formulation<HistogramFormulationName, SharedHistogramPlan | undefined> => ({
    family,
    name,
    shape,
    summary: HISTOGRAM_SUMMARIES[name],
  });
  const atomics = hasAll(device, 'atomic');
  // Gather devices count few bins by packed counting (no atomics); more bins need atomics.
  if (!atomics && (family !== 'gather' || bins > PACKED_MAX_BINS)) throw unsupported(device, 'atomic', 'histogram');
  if (family === 'serial') {
    // Private sub-histograms per worker chunk; one histogram of atomics when bins outnumber the values.
    if (chunkedHistogramFits(length, bins, chunkPlan(device, Math.max(1, length)).chunks)) return make('chunked');
    if (atomics) return make('chunked-atomic');
  }
  if (family !== 'gather') {
    const width = length % 4 === 0 ? 4 : 1;
    const plan = sharedPlan(device.caps, Math.max(1, length / width), bins);
    return plan ? make('shared', plan) : make('global');
  }
  return make(bins <= PACKED_MAX_BINS ? 'packed' : 'blended');
}

/** Per-workgroup sub-histograms in a global temporary, merged bin by bin (or one histogram of global atomics). */
function recordGlobalHistogram(device: Device, values: Buffer<'u32'>, output: Buffer<'u32'>, bins: number, width: 1 | 4): void {
  const n = values.length;
  const wg = blockSize(device.caps, 0);
  const parts = Math.min(strideWorkgroups(device.caps, n / width, wg, 4), Math.floor(MAX_SUB_ELEMENTS / bins));
  if (parts <= 1) {
    output.fill(0);
    const workgroups = strideWorkgroups(device.caps, n / width, wg, 4);
    dispatchGroups(device, countKernel(width, wg, true, false), workgroups, {
      values,
      hist: output,
      n: n / width,
      offset: 0,
      bins,
      groups: workgroups,
    });
    return;
  }
  const sub = scratch(device, 'histogram.sub', 'u32', parts * bins);
  sub.fill(0, { length: parts * bins });
  dispatchGroups(device, countKernel(width, wg, true, true), parts, { values, hist: sub, n: n / width, offset: 0, bins, groups: parts });
  device.dispatch(mergeKernel(gatherSize(device.caps)), { invocations: bins }, { sub, out: output, bins, parts });
}

/** Blended atomics (gather devices): chunks of at most maxExactAtomicCount elements, summed by gather passes. */
export function recordBlendedHistogram(device: Device, values: Buffer<'u32'>, output: Buffer<'u32'>, bins: number): void {
  const n = values.length;
  const wg = gatherSize(device.caps);
  const chunk = Math.max(1, Math.min(n, device.caps.limits.maxExactAtomicCount));
  const chunks = Math.ceil(n / chunk);
  if (chunks === 1) {
    output.fill(0);
    device.dispatch(countKernel(1, wg, false, false), { invocations: n }, { values, hist: output, n, offset: 0, bins, groups: 0 });
    return;
  }
  const part = scratch(device, 'histogram.part', 'u32', bins);
  let total: Buffer<'u32'> | undefined;
  for (let c = 0; c < chunks; c++) {
    const offset = c * chunk;
    const m = Math.min(chunk, n - offset);
    const target = c === 0 ? scratch(device, 'histogram.acc0', 'u32', bins) : part;
    target.fill(0, { length: bins });
    device.dispatch(countKernel(1, wg, false, false), { invocations: m }, { values, hist: target, n: m, offset, bins, groups: 0 });
    if (c === 0) {
      total = target;
      continue;
    }
    const dst = c === chunks - 1 ? output : scratch(device, `histogram.acc${c % 2}`, 'u32', bins);
    device.dispatch(addKernel(wg), { invocations: bins }, { a: total as Buffer<'u32'>, c: part, dst, bins });
    total = dst;
  }
}
