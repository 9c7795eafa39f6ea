/**
 * Histogram by packed counting, for gather-only devices (WebGL2 fragment passes)
 * and few bins: no points, no blending, every kernel writes only its own element.
 *
 * The input is cut into chunks of CHUNK = 255 elements, so one chunk's count of a
 * bin fits 8 bits. Invocation f = (chunk c, group g) reads chunk c once and counts
 * the 4·W bins of group g (bins 4·W·g …) into W words of four 8-bit counters, one
 * word per output buffer (W = 8 outputs where a kernel may bind 9 buffers, else 4;
 * WebGL2 writes them with MRT). A merge pass then sums, for every bin and every
 * run of SUPER chunks, the bin's byte over those chunks, and a last pass sums the
 * runs. Reads: n · ceil(bins / 4W) in the counting pass (each element once per
 * group) plus about n · bins / CHUNK in the merge — cheaper than a point per
 * element while bins are few (PACKED_MAX_BINS). Measured in headless Chromium on
 * SwiftShader WebGL2 (2^20 values, GPU timer, best of 5, two rounds in one page):
 * 32 bins 52 / 60 ms, 64 bins 101 / 109, 128 bins 132 / 411, 256 bins 208 / 288,
 * and 257 bins (blended points) 468 / 424; the cost grows with the groups, each a
 * full read of the input plus W compare-select-adds per element.
 */
import {
  type Buffer,
  buffer,
  type Device,
  defineKernel,
  type KernelBuilder,
  select,
  u32,
  uniform,
  type Val,
  type Var,
} from '@trident/core';
import { cachedKernel, gatherSize, scratch } from './common.ts';

/** Elements per chunk: a chunk's count of one bin fits an 8-bit counter. */
const CHUNK = 255;
/** Chunks summed by one merge invocation. */
const SUPER = 64;
/** Largest bin count for which packed counting is used (its reads grow with bins). */
export const PACKED_MAX_BINS = 256;

/** Output words per counting invocation: 8 where a kernel may bind 9 buffers, else 4. */
export function packedOutputs(device: Device): 4 | 8 {
  return device.caps.limits.maxBuffersPerKernel >= 9 ? 8 : 4;
}

const wordNames = (w: number) => Array.from({ length: w }, (_, o) => `w${o}`);

/** w_o[c·G + g] = bytes q of the counts of bins 4·W·g + 4·o + q in chunk c. */
function countKernel(w: 4 | 8, wg: number) {
  return cachedKernel(`hist-packed-count:${w}:${wg}`, () =>
    defineKernel({
      name: `histogram_packed_count_w${w}`,
      workgroupSize: wg,
      params: {
        values: buffer('u32', 'read'),
        ...Object.fromEntries(wordNames(w).map((name) => [name, buffer('u32', 'write')])),
        n: uniform('u32'),
        groups: uniform('u32'),
        work: uniform('u32'),
      },
      body: (p, k) => {
        const { values, n, groups, work } = p as unknown as {
          values: { load(i: Val<'u32'>): Val<'u32'> };
          n: Val<'u32'>;
          groups: Val<'u32'>;
          work: Val<'u32'>;
        };
        const outs = wordNames(w).map(
          (name) =>
            (p as unknown as Record<string, { store(i: Val<'u32'>, v: Val<'u32'>): void }>)[name] as {
              store(i: Val<'u32'>, v: Val<'u32'>): void;
            },
        );
        const f = k.let(k.globalIndex, 'f');
        k.if(f.lt(work), () => {
          const c = k.let(f.div(groups), 'c');
          const base = k.let(f.sub(c.mul(groups)).mul(4 * w), 'base');
          const start = k.let(c.mul(CHUNK), 'start');
          const end = k.let(select(start.add(CHUNK).lt(n), start.add(CHUNK), n), 'end');
          const acc: Array<Var<'u32'>> = outs.map((_, o) => k.var('u32', 0, `acc${o}`));
          // A constant trip count (the same loop in every fragment; past the end, j < end masks
          // the count): measured faster than a loop bounded by the chunk's end.
          k.for({ from: 0, to: CHUNK }, (jj) => {
            const j = k.let(start.add(jj), 'j');
            // Values below base wrap to large d and count nowhere, as do values past this group.
            const d = k.let(values.load(j).sub(base), 'd');
            const inc = k.let(select(d.lt(4 * w).and(j.lt(end)), u32shl(d), 0), 'inc');
            const word = k.let(d.shr(2), 'word');
            for (const [o, a] of acc.entries()) a.set(a.add(select(word.eq(o), inc, 0)));
          });
          for (const [o, out] of outs.entries()) out.store(f, acc[o] as Var<'u32'>);
        });
      },
    }),
  );
}

