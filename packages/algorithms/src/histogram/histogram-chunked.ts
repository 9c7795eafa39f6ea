/**
 * Histogram for devices with 'serial-workgroups' (a CPU's few, fat, serial
 * workgroups): the input split into one contiguous chunk per worker (reduce's
 * chunk plan). Two dispatches: each chunk counts its values into a sub-histogram of
 * its own in one sequential loop, plain loads and stores, no atomics, and leaves it
 * in its slice of a scratch buffer; then one invocation per bin adds that bin's
 * counts over the chunks in chunk order. The sub-histogram is a workgroup array
 * where `bins` counters fit workgroup memory (on a CPU a typed array private to the
 * worker, which keeps the counters out of the shared scratch's cache lines: LEDGER.md
 * histogram.privateCounters), else the scratch slice itself. One read of the input; O(n + bins ·
 * chunks) work.
 *
 * Past `CHUNKED_HISTOGRAM.maxBinsPerElement` bins per input element the zeroing
 * and merging of chunks × bins counters would outweigh the counting, so the caller
 * counts into the one output histogram instead (global atomics, variant A).
 */
import { type Buffer, buffer, type Device, defineKernel, min, uniform } from '@trident/core';
import { cachedKernel, gatherSize, hasAll, scratch } from '../common.ts';
import { chunkPlan } from '../reduce/reduce.ts';
import * as TUNING from './tuning.ts';

/** When the per-chunk shape runs (see tuning.ts). */
export const CHUNKED_HISTOGRAM = TUNING.CHUNKED_HISTOGRAM.value;

/**
 * Whether the chunked formulation should count `n` values into `bins` bins over
 * `chunks` chunks (see CHUNKED_HISTOGRAM).
 */
export function chunkedHistogramFits(n: number, bins: number, chunks: number): boolean {
  const counters = bins * chunks;
  return counters <= CHUNKED_HISTOGRAM.maxSubElements && counters <= n * CHUNKED_HISTOGRAM.maxBinsPerElement;
}

/**
 * Where a chunk counts: 'workgroup', in a workgroup array of `bins` counters (on a
 * CPU a plain typed array of the worker's own, the fastest; `bins` is then a
 * compile-time constant), copied to the chunk's slice of the scratch at the end;
 * 'scratch', in that slice directly (any bins).
 */
export type ChunkCounters = 'workgroup' | 'scratch';

/** The counters a device counts `bins` bins in: workgroup memory where they fit it. */
export function chunkCounters(device: Device, bins: number): ChunkCounters {
  return hasAll(device, 'workgroup') && bins * 4 <= device.caps.limits.maxComputeWorkgroupStorageSize ? 'workgroup' : 'scratch';
}

/** sub[c * bins + v] = how many values of chunk c equal v, for v < bins: counted in a workgroup array (one invocation per chunk). */
function workgroupCountKernel(bins: number) {
  return cachedKernel(`hist-chunk:count-wg:${bins}`, () =>
    defineKernel({
      name: 'histogram_chunk_count_workgroup',
      workgroupSize: 1,
      params: { values: buffer('u32', 'read'), sub: buffer('u32', 'write'), n: uniform('u32'), chunk: uniform('u32') },
      body: ({ values, sub, n, chunk }, k) => {
        const c = k.let(k.globalIndex, 'c');
        const counts = k.workgroupArray('u32', bins);
        const start = k.let(c.mul(chunk), 'start');
        k.for({ from: start, to: min(n, start.add(chunk)) }, (i) => {
          const v = k.let(values.load(i), 'v');
          k.if(v.lt(bins), () => counts.store(v, counts.load(v).add(1)));
        });
        const base = k.let(c.mul(bins), 'base');
        k.for({ from: 0, to: bins }, (b) => sub.store(base.add(b), counts.load(b)));
      },
    }),
  );
}