/** 1 << (8 · (d & 3)): one count in byte d & 3. */
function u32shl(d: Val<'u32'>): Val<'u32'> {
  return u32(1).shl(d.and(3).mul(8));
}

/** Loads word o of the counts (o dynamic): only the buffer it names is read. */
function loadWord(k: KernelBuilder, words: Array<{ load(i: Val<'u32'>): Val<'u32'> }>, o: Val<'u32'>, at: Val<'u32'>): Var<'u32'> {
  const v = k.var('u32', 0, 'word');
  for (const [idx, b] of words.entries()) k.if(o.eq(idx), () => v.set(b.load(at)));
  return v;
}

/** partial[s·bins + b] = Σ over chunks c of run s of bin b's byte (out[b] directly when there is one run). */
function mergeKernel(w: 4 | 8, wg: number) {
  return cachedKernel(`hist-packed-merge:${w}:${wg}`, () =>
    defineKernel({
      name: `histogram_packed_merge_w${w}`,
      workgroupSize: wg,
      params: {
        ...Object.fromEntries(wordNames(w).map((name) => [name, buffer('u32', 'read')])),
        partial: buffer('u32', 'write'),
        bins: uniform('u32'),
        groups: uniform('u32'),
        chunks: uniform('u32'),
        work: uniform('u32'),
      },
      body: (p, k) => {
        const { partial, bins, groups, chunks, work } = p as unknown as {
          partial: { store(i: Val<'u32'>, v: Val<'u32'>): void };
          bins: Val<'u32'>;
          groups: Val<'u32'>;
          chunks: Val<'u32'>;
          work: Val<'u32'>;
        };
        const words = wordNames(w).map((name) => (p as unknown as Record<string, { load(i: Val<'u32'>): Val<'u32'> }>)[name]) as Array<{
          load(i: Val<'u32'>): Val<'u32'>;
        }>;
        const e = k.let(k.globalIndex, 'e');
        k.if(e.lt(work), () => {
          const s = k.let(e.div(bins), 's');
          const b = k.let(e.sub(s.mul(bins)), 'b');
          const g = k.let(b.div(4 * w), 'g');
          const o = k.let(b.shr(2).and(w - 1), 'o');
          const shift = k.let(b.and(3).mul(8), 'shift');
          const first = k.let(s.mul(SUPER), 'first');
          const last = k.let(select(first.add(SUPER).lt(chunks), first.add(SUPER), chunks), 'last');
          const sum = k.var('u32', 0, 'sum');
          k.for({ from: first, to: last }, (c) => {
            const word = loadWord(k, words, o, c.mul(groups).add(g));
            sum.set(sum.add(word.shr(shift).and(255)));
          });
          partial.store(e, sum);
        });
      },
    }),
  );
}

/** out[b] = Σ_s partial[s·bins + b]. */
function sumRunsKernel(wg: number) {
  return cachedKernel(`hist-packed-runs:${wg}`, () =>
    defineKernel({
      name: 'histogram_packed_sum_runs',
      workgroupSize: wg,
      params: { partial: buffer('u32', 'read'), out: buffer('u32', 'write'), bins: uniform('u32'), runs: uniform('u32') },
      body: ({ partial, out, bins, runs }, k) => {
        const b = k.let(k.globalIndex, 'b');
        k.if(b.lt(bins), () => {
          const sum = k.var('u32', 0, 'sum');
          k.for({ from: 0, to: runs }, (s) => sum.set(sum.add(partial.load(s.mul(bins).add(b)))));
          out.store(b, sum);
        });
      },
    }),
  );
}

/** Records the packed histogram of `values` (n > 0) into `out` (bins counters, bins <= PACKED_MAX_BINS). */
export function recordPackedHistogram(device: Device, values: Buffer<'u32'>, out: Buffer<'u32'>, bins: number): void {
  const n = values.length;
  const w = packedOutputs(device);
  const wg = gatherSize(device.caps);
  const groups = Math.ceil(bins / (4 * w));
  const chunks = Math.ceil(n / CHUNK);
  const work = chunks * groups;
  const words = wordNames(w).map((name) => [name, scratch(device, `histogram.packed.${name}`, 'u32', work)] as const);
  device.dispatch(countKernel(w, wg), { invocations: work }, { values, ...Object.fromEntries(words), n, groups, work } as never);
  const runs = Math.ceil(chunks / SUPER);
  const partial = runs === 1 ? out : scratch(device, 'histogram.packed.partial', 'u32', runs * bins);
  device.dispatch(mergeKernel(w, wg), { invocations: runs * bins }, {
    ...Object.fromEntries(words),
    partial,
    bins,
    groups,
    chunks,
    work: runs * bins,
  } as never);
  if (runs > 1) device.dispatch(sumRunsKernel(wg), { invocations: bins }, { partial, out, bins, runs });
}