/** sub[c * bins + v] = how many values of chunk c equal v, for v < bins: counted in place (one invocation per chunk). */
function scratchCountKernel() {
  return cachedKernel('hist-chunk:count', () =>
    defineKernel({
      name: 'histogram_chunk_count',
      workgroupSize: 1,
      params: {
        values: buffer('u32', 'read'),
        sub: buffer('u32', 'read_write'),
        n: uniform('u32'),
        chunk: uniform('u32'),
        bins: uniform('u32'),
      },
      body: ({ values, sub, n, chunk, bins }, k) => {
        const c = k.let(k.globalIndex, 'c');
        const base = k.let(c.mul(bins), 'base');
        k.for({ from: base, to: base.add(bins) }, (b) => sub.store(b, 0));
        const start = k.let(c.mul(chunk), 'start');
        k.for({ from: start, to: min(n, start.add(chunk)) }, (i) => {
          const v = k.let(values.load(i), 'v');
          // v < bins first: base + v could wrap into another chunk's slice.
          k.if(v.lt(bins), () => {
            const slot = k.let(base.add(v), 'slot');
            sub.store(slot, sub.load(slot).add(1));
          });
        });
      },
    }),
  );
}

/** out[b] = Σ_c sub[c * bins + b] over c < chunks, in chunk order (one invocation per bin). */
function mergeKernel(wg: number) {
  return cachedKernel(`hist-chunk:merge:${wg}`, () =>
    defineKernel({
      name: 'histogram_chunk_merge',
      workgroupSize: wg,
      params: { sub: buffer('u32', 'read'), out: buffer('u32', 'write'), bins: uniform('u32'), chunks: uniform('u32') },
      body: ({ sub, out, bins, chunks }, k) => {
        const b = k.let(k.globalIndex, 'b');
        k.if(b.lt(bins), () => {
          const sum = k.var('u32', 0, 'sum');
          k.for({ from: 0, to: chunks }, (c) => sum.set(sum.add(sub.load(c.mul(bins).add(b)))));
          out.store(b, sum);
        });
      },
    }),
  );
}

/** out[v] += 1 for each value v < bins of chunk c, by atomic adds (one invocation per chunk; out holds zeros). */
function atomicKernel() {
  return cachedKernel('hist-chunk:atomic', () =>
    defineKernel({
      name: 'histogram_chunk_atomic',
      workgroupSize: 1,
      params: {
        values: buffer('u32', 'read'),
        out: buffer('u32', 'atomic'),
        n: uniform('u32'),
        chunk: uniform('u32'),
        bins: uniform('u32'),
      },
      body: ({ values, out, n, chunk, bins }, k) => {
        const start = k.let(k.globalIndex.mul(chunk), 'start');
        k.for({ from: start, to: min(n, start.add(chunk)) }, (i) => {
          const v = k.let(values.load(i), 'v');
          k.if(v.lt(bins), () => void out.atomicAdd(v, 1));
        });
      },
    }),
  );
}

/**
 * Records one histogram of global atomics over the chunks (many bins, few values):
 * zeroes `output`, then each chunk adds its values' counts into it.
 */
export function recordAtomicChunkHistogram(
  device: Device,
  values: Buffer<'u32'>,
  output: Buffer<'u32'>,
  bins: number,
  chunks?: number,
): void {
  const n = values.length;
  const plan = chunks === undefined ? chunkPlan(device, n) : { chunks, chunk: Math.ceil(n / chunks) };
  output.fill(0);
  device.dispatch(atomicKernel(), { invocations: plan.chunks }, { values, out: output, n, chunk: plan.chunk, bins });
}

/**
 * Records the chunked histogram of `values` (n >= 1) into `output` (`bins`
 * counters; overwritten, need not hold zeros). `chunks` defaults to reduce's chunk
 * plan and `counters` to `chunkCounters`; tests pass others to pin chunk
 * boundaries and both counting shapes. Exported for the tests; `histogram` is the
 * public entry.
 */
export function recordChunkedHistogram(
  device: Device,
  values: Buffer<'u32'>,
  output: Buffer<'u32'>,
  bins: number,
  chunks?: number,
  counters: ChunkCounters = chunkCounters(device, bins),
): void {
  const n = values.length;
  const plan = chunks === undefined ? chunkPlan(device, n) : { chunks, chunk: Math.ceil(n / chunks) };
  const sub = scratch(device, 'histogram.chunks', 'u32', plan.chunks * bins);
  if (counters === 'workgroup') {
    device.dispatch(workgroupCountKernel(bins), { invocations: plan.chunks }, { values, sub, n, chunk: plan.chunk });
  } else {
    device.dispatch(scratchCountKernel(), { invocations: plan.chunks }, { values, sub, n, chunk: plan.chunk, bins });
  }
  device.dispatch(mergeKernel(gatherSize(device.caps)), { invocations: bins }, { sub, out: output, bins, chunks: plan.chunks });
}
